import Foundation
import Synchronization
import TestSupport
import Testing

/// Several apimacro processes as separate "machines", sharing one real `redis-server`
/// (APIMACRO_SHARED_STATE) against the loopback test server's budget mode (issue 17).
@Suite("shared state in Redis across processes", .serialized)
struct SharedStateTests {
    static let token = "ghp_sharedStateToken0123456789"

    /// `count` GETs of distinct GitHub URLs in a row; prints "ok limited".
    static let sequential = """
        import apimacro, sys
        from apimacro import github
        count, tag = int(sys.argv[1]), sys.argv[2]
        ok = limited = 0
        for i in range(count):
            try:
                github.get("/users/octocat", params={"p": f"{tag}-{i}"})
                ok += 1
            except apimacro.RateLimited:
                limited += 1
        print(ok, limited)
        """

    /// `count` GETs, `concurrency` at a time; prints how many succeeded.
    static let parallel = """
        import apimacro, sys
        from apimacro import github
        count, tag, concurrency = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        results = apimacro.map(lambda i: github.get("/users/octocat", params={"p": f"{tag}-{i}"}), range(count), concurrency=concurrency)
        print(len(results))
        """

    func environment(_ server: TestServer, _ redis: RedisServer, _ extra: [String: String] = [:]) -> [String: String] {
        [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token,
            "APIMACRO_SHARED_STATE": redis.url, "APIMACRO_SHARED_STATE_TIMEOUT": "10",
        ].merging(extra) { $1 }
    }

    /// The numbers a run printed.
    func numbers(_ result: RunResult) -> [Int] {
        result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
    }

    @Test(
        "4 processes × 200 requests on a budget of 300: the server sees at most 300, the rest raise RateLimited unsent")
    func budgetAcrossProcesses() async throws {
        let server = try await TestServer.start()
        server.setBudget(limit: 300)
        let redis = try await RedisServer.start(password: "redis-pw-budget")
        defer { redis.stop() }
        let space = try Workspace(files: ["budget.py": Self.sequential])
        defer { space.remove() }
        let environment = environment(server, redis, ["APIMACRO_MAX_WAIT": "0"])
        let results = try await withThrowingTaskGroup(of: RunResult.self) { group in
            for index in 0..<4 {
                group.addTask {
                    try await Binary.run(
                        ["run", "--no-cache", "budget.py", "200", "m\(index)"], in: space.url, environment: environment,
                        limit: 600)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let report = server.budgetReport
        try await server.shutdown()
        for result in results { #expect(result.status == 0, "\(result.stderr.suffix(600))") }
        let counts = results.map(numbers)
        let ok = counts.map { $0.first ?? 0 }.reduce(0, +)
        let limited = counts.map { $0.dropFirst().first ?? 0 }.reduce(0, +)
        #expect(report.refused == 0, "no request went past the budget: \(report)")
        #expect(report.admitted + report.refused <= 300, "\(report)")
        #expect(server.requests.count <= 300)
        #expect(
            ok == 300 && limited == 500, "every unit of the budget was used, the rest raised RateLimited: \(counts)")
    }

    @Test("with APIMACRO_MAX_WAIT long enough the processes wait for the next window instead")
    func budgetWaitsForReset() async throws {
        let server = try await TestServer.start()
        server.setBudget(limit: 40, window: 2)
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let space = try Workspace(files: ["budget.py": Self.sequential])
        defer { space.remove() }
        let environment = environment(server, redis, ["APIMACRO_MAX_WAIT": "60"])
        async let a = Binary.run(
            ["run", "--no-cache", "budget.py", "30", "a"], in: space.url, environment: environment, limit: 600)
        async let b = Binary.run(
            ["run", "--no-cache", "budget.py", "30", "b"], in: space.url, environment: environment, limit: 600)
        let (ra, rb) = try await (a, b)
        let report = server.budgetReport
        try await server.shutdown()
        #expect(ra.status == 0 && rb.status == 0, "\(ra.stderr.suffix(400))\(rb.stderr.suffix(400))")
        #expect(numbers(ra) == [30, 0] && numbers(rb) == [30, 0], "\(ra.stdout)\(rb.stdout)")
        #expect(
            report.refused == 0 && report.admitted == 60 && report.windows >= 1,
            "no request past a window's budget: \(report)")
    }

    @Test("APIMACRO_MAX_CONCURRENCY=4: the server never sees more than 4 requests in flight from 4 processes")
    func concurrencyCap() async throws {
        let server = try await TestServer.start()
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let space = try Workspace(files: ["parallel.py": Self.parallel])
        defer { space.remove() }
        server.setBudget(limit: 100_000)
        // One request first, so the budget is known: while it is not, one request alone probes it.
        let first = try await Binary.run(
            ["run", "--no-cache", "parallel.py", "1", "first", "1"], in: space.url,
            environment: environment(server, redis), limit: 600)
        #expect(first.status == 0 && first.stdout == "1\n", "\(first.stderr.suffix(400))")
        // No answer until 5 requests are in flight at once: an event, not a delay that load could eat.
        server.setBudget(limit: 100_000, holdUntilInFlight: 5)
        // Without the cap, one process with 8 workers has more than 4 in flight: the check can fail.
        let control = try await Binary.run(
            ["run", "--no-cache", "parallel.py", "24", "control", "8"], in: space.url,
            environment: environment(server, redis),
            limit: 600)
        #expect(control.status == 0 && control.stdout == "24\n", "\(control.stderr.suffix(400))")
        #expect(server.budgetReport.gateOpened && server.budgetReport.peakInFlight > 4, "\(server.budgetReport)")
        // With the cap: no answer until 4 are in flight (the cap is reached, never passed), then
        // each answer 100 ms late so that requests keep overlapping.
        server.setBudget(limit: 100_000, delayMilliseconds: 100, holdUntilInFlight: 4)
        let environment = environment(server, redis, ["APIMACRO_MAX_CONCURRENCY": "4"])
        let results = try await withThrowingTaskGroup(of: RunResult.self) { group in
            for index in 0..<4 {
                group.addTask {
                    try await Binary.run(
                        ["run", "--no-cache", "parallel.py", "24", "c\(index)", "8"], in: space.url,
                        environment: environment, limit: 600)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let report = server.budgetReport
        try await server.shutdown()
        for result in results { #expect(result.status == 0 && result.stdout == "24\n", "\(result.stderr.suffix(400))") }
        #expect(report.admitted == 96)
        #expect(report.gateOpened && report.peakInFlight == 4, "\(report)")
    }

    @Test(
        "process B gets process A's answer from the shared cache (a hit, or a 304), and -v says so; another token does not"
    )
    func crossProcessCache() async throws {
        let server = try await TestServer.start()
        let redis = try await RedisServer.start(password: "redis-pw-cache")
        defer { redis.stop() }
        let macro = """
            import apimacro
            from apimacro import github
            print(github.get("/cache/max-age/600")["serial"], github.get("/users/octocat")["login"])
            """
        // Separate homes: separate SQLite caches, as on separate machines.
        let a = try Workspace(files: ["shared.py": macro])
        let b = try Workspace(files: ["shared.py": macro])
        let c = try Workspace(files: ["shared.py": macro])
        defer { for space in [a, b, c] { space.remove() } }
        let environment = environment(server, redis)
        let first = try await a.run("run", "-v", "shared.py", environment: environment)
        let second = try await b.run("run", "-v", "shared.py", environment: environment)
        let seenAfterB = server.requests.count
        let other = try await c.run(
            "run", "-v", "shared.py",
            environment: environment.merging(["APIMACRO_GITHUB_TOKEN": "ghp_anotherToken987654321"]) { $1 })
        let keys = try redisCLI(redis, ["--scan"])
        var values = ""
        for key in keys.split(separator: "\n") where key.contains(":e:") {
            values += try redisCLI(redis, ["GET", String(key)])
        }
        try await server.shutdown()
        #expect(
            first.status == 0 && second.status == 0 && other.status == 0,
            "\(first.stderr)\(second.stderr)\(other.stderr)")
        #expect(first.stdout == second.stdout && first.stdout == "1 octocat\n", "\(first.stdout) \(second.stdout)")
        let lines = second.stderr.split(separator: "\n").filter { $0.hasPrefix("apimacro: GET ") }
        #expect(lines.count == 2, "\(second.stderr)")
        #expect(
            lines.first?.contains("/cache/max-age/600 200 ") == true
                && lines.first?.hasSuffix("ms shared cache hit") == true, "\(lines)")
        #expect(
            lines.last?.contains("/users/octocat 304 ") == true
                && lines.last?.hasSuffix("ms revalidated (304)") == true, "\(lines)")
        #expect(seenAfterB == 3, "A fetched 2, B only revalidated one: \(server.requests.map(\.uri))")
        // Another credential finds nothing: entries are named and sealed by the credential.
        #expect(other.stdout == "2 octocat\n", "\(other.stdout)")
        #expect(other.stderr.split(separator: "\n").filter { $0.hasSuffix("network") }.count == 2, "\(other.stderr)")
        // Redis holds neither the tokens nor the bodies in clear.
        #expect(!keys.isEmpty && !keys.contains(Self.token) && !keys.contains("octocat"), "\(keys)")
        #expect(
            !values.isEmpty && !values.contains("octocat") && !values.contains("max-age")
                && !values.contains(Self.token))
    }

    @Test("redis-server killed mid-run: every process finishes with one warning, nothing lost")
    func redisKilledMidRun() async throws {
        let server = try await TestServer.start()
        server.setBudget(limit: 100_000, delayMilliseconds: 10)
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        // One home each, as on separate machines: each process has its own SQLite cache.
        let spaces = try (0..<3).map { _ in try Workspace(files: ["budget.py": Self.sequential]) }
        defer { for space in spaces { space.remove() } }
        let environment = environment(server, redis, ["APIMACRO_MAX_CONCURRENCY": "8"])
        // Redis is killed from a thread of its own once the server has seen 30 requests: a task
        // on the cooperative pool (two threads here) waited behind other suites' work until the
        // three processes had finished, and no process saw Redis go.
        let killed = Flag()
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(300)
            while server.requests.count < 30, Date() < deadline { usleep(2_000) }
            redis.kill()
            killed.value.store(true, ordering: .releasing)
        }
        let results = try await withThrowingTaskGroup(of: RunResult.self) { group in
            for (index, space) in spaces.enumerated() {
                group.addTask {
                    try await Binary.run(
                        ["run", "budget.py", "80", "k\(index)"], in: space.url, environment: environment, limit: 600)
                }
            }
            var finished: [RunResult] = []
            for try await result in group { finished.append(result) }
            return finished
        }
        try await waitUntil("redis-server to be killed") { killed.value.load(ordering: .acquiring) }
        try await server.shutdown()
        #expect(server.requests.count == 240)
        for result in results {
            #expect(result.status == 0 && result.stdout == "80 0\n", "\(result.stdout) \(result.stderr.suffix(600))")
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning: the shared state") }
            #expect(warnings.count == 1, "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "nothing else on stderr: \(result.stderr)")
        }
    }

    @Test(
        "a wrong password, a server that needs one, or a port that is not Redis: a usage error naming the setting, password redacted"
    )
    func rejectedAddresses() async throws {
        let server = try await TestServer.start()
        let redis = try await RedisServer.start(password: "right-password-42")
        defer { redis.stop() }
        let space = try Workspace(files: ["hello.py": "print('hi')\n"])
        defer { space.remove() }
        let wrong = try await space.run(
            "run", "hello.py",
            environment: ["APIMACRO_SHARED_STATE": "redis://:wrong-password-77@127.0.0.1:\(redis.port)/0"])
        #expect(wrong.status == 2 && wrong.stdout.isEmpty)
        #expect(
            wrong.stderr.contains("APIMACRO_SHARED_STATE") && wrong.stderr.contains("wrong user or password"),
            "\(wrong.stderr)")
        #expect(wrong.stderr.contains(":REDACTED@") && !wrong.stderr.contains("wrong-password-77"), "\(wrong.stderr)")
        let none = try await space.run(
            "run", "hello.py", environment: ["APIMACRO_SHARED_STATE": "redis://127.0.0.1:\(redis.port)/0"])
        #expect(none.status == 2 && none.stderr.contains("needs a password"), "\(none.stderr)")
        let http = try await space.run(
            "run", "hello.py", environment: ["APIMACRO_SHARED_STATE": "redis://127.0.0.1:\(server.port)/0"])
        #expect(http.status == 2 && http.stderr.contains("does not speak Redis"), "\(http.stderr)")
        let malformed = try await space.run(
            "run", "hello.py", environment: ["APIMACRO_SHARED_STATE": "http://user:pw-secret-9@host/0"])
        #expect(malformed.status == 2 && malformed.stderr.contains("APIMACRO_SHARED_STATE"), "\(malformed.stderr)")
        #expect(!malformed.stderr.contains("pw-secret-9"), "\(malformed.stderr)")
        // config.toml's [shared] redis, named by its file and key.
        try space.write(
            ".config/apimacro/config.toml",
            "[shared]\nredis = \"redis://:wrong-password-77@127.0.0.1:\(redis.port)/0\"\n")
        // It holds a password: only a file others cannot read is used (issue 24).
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600],
            ofItemAtPath: space.url.appendingPathComponent(".config/apimacro/config.toml").path)
        let fromFile = try await space.run("run", "hello.py")
        #expect(fromFile.status == 2 && fromFile.stderr.contains("config.toml: shared.redis"), "\(fromFile.stderr)")
        #expect(!fromFile.stderr.contains("wrong-password-77"))
        // The right one works, and prints nothing extra.
        let right = try await space.run("run", "hello.py", environment: ["APIMACRO_SHARED_STATE": redis.url])
        try await server.shutdown()
        #expect(right.status == 0 && right.stdout == "hi\n" && right.stderr.isEmpty, "\(right.stderr)")
    }

    @Test("Redis unreachable at start: one warning, the macro runs on local state")
    func unreachableAtStart() async throws {
        let server = try await TestServer.start()
        // Refused at once, and taken by no other test's server meanwhile (a stopped server's port can be).
        let closed = try ClosedPort()
        let port = closed.port
        let space = try Workspace(files: ["budget.py": Self.sequential])
        defer { space.remove() }
        let result = try await space.run(
            "run", "budget.py", "5", "u",
            environment: [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token,
                "APIMACRO_SHARED_STATE": "redis://127.0.0.1:\(port)/0",
            ])
        try await server.shutdown()
        withExtendedLifetime(closed) {}
        #expect(result.status == 0 && result.stdout == "5 0\n", "\(result.stdout)\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(
            lines.count == 1 && lines.first?.contains("warning: the shared state redis://127.0.0.1:\(port)/0") == true,
            "\(result.stderr)")
    }

    /// Runs `redis-cli` against `redis` and returns what it printed.
    func redisCLI(_ redis: RedisServer, _ arguments: [String]) throws -> String {
        let pipe = Pipe()
        let process = try Spawned(
            "/usr/bin/redis-cli",
            ["-p", String(redis.port), "--no-auth-warning"] + (redis.password.map { ["-a", $0] } ?? []) + arguments,
            environment: ProcessInfo.processInfo.environment,
            stdout: .descriptor(pipe.fileHandleForWriting.fileDescriptor))
        try pipe.fileHandleForWriting.close()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A flag one thread sets and a task reads.
private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}
