import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 38, state on the shared-state server: `APIMACRO_STATE=redis` keeps each macro's state
/// and bookmarks in the Redis of `APIMACRO_SHARED_STATE`, against Debian's `redis-server`,
/// which each test starts on 127.0.0.1 and stops (`RedisServer`).
///
/// Every wait is for an event (the server's readiness line, a file a macro or helper writes),
/// never a duration.
@Suite("state in Redis (issue 38)", .timeLimit(.minutes(10)))
struct RedisStateEndToEndTests {
    static let password = "redis-state-pw-4711"

    /// Starts a server (with a password) for `body`, stopped afterwards however `body` ends.
    static func withServer(_ body: (RedisServer) async throws -> Void) async throws {
        let server = try await RedisServer.start(password: password)
        defer { server.stop() }
        try await body(server)
    }

    /// The settings of a run whose state lives in `server`, as machine `home` (its own
    /// `APIMACRO_HOME`: lock files and no state of its own).
    static func environment(_ server: RedisServer, home: URL) -> [String: String] {
        [
            "APIMACRO_STATE": "redis", "APIMACRO_SHARED_STATE": server.url, "APIMACRO_HOME": home.path,
            "APIMACRO_GITHUB_TOKEN": "ghp_redisStateToken0123456789",
        ]
    }

    /// Checks that no output of `result` holds the server's password or the token.
    static func expectNoSecret(_ result: RunResult, _ comment: String = "") {
        for secret in [password, "ghp_redisStateToken0123456789"] {
            #expect(!result.stdout.contains(secret), "a secret leaked to stdout \(comment)")
            #expect(!result.stderr.contains(secret), "a secret leaked to stderr \(comment)")
        }
    }

    /// Runs `redis-cli` against `server` with `arguments`; its output.
    static func cli(_ server: RedisServer, _ arguments: String...) async throws -> String {
        let result = try await Binary.run(
            ["-p", String(server.port), "--no-auth-warning", "-a", password] + arguments,
            in: FileManager.default.temporaryDirectory, executable: URL(fileURLWithPath: "/usr/bin/redis-cli"))
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A macro that counts its runs in `apimacro.state["n"]`.
    static let counter = """
        import apimacro
        apimacro.state["n"] = apimacro.state.get("n", 0) + 1
        print(apimacro.state["n"])

        """

    @Test("state persists across runs in Redis, not in the home; show, export and reset work against it")
    func acrossRuns() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: ["counter.py": Self.counter])
            defer { space.remove() }
            let home = space.url.appendingPathComponent("home")
            let environment = Self.environment(server, home: home)
            for expected in 1...3 {
                let run = try await space.run("run", "counter.py", environment: environment)
                #expect(run.status == 0, "\(run.stderr)")
                #expect(run.stdout == "\(expected)\n")
                Self.expectNoSecret(run)
            }
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("state.db").path))
            let other = try await space.run(
                "run", "--state-key", "counter", "-c", "import apimacro; apimacro.state['cursor'] = {'at': 'x'}",
                environment: environment)
            #expect(other.status == 0, "\(other.stderr)")
            // What Redis holds: the values, when they were committed, the version; no secret.
            let stored = try await Self.cli(server, "HGETALL", "apimacro:state:counter")
            let fields = stored.split(separator: "\n").map(String.init)
            #expect(fields.contains("v:n") && fields.contains("v:cursor") && fields.contains("#version"), "\(stored)")
            #expect(fields.contains("{\"at\":\"x\"}"), "\(stored)")
            #expect(!stored.contains("ghp_"), "\(stored)")
            #expect(try await Self.cli(server, "SMEMBERS", "apimacro:state-macros") == "counter")
            let show = try await space.run("state", "show", "counter", environment: environment)
            #expect(show.status == 0, "\(show.stderr)")
            let lines = show.stdout.split(separator: "\n")
            #expect(lines.count == 2, "\(show.stdout)")
            #expect(lines.first?.hasPrefix("cursor  {\"at\":\"x\"}  committed ") == true, "\(show.stdout)")
            let all = try await space.run("state", "show", environment: environment)
            #expect(all.stdout.hasPrefix("counter  2 keys  committed "), "\(all.stdout)")
            let export = try await space.run("state", "export", "counter", environment: environment)
            #expect(export.stdout == "{\n  \"cursor\": {\"at\":\"x\"},\n  \"n\": 3\n}\n", "\(export.stderr)")
            let reset = try await space.run("state", "reset", "counter", "n", environment: environment)
            #expect(reset.stdout == "removed n from counter's state\n", "\(reset.stderr)")
            #expect(try await space.run("run", "counter.py", environment: environment).stdout == "1\n")
            let resetAll = try await space.run("state", "reset", "counter", environment: environment)
            #expect(resetAll.stdout == "removed counter's state (2 keys)\n", "\(resetAll.stderr)")
            #expect(
                try await space.run("state", "show", "counter", environment: environment).stdout
                    == "counter has no state\n")
            #expect(
                try await space.run("state", "show", environment: environment).stdout.hasPrefix(
                    "no macro has state yet (redis://:REDACTED@127.0.0.1:\(server.port)/0"))
        }
    }

    @Test("a run that raises commits neither its state nor its rows; SIGTERM mid-run leaves the state as it was")
    func failedAndStoppedRuns() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: [
                "counter.py": Self.counter,
                "fail.py": """
                import apimacro
                apimacro.state["n"] = 100
                apimacro.output([{"id": 1}], to="rows.db", table="t", key="id")
                raise RuntimeError("boom")

                """,
                "slow.py": """
                import apimacro
                apimacro.state["n"] = apimacro.state.get("n", 0) + 50
                open("ready", "w").close()
                apimacro.sleep(600)

                """,
            ])
            defer { space.remove() }
            let environment = Self.environment(server, home: space.url.appendingPathComponent("home"))
            #expect(try await space.run("run", "counter.py", environment: environment).stdout == "1\n")
            let failed = try await space.run("run", "--state-key", "counter", "fail.py", environment: environment)
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("RuntimeError: boom"), "\(failed.stderr)")
            #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("rows.db").path))
            let ready = space.url.appendingPathComponent("ready")
            let stopped = try await space.run("run", "--state-key", "counter", "slow.py", environment: environment) {
                process in
                try await waitUntil("the macro's ready file") { FileManager.default.fileExists(atPath: ready.path) }
                kill(process.processIdentifier, SIGTERM)
            }
            #expect(stopped.status == 128 + SIGTERM, "\(stopped.stderr)")
            #expect(
                try await space.run("state", "export", "counter", "n", environment: environment).stdout == "1\n")
            #expect(try await space.run("run", "counter.py", environment: environment).stdout == "2\n")
        }
    }

    /// A macro that reads its bookmark, says so in `read-TAG`, waits for `go-TAG`, then moves the
    /// bookmark and upserts a row into `rows.db`.
    @Test("two machines race on one bookmark: the first commits, the second fails clearly and writes nothing")
    func bookmarkCompareAndSet() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: ["sync.py": BookmarkRacer.source(to: "rows.db")])
            defer { space.remove() }
            let environmentA = Self.environment(server, home: space.url.appendingPathComponent("a"))
            let environmentB = Self.environment(server, home: space.url.appendingPathComponent("b"))
            async let first = Binary.run(["run", "sync.py", "A"], in: space.url, environment: environmentA)
            async let second = Binary.run(["run", "sync.py", "B"], in: space.url, environment: environmentB)
            try await space.waitFor("read-A")
            try await space.waitFor("read-B")
            try space.write("go-A", "")
            let one = try await first
            try space.write("go-B", "")
            let two = try await second
            #expect(one.status == 0 && one.stdout == "A 1\n", "\(one.stderr)")
            #expect(two.status == 1, "\(two.stdout)\(two.stderr)")
            #expect(two.stderr.contains("the state of sync was committed by another run"), "\(two.stderr)")
            #expect(
                two.stderr.contains(
                    #"(version 0, now 1), so this run's changes to "cursor", "by" were refused; "#
                        + "nothing was written, neither state nor rows"), "\(two.stderr)")
            Self.expectNoSecret(two)
            #expect(
                try await StateEndToEndTests.query(space, "rows.db", "SELECT id, by FROM synced ORDER BY id")
                    == #"[[1, "A"]]"#)
            let export = try await Binary.run(["state", "export", "sync"], in: space.url, environment: environmentB)
            #expect(export.stdout == "{\n  \"by\": \"A\",\n  \"cursor\": 1\n}\n", "\(export.stderr)")
            // The next run on machine B continues from where A committed.
            let again = try await Binary.run(["run", "sync.py", "B"], in: space.url, environment: environmentB)
            #expect(again.stdout == "B 2\n", "\(again.stderr)")
        }
    }

    /// An incremental macro: upserts the three rows past its bookmark into `rows.db`, then moves it.
    static let incremental = """
        import apimacro
        cursor = apimacro.state.get("cursor", 0)
        rows = [{"id": i, "v": f"r{i}"} for i in range(cursor + 1, cursor + 4)]
        apimacro.output(rows, to="rows.db", table="items", key="id")
        apimacro.state["cursor"] = cursor + 3
        print(cursor + 3)

        """

    /// Holds `rows.db` locked (`BEGIN EXCLUSIVE`) from `locked` appearing until `release` does.
    static let sqliteHolder = """
        import os, sqlite3, time
        db = sqlite3.connect("rows.db", isolation_level=None)
        db.execute("BEGIN EXCLUSIVE")
        open("locked", "w").close()
        while not os.path.exists("release"):
            time.sleep(0.02)
        db.execute("ROLLBACK")

        """

    /// Watches Redis's `MONITOR` (port, password, text): writes `seen` when a command holding the
    /// text arrives.
    static let monitor = """
        import socket, sys
        port, password, want = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
        connection = socket.create_connection(("127.0.0.1", port))
        replies = connection.makefile("rb")
        connection.sendall(b"AUTH " + password.encode() + b"\\r\\n")
        assert replies.readline().startswith(b"+OK")
        connection.sendall(b"MONITOR\\r\\n")
        assert replies.readline().startswith(b"+OK")
        open("monitoring", "w").close()
        for line in replies:
            if want in line:
                open("seen", "w").close()
                break

        """

    @Test("rows committed but the state's compare-and-set lost: the bookmark stays, the rerun doubles nothing")
    func rowsBeforeState() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: [
                "inc.py": Self.incremental, "holder.py": Self.sqliteHolder, "monitor.py": Self.monitor,
            ])
            defer { space.remove() }
            let environmentA = Self.environment(server, home: space.url.appendingPathComponent("a"))
            let environmentB = Self.environment(server, home: space.url.appendingPathComponent("b"))
            let python = URL(fileURLWithPath: "/usr/bin/python3")
            #expect(try await space.run("run", "inc.py", environment: environmentA).stdout == "3\n")
            // Machine A's next commit: its version compared (the monitor sees it), then its rows
            // wait for the lock the holder keeps on rows.db.
            async let holder = Binary.run(["holder.py"], in: space.url, executable: python)
            try await space.waitFor("locked")
            async let watcher = Binary.run(
                ["monitor.py", String(server.port), Self.password, ##""HGET" "apimacro:state:inc" "#version""##],
                in: space.url, executable: python)
            try await space.waitFor("monitoring")
            async let stalled = Binary.run(
                ["run", "--timeout", "600", "inc.py"], in: space.url, environment: environmentA)
            try await space.waitFor("seen")
            // Meanwhile machine B commits the macro's state (another key: the bookmark stays 3).
            let other = try await space.run(
                "run", "--state-key", "inc", "-c", "import apimacro; apimacro.state['note'] = 'b'",
                environment: environmentB)
            #expect(other.status == 0, "\(other.stderr)")
            try space.write("release", "")
            let (held, watched, lost) = try await (holder, watcher, stalled)
            #expect(held.status == 0 && watched.status == 0, "\(held.stderr)\(watched.stderr)")
            #expect(lost.status == 1, "\(lost.stdout)\(lost.stderr)")
            #expect(lost.stderr.contains("the state of inc was committed by another run"), "\(lost.stderr)")
            #expect(
                lost.stderr.contains(
                    #"so this run's change to "cursor" was refused; "#
                        + "its state was not written, but its 3 rows were (upserted by their keys: running again writes "
                        + "the same rows over them, not twice)"),
                "\(lost.stderr)")
            Self.expectNoSecret(lost)
            let rows = "SELECT count(*), count(DISTINCT id), max(id) FROM items"
            #expect(try await StateEndToEndTests.query(space, "rows.db", rows) == "[[6, 6, 6]]")
            #expect(
                try await space.run("state", "export", "inc", "cursor", environment: environmentA).stdout == "3\n")
            // The rerun reads the old bookmark and upserts the same rows again: none doubled.
            let again = try await space.run("run", "inc.py", environment: environmentA)
            #expect(again.stdout == "6\n", "\(again.stderr)")
            #expect(try await StateEndToEndTests.query(space, "rows.db", rows) == "[[6, 6, 6]]")
            #expect(try await space.run("run", "inc.py", environment: environmentA).stdout == "9\n")
            #expect(try await StateEndToEndTests.query(space, "rows.db", rows) == "[[9, 9, 9]]")
        }
    }

    @Test("a second run of the same macro on one machine waits for the first to commit: no update is lost")
    func concurrentRunsWait() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: ["holder.py": StateEndToEndTests.holder, "counter.py": Self.counter])
            defer { space.remove() }
            let environment = Self.environment(server, home: space.url.appendingPathComponent("home"))
            async let first = space.run("run", "holder.py", environment: environment)
            try await space.waitFor("holding")
            async let second = space.run("run", "--state-key", "holder", "counter.py", environment: environment)
            try await StateEndToEndTests.waitForStderr(space, containing: "waiting for another run of holder")
            try space.write("go", "")
            let (one, two) = try await (first, second)
            #expect(one.status == 0 && one.stdout == "1\n", "\(one.stderr)")
            #expect(two.status == 0 && two.stdout == "2\n", "\(two.stderr)")
        }
    }

    @Test("an unreachable Redis fails the run before the macro starts or any request is sent, password redacted")
    func unreachable() async throws {
        try await Workspace.withServer(files: [:]) { http, space in
            // Refused at once, and taken by no other test's server meanwhile.
            let closed = try ClosedPort()
            defer { withExtendedLifetime(closed) {} }
            try space.write(
                "fetch.py",
                pythonTouch("started") + "import apimacro\napimacro.request('GET', '\(http.baseURL)/users/octocat')\n")
            let environment = [
                "APIMACRO_STATE": "redis",
                "APIMACRO_SHARED_STATE": "redis://:\(Self.password)@127.0.0.1:\(closed.port)/0",
            ]
            let result = try await space.run("run", "fetch.py", environment: environment)
            #expect(result.status != 0)
            #expect(
                result.stderr.contains(
                    "APIMACRO_STATE: cannot reach the shared-state Redis at redis://:REDACTED@127.0.0.1:\(closed.port)/0"
                ), "\(result.stderr)")
            #expect(result.stderr.contains("Start the server"), "\(result.stderr)")
            Self.expectNoSecret(result)
            #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("started").path))
            #expect(http.requests.isEmpty)
            let show = try await space.run("state", "show", environment: environment)
            #expect(show.status != 0)
            #expect(show.stderr.contains("cannot reach the shared-state Redis"), "\(show.stderr)")
            Self.expectNoSecret(show)
            // redis without a shared-state server to put the state in.
            let none = try await space.run("run", "-c", "print(1)", environment: ["APIMACRO_STATE": "redis"])
            #expect(none.status == 2)
            #expect(none.stderr.contains("set APIMACRO_SHARED_STATE"), "\(none.stderr)")
            #expect(none.stdout.isEmpty)
        }
    }
}
