import Foundation
import TestSupport
import Testing

/// The HTTP cache, --offline, --record and --replay through the built binary.
@Suite("cache, offline and HAR through the binary")
struct CacheEndToEndTests {
    static let token = "ghp_cacheE2EToken0123456789"
    static let examples = ExampleTests.examples

    /// `-v` lines (the exchange log) of a run.
    func exchanges(_ result: RunResult) -> [Substring] {
        result.stderr.split(separator: "\n").filter {
            $0.hasPrefix("apimacro: GET ") || $0.hasPrefix("apimacro: POST ")
        }
    }

    @Test("a second run of the same macro makes only conditional requests and gets 304s")
    func secondRunRevalidates() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token]
        let arguments = [
            "run", "-v", "--format", "csv", Self.examples.appendingPathComponent("github-top-repos.py").path, "--login",
            "many", "--top", "3",
        ]
        let first = try await Binary.run(arguments, in: space.url, environment: environment)
        let firstCount = server.requests.count
        server.clearRequests()
        let second = try await Binary.run(arguments, in: space.url, environment: environment)
        try await server.shutdown()
        #expect(first.status == 0 && second.status == 0, "\(first.stderr)\(second.stderr)")
        #expect(second.stdout == first.stdout && !first.stdout.isEmpty)
        #expect(firstCount == 20, "2,000 repos are 20 pages")
        #expect(server.requests.count == firstCount)
        #expect(
            server.requests.allSatisfy { $0.header("if-none-match") != nil },
            "every request of the second run is conditional")
        let lines = exchanges(second)
        #expect(lines.count == 20)
        #expect(lines.allSatisfy { $0.contains(" 304 ") && $0.hasSuffix("ms revalidated (304)") }, "\(lines.prefix(3))")
        #expect(exchanges(first).allSatisfy { $0.hasSuffix("ms network") })
        // The cache keeps no token in clear.
        let cacheFile = space.url.appendingPathComponent(".cache/apimacro/cache.sqlite")
        let bytes = try Data(contentsOf: cacheFile)
        #expect(!bytes.isEmpty && bytes.range(of: Data(Self.token.utf8)) == nil)
    }

    @Test("two processes writing the cache at once corrupt nothing; cache info and clear")
    func concurrentProcesses() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fill.py": """
            import apimacro, sys
            base, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            sources = set()
            for i in range(start, start + count):
                r = apimacro.get(f"{base}/cache/max-age/600", params={"i": str(i)})
                assert r.json()["kind"] == "max-age", r.text
            print("ok")
            """
        ])
        defer { space.remove() }
        async let a = space.run("run", "fill.py", server.baseURL, "0", "150")
        async let b = space.run("run", "fill.py", server.baseURL, "75", "150")
        let (ra, rb) = try await (a, b)
        #expect(ra.status == 0 && rb.status == 0, "\(ra.stderr)\(rb.stderr)")
        #expect(ra.stderr.isEmpty && rb.stderr.isEmpty, "no cache warnings: \(ra.stderr)\(rb.stderr)")
        let networkRequests = server.requests.count
        #expect(networkRequests >= 225 && networkRequests <= 300)
        server.clearRequests()
        // Every one of the 225 answers is readable, offline, by a third process.
        let check = try await space.run("run", "-v", "--offline", "fill.py", server.baseURL, "0", "225")
        #expect(check.status == 0 && check.stdout == "ok\n", "\(check.stderr.suffix(400))")
        #expect(exchanges(check).count == 225 && exchanges(check).allSatisfy { $0.hasSuffix("cache hit") })
        #expect(server.requests.isEmpty)
        let info = try await space.run("cache", "info")
        try await server.shutdown()
        #expect(info.status == 0)
        #expect(info.stdout.contains("entries  225\n"), "\(info.stdout)")
        #expect(info.stdout.contains(space.url.appendingPathComponent(".cache/apimacro/cache.sqlite").path))
        let clear = try await space.run("cache", "clear")
        #expect(clear.stdout.hasPrefix("removed 225 cached responses"))
        #expect(try await space.run("cache", "info").stdout.contains("entries  0\n"))
    }

    @Test("stale-if-error: the server answers 503 after every retry, the cached copy is served with one warning")
    func staleIfError() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let arguments = [
            "run", "--format", "csv", Self.examples.appendingPathComponent("github-profile.py").path, "--login",
            "octocat",
        ]
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL]
        let first = try await Binary.run(arguments, in: space.url, environment: environment)
        server.inject(Array(repeating: .status(503), count: 4), path: "/users/octocat")
        let second = try await Binary.run(arguments, in: space.url, environment: environment)
        server.inject(Array(repeating: .reset, count: 4), path: "/users/octocat")
        let third = try await Binary.run(
            ["run", "-v"] + arguments.dropFirst(), in: space.url, environment: environment)
        try await server.shutdown()
        #expect(second.status == 0 && second.stdout == first.stdout, "\(second.stderr)")
        let warning =
            "apimacro: warning: GET \(server.baseURL)/users/octocat: 503 Service Unavailable; using the cached copy from "
        #expect(second.stderr.hasPrefix(warning) && second.stderr.hasSuffix(" s ago\n"), "\(second.stderr)")
        #expect(second.stderr.split(separator: "\n").count == 1, "one warning line")
        #expect(third.stdout == first.stdout)
        #expect(third.stderr.contains("no response; using the cached copy from"), "\(third.stderr)")
        #expect(exchanges(third).last?.hasSuffix("ms stale") == true, "\(third.stderr)")
    }

    @Test("--offline with an empty cache raises OfflineError naming the request")
    func offlineEmpty() async throws {
        let space = try Workspace(files: [
            "catch.py": """
            import apimacro
            from apimacro import github
            try:
                github.user("octocat")
            except apimacro.OfflineError as error:
                print("offline:", error.url)
            """
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": "http://127.0.0.1:9"]
        let result = try await space.run(
            "run", "--offline", Self.examples.appendingPathComponent("github-profile.py").path, environment: environment
        )
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                "apimacro.OfflineError: offline: GET http://127.0.0.1:9/users/octocat is not in the cache"),
            "\(result.stderr)")
        let caught = try await space.run("run", "--offline", "catch.py", environment: environment)
        #expect(caught.stdout == "offline: http://127.0.0.1:9/users/octocat\n", "\(caught.stderr)")
    }

    @Test("record then replay with the server stopped gives byte-identical output; the HAR holds no token")
    func recordReplay() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let har = space.url.appendingPathComponent("run.har").path
        let macro = [
            "--format", "table", Self.examples.appendingPathComponent("github-followers.py").path, "--login", "many",
            "--limit", "150",
        ]
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token]
        let recorded = try await Binary.run(["run", "--record", har] + macro, in: space.url, environment: environment)
        // Run it again while recording: the cache answers (revalidated), and the recording must still replay alone.
        let again = try await Binary.run(
            ["run", "--record", har + ".2"] + macro, in: space.url, environment: environment)
        try await server.shutdown()
        #expect(recorded.status == 0 && again.status == 0, "\(recorded.stderr)")
        let text = try String(contentsOfFile: har, encoding: .utf8)
        #expect(!text.contains(Self.token), "the token leaked into the HAR")
        #expect(text.contains("\"Bearer REDACTED\""))
        for file in [har, har + ".2"] {
            let replayed = try await Binary.run(
                ["run", "-v", "--replay", file] + macro, in: space.url,
                environment: ["APIMACRO_GITHUB_URL": server.baseURL])
            #expect(replayed.status == 0, "\(replayed.stderr)")
            #expect(replayed.stdout == recorded.stdout, "byte-identical output")
            #expect(exchanges(replayed).count == 2 && exchanges(replayed).allSatisfy { $0.hasSuffix("ms replay") })
        }
    }

    @Test("the HAR is written even when the macro raises, and a missing request names itself")
    func recordOnFailure() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fail.py": """
            from apimacro import github
            print(github.user("octocat")["login"])
            raise RuntimeError("boom")
            """
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL]
        let result = try await space.run("run", "--record", "fail.har", "fail.py", environment: environment)
        try await server.shutdown()
        #expect(result.status == 1 && result.stderr.contains("RuntimeError: boom"))
        let har =
            try JSONSerialization.jsonObject(with: Data(contentsOf: space.url.appendingPathComponent("fail.har")))
            as? [String: Any]
        let entries = (har?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries?.count == 1)
        let missing = try await space.run(
            "run", "--replay", "fail.har", Self.examples.appendingPathComponent("github-profile.py").path, "--login",
            "mona",
            environment: environment)
        #expect(missing.status == 1)
        #expect(
            missing.stderr.contains(
                "OfflineError: offline: GET \(server.baseURL)/users/mona is not in the replay file"),
            "\(missing.stderr)")
        // A miss names the hosts the file does hold, so a wrong --replay file or URL shows at once.
        #expect(missing.stderr.contains("fail.har (it holds requests to \(server.baseURL))"), "\(missing.stderr)")
        let bad = try await space.run("run", "--replay", "nothing.har", "fail.py")
        #expect(bad.status == 2 && bad.stderr.hasPrefix("apimacro: cannot read the HAR file"), "\(bad.stderr)")
    }

    @Test("-v marks network, cache hit and revalidated (304) exchanges")
    func verboseSources() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "mix.py": """
            import apimacro, sys
            base = sys.argv[1]
            for path in ["/cache/max-age/600", "/cache/max-age/600", "/cache/etag/v", "/cache/etag/v"]:
                apimacro.get(base + path)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "-v", "mix.py", server.baseURL)
        try await server.shutdown()
        let sources = exchanges(result).map { line in
            line.split(separator: " ", maxSplits: 5).last.map(String.init) ?? ""
        }
        #expect(sources == ["network", "cache hit", "network", "revalidated (304)"], "\(result.stderr)")
    }

    @Test("--no-cache neither reads nor writes the cache")
    func noCache() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "two.py": "import apimacro, sys\nfor _ in range(2): apimacro.get(sys.argv[1] + '/cache/max-age/600')\n"
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "two.py", server.baseURL)
        try await server.shutdown()
        #expect(result.status == 0)
        #expect(server.requests.count == 2)
        #expect(
            !FileManager.default.fileExists(
                atPath: space.url.appendingPathComponent(".cache/apimacro/cache.sqlite").path))
    }

    @Test("request(cache=False) skips the cache for that request only")
    func cacheFalse() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "mix.py": """
            import apimacro, sys
            url = sys.argv[1] + "/cache/max-age/600"
            apimacro.get(url)
            apimacro.get(url)
            apimacro.get(url, cache=False)
            apimacro.get(url, cache=False)
            apimacro.get(url)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "-v", "mix.py", server.baseURL)
        try await server.shutdown()
        let sources = exchanges(result).map { line in
            line.split(separator: " ", maxSplits: 5).last.map(String.init) ?? ""
        }
        #expect(sources == ["network", "cache hit", "network", "network", "cache hit"], "\(result.stderr)")
        #expect(server.requests.count == 3)
    }

    @Test("a HAR exported from Chrome replays an example")
    func browserHAR() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run(
            "run", "--format", "csv", "--replay",
            Self.examples.appendingPathComponent("cassettes/browser-chrome-octocat.har").path,
            Self.examples.appendingPathComponent("github-profile.py").path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains(
                "octocat,The Octocat,'@github,San Francisco,8,21542,9,https://avatars.githubusercontent.com/u/583231?v=4"
            ), "\(result.stdout)")
    }
}
