import Foundation
import TestSupport
import Testing

/// Recognisable fake secrets in every credential slot: none may reach stdout,
/// stderr (`-v`, tracebacks), `repr()` of any apimacro object, `auth status`,
/// or a host other than the client's own.
@Suite("secrets never leak", .serialized)
struct SecurityTests {
    static let secrets = [
        "APIMACRO_GITHUB_TOKEN": "ghp_SECRETgithub000111222",
        "APIMACRO_INSTAGRAM_TOKEN": "ig-token-SECRETinstagram333",
        "APIMACRO_SHORTENER_KEY": "AIza-test-key",
    ]

    @Test("secrets stay out of -v, tracebacks, repr() and auth status, and away from other hosts")
    func noLeaks() async throws {
        let server = try await TestServer.start()
        let base = String(reflecting: server.baseURL)
        let space = try Workspace(files: [
            "probe.py": """
            import apimacro
            from apimacro import github, instagram, shortener
            objects = [github, instagram, shortener, apimacro.get(\(base) + '/text'), github.repos('octocat'),
                       instagram.followed_by(limit=1)]
            list(instagram.followed_by(limit=30))
            list(github.paginate('/cross-host/items'))
            shortener.expand('https://goo.gl/fbsS')
            errors = []
            for call in (lambda: github.user('nobody-here'), lambda: instagram.get('/users/999999'),
                         lambda: shortener.expand('https://goo.gl/unknownX'), lambda: apimacro.get('http://example.invalid/', auth=('u', 'pw-SECRET-basic'))):
                try:
                    call()
                except apimacro.APIError as e:
                    errors.append(e)
            for thing in objects + errors:
                print(repr(thing))
                print(str(thing))
            for e in errors:
                print(e.url, e.body)
            raise errors[0]
            """
        ])
        defer { space.remove() }
        var environment = Self.secrets
        environment["APIMACRO_GITHUB_URL"] = server.baseURL
        environment["APIMACRO_INSTAGRAM_URL"] = server.baseURL + "/instagram/v1"
        environment["APIMACRO_SHORTENER_URL"] = server.baseURL + "/urlshortener/v1"
        let result = try await space.run("run", "-v", "probe.py", environment: environment)
        let status = try await space.run("auth", "status", environment: environment)
        try await server.shutdown()

        #expect(result.status == 1)
        #expect(result.stderr.contains("apimacro.NotFound"), "\(result.stderr)")
        #expect(result.stderr.contains("access_token=REDACTED"))
        #expect(
            status.stdout.range(
                of: #"(?m)^github +credentials from env APIMACRO_GITHUB_TOKEN$"#, options: .regularExpression) != nil,
            "\(status.stdout)")
        for secret in Array(Self.secrets.values) + ["pw-SECRET-basic"] {
            #expect(!result.stdout.contains(secret), "stdout holds \(secret)")
            #expect(!result.stderr.contains(secret), "stderr holds \(secret)")
            #expect(!status.stdout.contains(secret) && !status.stderr.contains(secret))
        }
        // The credentials went where they belong, and only there.
        let requests = server.requests
        #expect(requests.contains { $0.header("authorization") == "Bearer ghp_SECRETgithub000111222" })
        #expect(
            requests.filter { $0.listener == TestServer.otherHost }.allSatisfy { $0.header("authorization") == nil })
        #expect(requests.filter { !$0.path.hasPrefix("/instagram/") }.allSatisfy { $0.query["access_token"] == nil })
        #expect(requests.filter { !$0.path.hasPrefix("/urlshortener/") }.allSatisfy { $0.query["key"] == nil })
        #expect(
            requests.filter { $0.path.hasPrefix("/instagram/") || $0.path.hasPrefix("/urlshortener/") }
                .allSatisfy { $0.header("authorization") == nil })
    }
}
