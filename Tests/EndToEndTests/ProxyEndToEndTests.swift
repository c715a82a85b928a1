import Foundation
import TestSupport
import Testing

/// The binary through a forward proxy to the TLS test server, trusting a CA the test made
/// (issue 16, item 4): GitHub REST, GraphQL and a plugin; what the proxy sees; proxy
/// credentials; NO_PROXY; a missing CA; an unreachable proxy.
@Suite("proxies and CA bundles through the binary", .serialized)
struct ProxyEndToEndTests {
    static let token = "ghp_proxyE2EToken0123456789"
    static let weatherKey = "ow-test-key"

    /// GitHub REST, GitHub GraphQL and the openweather plugin, one line each.
    static let macro = """
        import apimacro
        from apimacro import github
        print(github.user('octocat')['login'])
        data = github.graphql('query { repository(owner: "octokit-fixture-org", name: "paginate-issues") '
                              '{ issues(first: 2) { nodes { number } pageInfo { hasNextPage endCursor } } } }')
        print(len(data['repository']['issues']['nodes']))
        weather = apimacro.client('openweather')
        print(len(list(weather.find(q='Altstadt', type='like', cnt=5, units='metric'))))
        """

    /// The clients pointed at `server`, with their credentials.
    static func environment(_ server: TestServer, _ extra: [String: String]) -> [String: String] {
        [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token,
            "APIMACRO_OPENWEATHER_URL": server.baseURL + "/openweather/data/2.5",
            "APIMACRO_OPENWEATHER_KEY": weatherKey,
        ].merging(extra) { $1 }
    }

    /// A TLS test server with a fresh CA and a workspace holding `fetch.py`, for `body`.
    static func withTLS(
        macro: String = ProxyEndToEndTests.macro,
        _ body: (TestServer, TestCertificateAuthority, Workspace) async throws -> Void
    ) async throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let server = try await TestServer.start(tls: try authority.serverContext())
        let space = try Workspace(files: ["fetch.py": macro])
        defer { space.remove() }
        do {
            try await body(server, authority, space)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    @Test(
        "REST, GraphQL and a plugin through a CONNECT proxy to TLS (APIMACRO_CA_BUNDLE): the proxy sees no token, key or path"
    )
    func throughRecordingProxy() async throws {
        try await Self.withTLS { server, authority, space in
            let proxy = try await RecordingProxy.start()
            defer { Task { try? await proxy.shutdown() } }
            let result = try await space.run(
                "run", "--no-cache", "fetch.py",
                environment: Self.environment(
                    server, ["HTTPS_PROXY": proxy.url, "APIMACRO_CA_BUNDLE": authority.caFile.path]))
            try await proxy.shutdown()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "octocat\n2\n3\n", "\(result.stderr)")
            // Every connection was a tunnel to the server; nothing but CONNECT heads in clear.
            #expect(!proxy.requests.isEmpty)
            for request in proxy.requests {
                #expect(request.method == "CONNECT")
                #expect(request.target == "127.0.0.1:\(server.port)")
                #expect(request.header("authorization") == nil)
                #expect(request.header("proxy-authorization") == nil)
            }
            let seen = proxy.receivedText
            for secret in [Self.token, Self.weatherKey, "/users/octocat", "graphql", "appid", "Bearer"] {
                #expect(!seen.contains(secret), "the proxy saw \(secret)")
            }
            // The server got the requests, with their credentials, over TLS.
            let paths = server.requests.map(\.path)
            #expect(paths.contains("/users/octocat") && paths.contains("/graphql"), "\(paths)")
            #expect(paths.contains { $0.hasPrefix("/openweather/") }, "\(paths)")
            #expect(
                server.requests.first { $0.path == "/users/octocat" }?.header("authorization") == "Bearer \(Self.token)"
            )
            #expect(server.requests.first { $0.path == "/graphql" }?.header("authorization") == "Bearer \(Self.token)")
        }
    }

    @Test("through tinyproxy (a real forward proxy, BasicAuth) with the CA in SSL_CERT_FILE")
    func throughTinyproxy() async throws {
        try await Self.withTLS { server, authority, space in
            let proxy = try await Tinyproxy.start(connectPorts: [server.port], credentials: ("bob", "tiny-Pa55"))
            defer { Task { try? await proxy.stop() } }
            let result = try await space.run(
                "run", "--no-cache", "-v", "fetch.py",
                environment: Self.environment(
                    server,
                    [
                        "https_proxy": "http://bob:tiny-Pa55@127.0.0.1:\(proxy.port)",
                        "SSL_CERT_FILE": authority.caFile.path,
                    ]))
            let log = proxy.log
            try await proxy.stop()
            #expect(result.status == 0, "\(result.stderr)\n\(log)")
            #expect(result.stdout == "octocat\n2\n3\n")
            #expect(log.contains("CONNECT 127.0.0.1:\(server.port)"), "\(log)")
            #expect(!log.contains(Self.token))
            #expect(!result.stderr.contains("tiny-Pa55"))
            #expect(server.requests.contains { $0.path == "/graphql" })
        }
    }

    @Test("a proxy password goes as Proxy-Authorization to the proxy only, and is redacted in -v, tracebacks and HAR")
    func proxyCredentials() async throws {
        let password = "pr0xy-S3cret"
        let macro = """
            import os
            from apimacro import github
            print(github.user('octocat')['login'])
            raise RuntimeError('proxy is ' + os.environ['HTTPS_PROXY'])
            """
        try await Self.withTLS(macro: macro) { server, authority, space in
            let proxy = try await RecordingProxy.start(credentials: ("alice", password))
            defer { Task { try? await proxy.shutdown() } }
            let proxyURL = "http://alice:\(password)@127.0.0.1:\(proxy.port)"
            let result = try await space.run(
                "run", "--no-cache", "-v", "--record", "out.har", "fetch.py",
                environment: Self.environment(
                    server, ["HTTPS_PROXY": proxyURL, "APIMACRO_CA_BUNDLE": authority.caFile.path]))
            try await proxy.shutdown()
            #expect(result.status == 1)
            #expect(result.stdout == "octocat\n", "\(result.stderr)")
            let basic = Data("alice:\(password)".utf8).base64EncodedString()
            #expect(proxy.requests.first?.header("proxy-authorization") == "Basic \(basic)")
            // The traceback names the proxy with the password redacted; -v has its line.
            #expect(
                result.stderr.contains("RuntimeError: proxy is http://REDACTED@127.0.0.1:\(proxy.port)"),
                "\(result.stderr)")
            #expect(result.stderr.contains("apimacro: GET \(server.baseURL)/users/octocat 200 "), "\(result.stderr)")
            let har = try String(contentsOf: space.url.appendingPathComponent("out.har"), encoding: .utf8)
            for leak in [password, basic, Self.token] {
                #expect(!result.stderr.contains(leak))
                #expect(!result.stdout.contains(leak))
                #expect(!har.contains(leak))
            }
            // The server never sees the proxy's credentials.
            #expect(server.requests.allSatisfy { $0.header("proxy-authorization") == nil })
        }
    }

    @Test("batch: a macro that prints or raises the proxy URL leaves no password in the output or the JUnit report")
    func batchReports() async throws {
        let password = "b4tch-Proxy-pw"
        let macro = """
            import os
            from apimacro import github
            print(github.user('octocat')['login'], os.environ['HTTPS_PROXY'])
            raise RuntimeError(os.environ['HTTPS_PROXY'])
            """
        try await Self.withTLS(macro: macro) { server, authority, space in
            let proxy = try await RecordingProxy.start(credentials: ("frank", password))
            defer { Task { try? await proxy.shutdown() } }
            let result = try await Binary.run(
                ["batch", "-j", "1", "--no-cache", "--junit", "report.xml", "fetch.py"], in: space.url,
                environment: Self.environment(
                    server,
                    [
                        "HTTPS_PROXY": "http://frank:\(password)@127.0.0.1:\(proxy.port)",
                        "APIMACRO_CA_BUNDLE": authority.caFile.path,
                    ]))
            try await proxy.shutdown()
            #expect(result.status == 1)
            #expect(
                result.stdout.contains("octocat http://REDACTED@127.0.0.1:\(proxy.port)"),
                "\(result.stdout)\n\(result.stderr)")
            let report = try String(contentsOf: space.url.appendingPathComponent("report.xml"), encoding: .utf8)
            #expect(report.contains("RuntimeError"), "\(report)")
            let basic = Data("frank:\(password)".utf8).base64EncodedString()
            for leak in [password, basic] {
                #expect(!result.stdout.contains(leak))
                #expect(!result.stderr.contains(leak))
                #expect(!report.contains(leak))
            }
        }
    }

    @Test("NO_PROXY bypasses the proxy for the hosts it names")
    func noProxy() async throws {
        try await Self.withTLS(macro: "from apimacro import github\nprint(github.user('octocat')['login'])\n") {
            server, authority, space in
            let proxy = try await RecordingProxy.start()
            defer { Task { try? await proxy.shutdown() } }
            let base = ["HTTPS_PROXY": proxy.url, "APIMACRO_CA_BUNDLE": authority.caFile.path]
            let direct = try await space.run(
                "run", "--no-cache", "fetch.py",
                environment: Self.environment(server, base.merging(["NO_PROXY": "localhost,127.0.0.1"]) { $1 }))
            #expect(direct.status == 0, "\(direct.stderr)")
            #expect(direct.stdout == "octocat\n")
            #expect(proxy.received.isEmpty)
            #expect(server.requests.count == 1)
            // Another host in NO_PROXY leaves this one proxied.
            let proxied = try await space.run(
                "run", "--no-cache", "fetch.py",
                environment: Self.environment(server, base.merging(["no_proxy": "example.com"]) { $1 }))
            try await proxy.shutdown()
            #expect(proxied.status == 0, "\(proxied.stderr)")
            #expect(proxy.requests.map(\.method) == ["CONNECT"])
        }
    }

    @Test("without the CA: one clear certificate error naming what to set, not retried, exit 1 as for network errors")
    func missingCA() async throws {
        try await Self.withTLS(macro: "from apimacro import github\ngithub.user('octocat')\n") { server, _, space in
            let proxy = try await RecordingProxy.start()
            defer { Task { try? await proxy.shutdown() } }
            let result = try await space.run(
                "run", "--no-cache", "fetch.py", environment: Self.environment(server, ["HTTPS_PROXY": proxy.url]))
            try await proxy.shutdown()
            #expect(result.status == 1)
            #expect(
                result.stderr.contains("apimacro.NetworkError: GET \(server.baseURL)/users/octocat: no response ("),
                "\(result.stderr)")
            #expect(result.stderr.contains("certificate"))
            #expect(result.stderr.contains("set APIMACRO_CA_BUNDLE (or SSL_CERT_FILE) to its PEM file"))
            #expect(result.stderr.contains("through the proxy \(proxy.url)"))
            // One tunnel, one handshake: a certificate that fails once fails every time.
            #expect(proxy.requests.count == 1, "\(proxy.requests.count) CONNECTs")
            #expect(server.requests.isEmpty)
            #expect(!result.stderr.contains(Self.token))
        }
    }

    @Test("an unreachable proxy is a NetworkError naming the proxy, its password hidden")
    func unreachableProxy() async throws {
        try await Self.withTLS(macro: "from apimacro import github\ngithub.user('octocat')\n") {
            server, authority, space in
            // Refused at once, and taken by no other test's server meanwhile.
            let closed = try ClosedPort()
            let port = closed.port
            defer { withExtendedLifetime(closed) {} }
            let result = try await space.run(
                "run", "--no-cache", "fetch.py",
                environment: Self.environment(
                    server,
                    [
                        "HTTPS_PROXY": "http://carol:hidden-Pw99@127.0.0.1:\(port)",
                        "APIMACRO_CA_BUNDLE": authority.caFile.path,
                    ]))
            #expect(result.status == 1)
            #expect(
                result.stderr.contains("apimacro.NetworkError: GET \(server.baseURL)/users/octocat: no response ("),
                "\(result.stderr)")
            #expect(result.stderr.contains("through the proxy http://REDACTED@127.0.0.1:\(port)"), "\(result.stderr)")
            #expect(!result.stderr.contains("hidden-Pw99"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test("a proxy that wants credentials (407) is one clear error saying where to put them, not retried")
    func proxyWantsCredentials() async throws {
        try await Self.withTLS(macro: "from apimacro import github\ngithub.user('octocat')\n") {
            server, authority, space in
            let proxy = try await RecordingProxy.start(credentials: ("erin", "needed-pw"))
            defer { Task { try? await proxy.shutdown() } }
            let result = try await space.run(
                "run", "--no-cache", "fetch.py",
                environment: Self.environment(
                    server, ["HTTPS_PROXY": proxy.url, "APIMACRO_CA_BUNDLE": authority.caFile.path]))
            try await proxy.shutdown()
            #expect(result.status == 1)
            #expect(
                result.stderr.contains("apimacro.NetworkError: GET \(server.baseURL)/users/octocat: no response ("),
                "\(result.stderr)")
            #expect(result.stderr.contains("the proxy \(proxy.url) wants credentials (407)"), "\(result.stderr)")
            #expect(proxy.requests.count == 1, "\(proxy.requests.count) CONNECTs")
            #expect(server.requests.isEmpty)
        }
    }

    @Test("plain http goes through a CONNECT tunnel too: the proxy never gets a request it could read as one")
    func plainHTTPTunnels() async throws {
        let server = try await TestServer.start()
        let proxy = try await RecordingProxy.start()
        let space = try Workspace(files: [
            "fetch.py": "import apimacro\nprint(apimacro.get(\(String(reflecting: server.baseURL)) + '/text').status)\n"
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "fetch.py", environment: ["http_proxy": proxy.url])
        try await proxy.shutdown()
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "200\n")
        #expect(proxy.requests.map(\.method) == ["CONNECT"])
        #expect(proxy.requests.first?.target == "127.0.0.1:\(server.port)")
        #expect(server.requests.map(\.path) == ["/text"])
    }

    @Test(
        "a proxy URL libcurl would skip or misread stops the run at start (exit 2), nothing sent, password hidden: %0A, %0D or %00 in the password, user:12/abc@host"
    )
    func proxyFailingOpen() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fetch.py": "import apimacro\nprint(apimacro.get(\(String(reflecting: server.baseURL)) + '/text').status)\n"
        ])
        defer { space.remove() }
        let proxy = try await RecordingProxy.start()
        // libcurl 7.88 connected directly (exit 0, the server answered) with the first three, and
        // took the last as host `user`, port 12, printing "http://user:12" in its error.
        for (value, reason) in [
            ("http://amy:s3cr%0Aet-pw@127.0.0.1:\(proxy.port)", "has a control character"),
            ("http://amy:s3cr%0Det-pw@127.0.0.1:\(proxy.port)", "has a control character"),
            ("http://amy:s3cr%00et-pw@127.0.0.1:\(proxy.port)", "has a control character"),
            ("http://amy:12/s3cret-pw@127.0.0.1:\(proxy.port)", "has a path, query or fragment"),
        ] {
            let result = try await space.run("run", "--no-cache", "fetch.py", environment: ["http_proxy": value])
            #expect(result.status == 2, "\(value): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(
                result.stderr.contains("http_proxy: 'http://REDACTED@127.0.0.1:\(proxy.port)' \(reason)"),
                "\(result.stderr)")
            for secret in ["s3cr", "amy", "12/"] { #expect(!result.stderr.contains(secret), "\(result.stderr)") }
        }
        try await proxy.shutdown()
        try await server.shutdown()
        #expect(server.requests.isEmpty, "a request went out directly")
        #expect(proxy.requests.isEmpty)
    }

    @Test("a bad proxy variable or CA bundle stops the run at start (exit 2), naming the variable, password hidden")
    func badSettings() async throws {
        let space = try Workspace(files: ["fetch.py": "print('ran')\n"])
        defer { space.remove() }
        let socks = try await space.run(
            "run", "fetch.py", environment: ["HTTPS_PROXY": "socks5://dave:s0cks-pw@127.0.0.1:1080"])
        #expect(socks.status == 2)
        #expect(socks.stdout.isEmpty)
        #expect(
            socks.stderr.contains("HTTPS_PROXY: 'socks5://REDACTED@127.0.0.1:1080' uses 'socks5'"), "\(socks.stderr)")
        #expect(!socks.stderr.contains("s0cks-pw"))
        let bundle = try await space.run("run", "fetch.py", environment: ["SSL_CERT_FILE": "/nonexistent/ca.pem"])
        #expect(bundle.status == 2)
        #expect(bundle.stderr.contains("SSL_CERT_FILE: '/nonexistent/ca.pem' does not exist"), "\(bundle.stderr)")
    }
}
