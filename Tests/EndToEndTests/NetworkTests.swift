import Foundation
import TestSupport
import Testing

@Suite("network behaviour through the binary", .serialized)
struct NetworkTests {
    static let token = "ghp_e2eSecretToken987654321"

    @Test("-v prints one redacted line per exchange; no token in -v, errors or tracebacks")
    func verboseIsRedacted() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fetch.py": """
            from apimacro import github
            import apimacro
            print(github.user('octocat')['login'])
            apimacro.get(\(String(reflecting: server.baseURL)) + '/echo/x', params={'access_token': 'querysecret1234'})
            github.user('nobody-here')
            """
        ])
        defer { space.remove() }
        server.inject([.status(503)], path: "/users/octocat")
        let result = try await space.run(
            "run", "-v", "fetch.py",
            environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token])
        try await server.shutdown()
        #expect(result.status == 1)
        #expect(result.stdout == "octocat\n")
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("apimacro: GET ") }
        try #require(lines.count == 4, "\(result.stderr)")
        #expect(lines[0].hasPrefix("apimacro: GET \(server.baseURL)/users/octocat 503 "))
        #expect(lines[1].hasPrefix("apimacro: GET \(server.baseURL)/users/octocat 200 "))
        #expect(lines[1].hasSuffix("ms network (attempt 2 of 4)"))
        #expect(lines[2].contains("access_token=REDACTED"))
        #expect(result.stderr.contains("apimacro.NotFound: GET \(server.baseURL)/users/nobody-here → 404 Not Found"))
        for secret in [Self.token, "querysecret1234"] {
            #expect(!result.stderr.contains(secret))
            #expect(!result.stdout.contains(secret))
        }
        #expect(
            server.requests.first { $0.path == "/users/octocat" }?.header("authorization") == "Bearer \(Self.token)")
    }

    @Test("Ctrl-C during a slow request exits 130, not as a network error")
    func interruptSlowRequest() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "slow.py":
                "import apimacro\nprint('ready', flush=True)\napimacro.get(\(String(reflecting: server.baseURL)) + '/slow?ms=20000')\n"
        ])
        defer { space.remove() }
        // Ctrl-C once the request has reached the server (an event, not a delay). Had it not
        // cancelled the wait, the request would end after 20 s and the macro exit 0.
        let result = try await space.run("run", "slow.py", defaultSIGINT: true) { [server] process in
            let deadline = Date().addingTimeInterval(600)
            while !server.requests.contains(where: { $0.path == "/slow" }) && Date() < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            kill(process.processIdentifier, SIGINT)
        }
        try await server.shutdown()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(!result.stderr.contains("NetworkError"))
    }

    /// A workspace whose `slowmap.py` maps four calls to `/slow`, each answered after
    /// `milliseconds`, all in flight together.
    private static func slowMapSpace(milliseconds: Int = 20000) throws -> Workspace {
        try Workspace(files: [
            "slowmap.py": """
            from functools import partial
            from apimacro import github, map
            map(partial(github.get, params={'ms': \(milliseconds)}), ['/slow'] * 4, concurrency=4)
            """
        ])
    }

    @Test("Ctrl-C during apimacro.map's calls in flight exits 130, not as a network error")
    func interruptMap() async throws {
        let server = try await TestServer.start()
        let space = try Self.slowMapSpace()
        defer { space.remove() }
        // Ctrl-C once all four calls have reached the server (they are in flight together).
        let result = try await space.run(
            "run", "--no-cache", "slowmap.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL],
            defaultSIGINT: true
        ) { [server] process in
            let deadline = Date().addingTimeInterval(600)
            while server.requests.filter({ $0.path == "/slow" }).count < 4 && Date() < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            kill(process.processIdentifier, SIGINT)
        }
        try await server.shutdown()
        #expect(server.requests.filter { $0.path == "/slow" }.count == 4)
        #expect(result.status == 130, "\(result.stderr)")
        #expect(!result.stderr.contains("NetworkError"))
    }

    /// Runs `macro` with a `--timeout` far off, waits until the server has seen `requests` calls
    /// to `/slow` (all in flight), then fires the deadline's interrupt (the SIGALRM its timer
    /// sends) and waits for the process to end on it.
    ///
    /// Events, not delays: the run cannot reach the timer (600 s) nor its hard stop, and a wait
    /// the interrupt did not end would go on for the slow answers' 10 minutes (the requests'
    /// own timeout is 600 s too): the process must end within 60 s of the interrupt, a margin
    /// load cannot eat.
    private static func interruptByDeadline(
        _ space: Workspace, _ macro: String, requests: Int, server: TestServer
    ) async throws -> RunResult {
        try await space.run(
            "run", "--no-cache", "--timeout", "600", macro,
            environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_REQUEST_TIMEOUT": "600"]
        ) { [server] process in
            try await waitUntil("\(requests) requests in flight") {
                server.requests.filter { $0.path == "/slow" }.count >= requests
            }
            process.send(SIGALRM)
            try await waitUntil("the macro to end on the interrupt") { !process.isRunning }
        }
    }

    /// The run ended on the deadline's interrupt: exit 1 with MacroTimeout's message, not by the
    /// hard stop, and not as a NetworkError.
    static func expectEndedByDeadline(_ result: RunResult) {
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("ran longer than its --timeout of 600 s"), "\(result.stderr)")
        #expect(!result.stderr.contains("did not stop when interrupted"), "\(result.stderr)")
        #expect(!result.stderr.contains("NetworkError"), "\(result.stderr)")
    }

    @Test("--timeout's interrupt ends apimacro.map's calls in flight")
    func timeoutDuringMap() async throws {
        let server = try await TestServer.start()
        let space = try Self.slowMapSpace(milliseconds: 600_000)
        defer { space.remove() }
        let result = try await Self.interruptByDeadline(space, "slowmap.py", requests: 4, server: server)
        try await server.shutdown()
        Self.expectEndedByDeadline(result)
    }

    @Test("--timeout's interrupt ends a macro waiting on the network")
    func timeoutDuringRequest() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "slow.py": "import apimacro\napimacro.get(\(String(reflecting: server.baseURL)) + '/slow?ms=600000')\n"
        ])
        defer { space.remove() }
        let result = try await Self.interruptByDeadline(space, "slow.py", requests: 1, server: server)
        try await server.shutdown()
        Self.expectEndedByDeadline(result)
    }
}

@Suite("shortener keys through the binary")
struct ShortenerKeyTests {
    @Test("a bad key raises Unauthorized with Google's message; a missing key is AuthError before any request")
    func keys() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "short.py": """
            import apimacro
            from apimacro import shortener
            try:
                shortener.shorten('https://example.com/x')
            except apimacro.APIError as e:
                print(type(e).__name__, e.status, str(e).split(': ', 1)[-1])
            """
        ])
        defer { space.remove() }
        let url = server.baseURL + "/urlshortener/v1"
        let bad = try await space.run(
            "run", "short.py", environment: ["APIMACRO_SHORTENER_URL": url, "APIMACRO_SHORTENER_KEY": "AIza-bad-key"])
        #expect(bad.stdout == "Unauthorized 400 Bad Request (keyInvalid)\n", "\(bad.stderr)")
        #expect(!bad.stdout.contains("AIza-bad-key"))
        let before = server.requests.count
        let missing = try await space.run("run", "short.py", environment: ["APIMACRO_SHORTENER_URL": url])
        #expect(missing.stdout == "AuthError None set APIMACRO_SHORTENER_KEY or run `apimacro login shortener`\n")
        #expect(server.requests.count == before)
        try await server.shutdown()
    }
}
