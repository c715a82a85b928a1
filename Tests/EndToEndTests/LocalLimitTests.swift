import Foundation
import TestSupport
import Testing

/// Issue 39, "Limits without a server", through the built binary.
///
/// A plugin's `[limits]` and `APIMACRO_MAX_RATE` / `APIMACRO_MAX_CONCURRENCY` with no shared
/// state are held in the process across `apimacro.map`'s tasks. The cap is shown by the server's count of
/// requests in flight (answers held until the cap is reached, so it is reached, never passed);
/// the rate by arrival times, which a pace makes a lower bound that load can only raise.
@Suite("limits without a server")
struct LocalLimitTests {
    static func plugin(limits: String) -> String {
        """
        name = "capped"
        description = "Test plugin with limits"
        base_url = "https://example.com"
        \(limits)

        [endpoints.user]
        path = "/users/{login}"
        params = { login = "string!" }
        """
    }

    /// Prints the wall clock, then fetches `count` users `width` at a time.
    static let fanOut = """
        import apimacro, sys, time
        from apimacro import github
        count, width, via = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
        print(time.time(), flush=True)
        fetch = github.user if via == "github" else (lambda login: apimacro.client("capped").user(login=login))
        users = apimacro.map(fetch, ["octocat"] * count, concurrency=width)
        print(len(users))
        """

    func environment(_ server: TestServer, _ space: Workspace, _ extra: [String: String] = [:]) -> [String: String] {
        [
            "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
            "APIMACRO_CAPPED_URL": server.baseURL, "APIMACRO_GITHUB_URL": server.baseURL,
        ].merging(extra) { $1 }
    }

    @Test("[limits] concurrency = 2: the server never sees more than 2 in flight from 8 workers; unlimited, it does")
    func pluginConcurrency() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "plugins/capped/plugin.toml": Self.plugin(limits: "[limits]\nconcurrency = 2"), "fan.py": Self.fanOut,
        ])
        defer { space.remove() }
        // The control: GitHub has no cap here, so 3 in flight happen (the answers wait for them).
        server.setBudget(limit: 100_000, holdUntilInFlight: 3)
        let control = try await space.run(
            "run", "--no-cache", "fan.py", "12", "8", "github", environment: environment(server, space))
        #expect(control.status == 0, "\(control.stderr)")
        #expect(server.budgetReport.gateOpened && server.budgetReport.peakInFlight > 2, "\(server.budgetReport)")
        // The plugin: answers wait until 2 are in flight (the cap is reached), then come 100 ms
        // late so that requests keep overlapping; never a third.
        server.setBudget(limit: 100_000, delayMilliseconds: 100, holdUntilInFlight: 2)
        let capped = try await space.run(
            "run", "--no-cache", "-v", "fan.py", "12", "8", "plugin", environment: environment(server, space))
        #expect(capped.status == 0, "\(capped.stderr)")
        #expect(capped.stdout.hasSuffix("\n12\n"), "\(capped.stdout)")
        let report = server.budgetReport
        #expect(report.gateOpened && report.peakInFlight == 2, "\(report)")
        #expect(
            capped.stderr.contains("for a place before GET \(server.baseURL)/users/octocat (at most 2 in flight: "),
            "\(capped.stderr)")
        #expect(capped.stderr.contains("plugin.toml [limits] concurrency)"), "\(capped.stderr)")
        try await server.shutdown()
    }

    @Test(
        "[limits] rate = \"4/s\": 9 calls at once arrive at least 250 ms apart from the macro's start, start to start")
    func pluginRate() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "plugins/capped/plugin.toml": Self.plugin(limits: "[limits]\nrate = \"4/s\""), "fan.py": Self.fanOut,
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "--no-cache", "-v", "fan.py", "9", "9", "plugin", environment: environment(server, space))
        #expect(result.status == 0, "\(result.stderr)")
        let started = try #require(result.stdout.split(separator: "\n").first.flatMap { Double($0) })
        let arrivals = server.requests.filter { $0.path == "/users/octocat" }.map(\.arrived).sorted()
        try #require(arrivals.count == 9)
        // The k-th send starts no sooner than k × 250 ms after the first, which starts after
        // `started`: each arrival is at least that late (5 ms for the two clocks' rounding).
        for (k, arrival) in arrivals.enumerated() {
            #expect(arrival - started >= Double(k) * 0.25 - 0.005, "arrival \(k) at \(arrival - started) s")
        }
        #expect(result.stderr.contains("(at most 4/s: "), "\(result.stderr)")
        #expect(result.stderr.contains("plugin.toml [limits] rate)"), "\(result.stderr)")
        try await server.shutdown()
    }

    @Test("APIMACRO_MAX_CONCURRENCY=2 and APIMACRO_MAX_RATE=5/s without Redis hold every client of the process")
    func processLimits() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["fan.py": Self.fanOut])
        defer { space.remove() }
        server.setBudget(limit: 100_000, delayMilliseconds: 50, holdUntilInFlight: 2)
        let result = try await space.run(
            "run", "--no-cache", "-v", "fan.py", "10", "8", "github",
            environment: environment(server, space, ["APIMACRO_MAX_CONCURRENCY": "2", "APIMACRO_MAX_RATE": "5/s"]))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.budgetReport.peakInFlight == 2, "\(server.budgetReport)")
        let started = try #require(result.stdout.split(separator: "\n").first.flatMap { Double($0) })
        let arrivals = server.requests.filter { $0.path == "/users/octocat" }.map(\.arrived).sorted()
        for (k, arrival) in arrivals.enumerated() {
            #expect(arrival - started >= Double(k) * 0.2 - 0.005, "arrival \(k) at \(arrival - started) s")
        }
        #expect(result.stderr.contains("(at most 5/s: APIMACRO_MAX_RATE)"), "\(result.stderr)")
        try await server.shutdown()
    }

    @Test(
        "[github.limits] in config.toml and APIMACRO_GITHUB_LIMITS_RATE hold the built-in client; a bad one is refused")
    func clientLimitsFromSettings() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fan.py": Self.fanOut, ".config/apimacro/config.toml": "[github.limits]\nconcurrency = 2\n",
        ])
        defer { space.remove() }
        // The server holds the first answer until two are in flight; the second start is paced a
        // second after the first (a margin no load eats: the two book their starts at once), and
        // the third waits for a place until an answer comes back.
        server.setBudget(limit: 100_000, holdUntilInFlight: 2)
        let capped = try await space.run(
            "run", "--no-cache", "-v", "fan.py", "3", "8", "github",
            environment: environment(server, space, ["APIMACRO_GITHUB_LIMITS_RATE": "1/s"]))
        #expect(capped.status == 0, "\(capped.stderr)")
        #expect(server.budgetReport.peakInFlight == 2, "\(server.budgetReport)")
        #expect(
            capped.stderr.contains(
                "(at most 2 in flight: \(space.url.path)/.config/apimacro/config.toml: github.limits.concurrency)"),
            "\(capped.stderr)")
        #expect(capped.stderr.contains("(at most 1/s: APIMACRO_GITHUB_LIMITS_RATE)"), "\(capped.stderr)")
        try space.write(".config/apimacro/config.toml", "[github.limits]\nconcurrency = \"many\"\n")
        let refused = try await space.run("run", "-c", "pass", environment: environment(server, space))
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains("[github] limits.concurrency is a string; it takes an integer"), "\(refused.stderr)"
        )
        try await server.shutdown()
    }

    @Test("plugins show states the limits; a limit that is not one is refused with what to write")
    func shownAndChecked() async throws {
        let space = try Workspace(files: [
            "plugins/capped/plugin.toml": Self.plugin(limits: "[limits]\nrate = \"600/min\"\nconcurrency = 4"),
            "bad/capped/plugin.toml": Self.plugin(limits: "[limits]\nrate = \"fast\""),
        ])
        defer { space.remove() }
        let shown = try await space.run(
            "plugins", "show", "capped",
            environment: ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path])
        #expect(shown.stdout.contains("  limits:       at most 10/s, 4 in flight in each process ([limits])"))
        let refused = try await space.run(
            "plugins", "show", "capped", environment: ["APIMACRO_PLUGINS": space.url.appendingPathComponent("bad").path]
        )
        #expect(
            refused.stderr.contains(
                "limits.rate: \"fast\" is not a rate; write rate = \"10/s\" (or \"600/min\", \"5000/h\")"),
            "\(refused.stderr)")
        let badVariable = try await space.run("run", "-c", "pass", environment: ["APIMACRO_MAX_RATE": "fast"])
        #expect(badVariable.status == 2)
        #expect(badVariable.stderr.contains("or a rate such as 10/s, 600/min or 5000/h"), "\(badVariable.stderr)")
    }
}
