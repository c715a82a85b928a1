import Foundation
import TestSupport
import Testing

/// `cache=` per call (issue 38) and `apimacro api --cache`, through the built binary, told
/// apart by how many requests the loopback server answered.
@Suite("Cache control per call through the binary")
struct CacheChoiceEndToEndTests {
    static let token = "ghp_cacheChoiceToken0123456789"
    static let otherToken = "ghp_cacheChoiceOther9876543210"

    /// A macro that calls `github.get(path, cache=…)` (the rule as Python source in argv[2]) and
    /// prints the answer's serial, or `offline` when it raises `OfflineError`.
    static let macro = """
        import apimacro, sys
        from apimacro import github
        path, rule = sys.argv[1], eval(sys.argv[2])
        try:
            print(github.get(path, cache=rule).get("serial", "-"))
        except apimacro.OfflineError as error:
            print("offline", error)
        """

    func run(
        _ space: Workspace, _ server: TestServer, _ path: String, _ rule: String, token: String = token,
        verbose: Bool = false
    ) async throws -> RunResult {
        try await Binary.run(
            ["run"] + (verbose ? ["-v"] : []) + ["call.py", path, rule], in: space.url,
            environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token])
    }

    func count(_ server: TestServer, _ path: String) -> Int {
        server.requests.filter { $0.path == path }.count
    }

    @Test("cache=\"1h\" keeps a no-store answer and a max-age=0 answer: the second call sends nothing")
    func keep() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["call.py": Self.macro])
        defer { space.remove() }
        for path in ["/cache/no-store", "/cache/max-age/0"] {
            let first = try await run(space, server, path, "'1h'")
            let second = try await run(space, server, path, "'1h'", verbose: true)
            #expect(first.status == 0 && second.status == 0, "\(first.stderr)\(second.stderr)")
            #expect(first.stdout == "1\n" && second.stdout == "1\n", "\(second.stdout)")
            #expect(count(server, path) == 1, "\(path)")
            #expect(second.stderr.contains("cache hit (cache=\"1h\" kept it)"), "\(second.stderr)")
            // Without the rule the headers decide again: no-store and max-age=0 are fetched.
            let plain = try await run(space, server, path, "None")
            #expect(plain.stdout == "2\n" && count(server, path) == 2, "\(plain.stdout)\(plain.stderr)")
        }
        // Seconds as an int, and "30m".
        for rule in ["3600", "'30m'"] {
            _ = try await run(space, server, "/cache/max-age/0", rule)
        }
        #expect(count(server, "/cache/max-age/0") == 2, "both served from the 1h entry, still young")
        try await server.shutdown()
    }

    @Test("another token never gets a cache=\"1h\" answer")
    func otherToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["call.py": Self.macro])
        defer { space.remove() }
        let first = try await run(space, server, "/cache/no-store", "'1h'")
        let other = try await run(space, server, "/cache/no-store", "'1h'", token: Self.otherToken)
        let again = try await run(space, server, "/cache/no-store", "'1h'")
        try await server.shutdown()
        #expect(first.stdout == "1\n" && other.stdout == "2\n" && again.stdout == "1\n", "\(other.stderr)")
        #expect(count(server, "/cache/no-store") == 2)
        let bytes = try Data(contentsOf: space.url.appendingPathComponent(".cache/apimacro/cache.sqlite"))
        #expect(bytes.range(of: Data(Self.token.utf8)) == nil && bytes.range(of: Data(Self.otherToken.utf8)) == nil)
    }

    @Test("cache=\"refresh\" sends again and stores the new answer")
    func refresh() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["call.py": Self.macro])
        defer { space.remove() }
        let path = "/cache/max-age/600"
        let first = try await run(space, server, path, "None")
        let refreshed = try await run(space, server, path, "'refresh'", verbose: true)
        let after = try await run(space, server, path, "None")
        try await server.shutdown()
        #expect(first.stdout == "1\n" && refreshed.stdout == "2\n", "\(refreshed.stderr)")
        #expect(count(server, path) == 2)
        #expect(after.stdout == "2\n", "the refreshed answer was stored and serves the next call")
        #expect(refreshed.stderr.contains("cache=\"refresh\""), "\(refreshed.stderr)")
    }

    @Test("cache=\"only-if-cached\": nothing stored raises OfflineError and sends nothing; a stale entry serves")
    func onlyIfCached() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["call.py": Self.macro])
        defer { space.remove() }
        let empty = try await run(space, server, "/cache/max-age/0", "'only-if-cached'")
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout.hasPrefix("offline offline: GET \(server.baseURL)/cache/max-age/0 is not in the cache"))
        #expect(count(server, "/cache/max-age/0") == 0)
        _ = try await run(space, server, "/cache/max-age/0", "None")
        let stale = try await run(space, server, "/cache/max-age/0", "'only-if-cached'", verbose: true)
        try await server.shutdown()
        #expect(stale.stdout == "1\n", "\(stale.stderr)")
        #expect(count(server, "/cache/max-age/0") == 1)
        #expect(stale.stderr.contains("stale (cache=\"only-if-cached\", a stale copy)"), "\(stale.stderr)")
    }

    @Test("cache=False never stores; a bad value is a ValueError naming what fits")
    func off() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["call.py": Self.macro])
        defer { space.remove() }
        let path = "/cache/max-age/600"
        _ = try await run(space, server, path, "False")
        let second = try await run(space, server, path, "None")
        let bad = try await run(space, server, path, "'soon'")
        try await server.shutdown()
        #expect(second.stdout == "2\n", "nothing was stored: \(second.stderr)")
        #expect(count(server, path) == 2)
        #expect(bad.status != 0 && bad.stderr.contains("ValueError"), "\(bad.stderr)")
        #expect(bad.stderr.contains("\"refresh\", \"only-if-cached\""), "\(bad.stderr)")
    }

    @Test("apimacro.request and page iterators keep the call's rule")
    func requestAndPages() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "req.py": """
            import apimacro, sys
            r = apimacro.get(sys.argv[1] + "/cache/no-store", cache="2d")
            print(r.json()["serial"])
            """
        ])
        defer { space.remove() }
        let first = try await space.run("run", "req.py", server.baseURL)
        let second = try await space.run("run", "req.py", server.baseURL)
        try await server.shutdown()
        #expect(first.stdout == "1\n" && second.stdout == "1\n", "\(first.stderr)\(second.stderr)")
        #expect(count(server, "/cache/no-store") == 1)
    }

    @Test(
        "a plugin's endpoint methods, call, get and paginate take cache= too; an endpoint's own `cache` parameter goes to the API"
    )
    func pluginClient() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "plugins/kept/plugin.toml": """
            name = "kept"
            description = "A plugin over the test server's cache routes"
            base_url = "https://example.com"

            [endpoints.nostore]
            path = "/cache/no-store"

            [endpoints.fresh]
            path = "/cache/max-age/600"
            params = { cache = "string" }
            """,
            "call.py": """
            import apimacro, sys
            kept = apimacro.client("kept")
            how, rule = sys.argv[1], eval(sys.argv[2])
            try:
                if how == "method":
                    print(kept.nostore(cache=rule)["serial"])
                elif how == "call":
                    print(kept.call("nostore", cache=rule)["serial"])
                elif how == "get":
                    print(kept.get("/cache/no-store", cache=rule)["serial"])
                elif how == "own":
                    print(kept.fresh(cache=rule)["serial"])
            except apimacro.OfflineError as error:
                print("offline")
            """,
        ])
        defer { space.remove() }
        let environment = [
            "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path, "APIMACRO_KEPT_URL": server.baseURL,
        ]
        func run(_ how: String, _ rule: String) async throws -> String {
            let result = try await space.run("run", "call.py", how, rule, environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout
        }
        // Nothing stored yet: only-if-cached sends nothing.
        #expect(try await run("method", "'only-if-cached'") == "offline\n")
        #expect(count(server, "/cache/no-store") == 0)
        // "1h" keeps a no-store answer for every form of the call; None lets the headers decide.
        #expect(try await run("method", "'1h'") == "1\n")
        #expect(try await run("call", "'1h'") == "1\n")
        #expect(try await run("get", "'1h'") == "1\n")
        #expect(try await run("method", "'only-if-cached'") == "1\n")
        #expect(count(server, "/cache/no-store") == 1)
        #expect(try await run("method", "None") == "2\n")
        #expect(try await run("method", "'refresh'") == "3\n")
        // An endpoint that declares `cache` sends it as a query parameter, with no cache rule.
        #expect(try await run("own", "'only-if-cached'") == "1\n")
        let own = server.requests.filter { $0.path == "/cache/max-age/600" }
        #expect(own.count == 1 && own.first?.query["cache"] == "only-if-cached", "\(own)")
        try await server.shutdown()
    }

    @Test("apimacro api --cache 1h, as gh api --cache")
    func apiCache() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token]
        let first = try await Binary.run(
            ["api", "--cache", "1h", "/cache/no-store"], in: space.url, environment: environment)
        let second = try await Binary.run(
            ["api", "--cache", "1h", "/cache/no-store"], in: space.url, environment: environment)
        let bad = try await Binary.run(
            ["api", "--cache", "later", "/cache/no-store"], in: space.url, environment: environment)
        try await server.shutdown()
        #expect(first.status == 0 && second.status == 0, "\(first.stderr)\(second.stderr)")
        #expect(first.stdout == second.stdout && first.stdout.contains("\"serial\""), "\(first.stdout)")
        #expect(count(server, "/cache/no-store") == 1)
        #expect(bad.status == 2 && bad.stderr.contains("--cache takes a duration"), "\(bad.stderr)")
    }
}
