import Foundation
import TestSupport
import Testing

/// The hostile-server defences through the binary: what a macro sees, and what apimacro
/// prints and records.
@Suite("a hostile server, through the binary", .serialized)
struct HostileEndToEndTests {
    static let password = "Sup3rS3cretPw"
    /// base64 of `alice:Sup3rS3cretPw`, as the `Authorization: Basic` header carries it.
    static let basic = "YWxpY2U6U3VwM3JTM2NyZXRQdw=="

    /// What the macro itself prints of a body is its own business (SECURITY.md); what apimacro
    /// prints or records (exception bodies, tracebacks, -v, HAR) is redacted.
    @Test(
        "auth=(user, password): neither the password nor its base64 reaches stdout, stderr (-v, traceback) or the HAR")
    func basicCredentialsNeverPrinted() async throws {
        let server = try await TestServer.start()
        let base = String(reflecting: server.baseURL)
        let space = try Workspace(files: [
            "basic.py": """
            import apimacro
            auth = ('alice', '\(Self.password)')
            r = apimacro.request('GET', \(base) + '/echo/basic', auth=auth)
            assert r.json()['headers']['authorization'].startswith('Basic ')
            print(r.status, r.url)
            try:
                apimacro.request('GET', \(base) + '/hostile/echo-status/401', auth=auth)
            except apimacro.APIError as e:
                print(repr(e))
                print(e.body)
            apimacro.request('GET', \(base) + '/hostile/echo-status/404', auth=auth)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "-v", "--record", "basic.har", "basic.py")
        let requests = server.requests
        try await server.shutdown()
        let har = try String(contentsOf: space.url.appendingPathComponent("basic.har"), encoding: .utf8)
        // Negative control: the server did get the credential, and echoed it into the bodies
        // (the HAR holds the /echo body; the exception's body the 401's).
        #expect(requests.filter { $0.header("authorization") == "Basic \(Self.basic)" }.count == 3)
        #expect(result.stdout.contains("Basic REDACTED"), "\(result.stdout)")
        #expect(har.contains("Basic REDACTED"), "\(har)")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("apimacro.NotFound"), "\(result.stderr)")
        for secret in [Self.password, Self.basic, String(Self.basic.dropLast(2))] {
            #expect(!result.stdout.contains(secret), "stdout holds \(secret)")
            #expect(!result.stderr.contains(secret), "stderr holds \(secret)")
            #expect(!har.contains(secret), "the HAR holds \(secret)")
        }
    }

    @Test("repr(github), -v and errors never show a password in APIMACRO_GITHUB_URL")
    func urlPasswordNeverPrinted() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "repr.py": """
            from apimacro import github
            print(repr(github))
            github.user('nobody-here')
            """
        ])
        defer { space.remove() }
        let url = server.baseURL.replacingOccurrences(of: "http://", with: "http://someone:UrlPassw0rdSecret@")
        let result = try await space.run("run", "-v", "repr.py", environment: ["APIMACRO_GITHUB_URL": url])
        try await server.shutdown()
        #expect(result.stdout.contains("<apimacro.github http://REDACTED@127.0.0.1"), "\(result.stdout)")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(!result.stdout.contains("UrlPassw0rdSecret"))
        #expect(!result.stderr.contains("UrlPassw0rdSecret"), "\(result.stderr)")
    }

    @Test("github.user('..') asks for /users/%2E%2E, not the dot segment /users/..")
    func dotDotLogin() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "dots.py": """
            from apimacro import github
            import apimacro
            for login in ('..', '.'):
                try:
                    github.user(login)
                except apimacro.APIError as e:
                    print(type(e).__name__)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "dots.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        let uris = server.requests.map(\.uri)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(uris.contains("/users/%2E%2E"), "\(uris)")
        #expect(uris.contains("/users/%2E"), "\(uris)")
        #expect(
            !uris.contains { $0.hasPrefix("/users/..") || $0 == "/users/." || $0 == "/users/" || $0 == "/" }, "\(uris)")
    }

    @Test("apimacro.get(url, timeout=1) on a stalled body raises Timeout after one attempt", .timeLimit(.minutes(10)))
    func stalledBodyTimeout() async throws {
        let server = try await TestServer.start()
        let base = String(reflecting: server.baseURL)
        let space = try Workspace(files: [
            "stall.py": """
            import apimacro
            for path in ('/hostile/stall', '/hostile/trickle?interval_ms=200'):
                try:
                    apimacro.get(\(base) + path, timeout=1)
                except apimacro.Timeout as e:
                    print('Timeout', e.url)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "stall.py")
        let stalls = server.requests.filter { $0.path == "/hostile/stall" }.count
        let trickles = server.requests.filter { $0.path == "/hostile/trickle" }.count
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "Timeout ").count == 3, "\(result.stdout)")
        #expect(stalls == 1 && trickles == 1)
    }

    @Test("a POST answered 307 to http+unix:// and a github.get answered 302 reach no Unix socket")
    func redirectToUnixSocket() async throws {
        let trap = try UnixSocketTrap()
        defer { trap.remove() }
        let server = try await TestServer.start()
        let base = String(reflecting: server.baseURL)
        let space = try Workspace(files: [
            "docker.py": """
            import apimacro
            from apimacro import github
            calls = (lambda: apimacro.request('POST', \(base) + '/hostile/redirect/unix?socket=\(trap.queryValue)', json={'Image': 'alpine'}),
                     lambda: github.get('/hostile/redirect/unix?socket=\(trap.queryValue)&status=302'))
            for call in calls:
                try:
                    call()
                except apimacro.NetworkError as e:
                    print('NetworkError', e)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "docker.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.components(separatedBy: "NetworkError refused to follow the redirect to http+unix://").count
                == 3, "\(result.stdout)")
        #expect(trap.connections() == 0, "a request reached the Unix socket")
    }
}
