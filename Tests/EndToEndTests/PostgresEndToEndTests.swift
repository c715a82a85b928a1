import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 38, past one machine: `apimacro.output(to="postgresql://…")`, `APIMACRO_DATABASE_URL`
/// and `APIMACRO_STATE=postgresql://…` against Debian's PostgreSQL server, which each test
/// starts on 127.0.0.1 and stops (`PostgresServer`).
///
/// Every wait is for an event (the server's readiness line, a file a macro writes), never a duration.
@Suite("PostgreSQL destinations and state (issue 38)", .timeLimit(.minutes(10)))
struct PostgresEndToEndTests {
    /// Starts a server for `body`, stopped afterwards however `body` ends.
    static func withServer(_ body: (PostgresServer) async throws -> Void) async throws {
        let server = try await PostgresServer.start()
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Checks that no output of `result` holds the server's password.
    static func expectNoPassword(_ result: RunResult, _ server: PostgresServer, _ comment: String = "") {
        #expect(!result.stdout.contains(server.password), "the password leaked to stdout \(comment)")
        #expect(!result.stderr.contains(server.password), "the password leaked to stderr \(comment)")
    }

    /// Upserts `rows` (Python source) into `stars` by `id` from the URL in argv[1].
    static let upsert = """
        import apimacro, sys, json
        rows = json.loads(sys.argv[2])
        apimacro.output(rows, to=sys.argv[1], table="stars", key="id")
        if len(sys.argv) > 3:
            raise RuntimeError(sys.argv[3])
        print(len(rows))

        """

    @Test("upserts into a new table, adds columns, keeps left-out fields, types bools, ints and nested values")
    func upsertAndEvolve() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: ["upsert.py": Self.upsert])
            defer { space.remove() }
            let url = server.url()
            let first = try await space.run(
                "run", "upsert.py", url,
                #"[{"id": 1, "name": "a", "ok": true, "score": 3}, {"id": 2, "name": "b", "score": 2.5, "tags": ["x", {"y": 1}]}]"#
            )
            #expect(first.status == 0, "\(first.stderr)")
            Self.expectNoPassword(first, server)
            let second = try await space.run(
                "run", "upsert.py", url, #"[{"id": 1, "score": 4}, {"id": 3, "name": "c", "stars": 10}]"#)
            #expect(second.status == 0, "\(second.stderr)")
            let columns = try await server.query(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'stars' "
                    + "ORDER BY ordinal_position")
            #expect(
                columns.split(separator: "\n") == [
                    "id|bigint", "name|text", "ok|boolean", "score|double precision", "tags|jsonb", "stars|bigint",
                ], "\(columns)")
            let rows = try await server.query(
                "SELECT id, name, ok, score, tags->1->>'y', stars FROM stars ORDER BY id")
            #expect(rows == "1|a|t|4||\n2|b||2.5|1|\n3|c||||10", "\(rows)")
            let runs = try await server.query("SELECT macro, exit, rows_written FROM _apimacro_runs ORDER BY id")
            #expect(runs == "upsert|0|2\nupsert|0|2", "\(runs)")
        }
    }

    @Test("run --output postgresql://… upserts what output() prints into a table named after the macro")
    func runOutput() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: [
                "gh-stars.py": "import apimacro\napimacro.output([{'id': 1, 'n': 'a'}, {'id': 2, 'n': 'b'}])\n"
            ])
            defer { space.remove() }
            for _ in 0..<2 {
                let result = try await space.run("run", "--output", server.url(), "--key", "id", "gh-stars.py")
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout.isEmpty)
                Self.expectNoPassword(result, server)
            }
            #expect(try await server.query("SELECT id, n FROM gh_stars ORDER BY id") == "1|a\n2|b")
        }
    }

    @Test("a type clash names the column; a run that fails after output() writes nothing")
    func clashAndFailedRun() async throws {
        try await Self.withServer { server in
            let space = try Workspace(files: ["upsert.py": Self.upsert])
            defer { space.remove() }
            let url = server.url()
            #expect(try await space.run("run", "upsert.py", url, #"[{"id": 1, "n": 5}]"#).status == 0)
            let clash = try await space.run("run", "upsert.py", url, #"[{"id": 2, "n": 6}, {"id": 3, "n": "x"}]"#)
            #expect(clash.status == 1)
            #expect(
                clash.stderr.contains(#"column "n" of table "stars" holds bigint, but row 2 gives text"#),
                "\(clash.stderr)")
            Self.expectNoPassword(clash, server)
            let failed = try await space.run("run", "upsert.py", url, #"[{"id": 4, "n": 7}]"#, "boom")
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("RuntimeError: boom"), "\(failed.stderr)")
            #expect(try await server.query("SELECT id, n FROM stars ORDER BY id") == "1|5")
            #expect(try await server.query("SELECT count(*) FROM _apimacro_runs") == "1")
        }
    }

    @Test("shards from several apimacro processes at once into one table: no row lost or doubled")
    func shards() async throws {
        try await Self.withServer { server in
            // Shard I writes ids I*60 ..< I*60+100: each overlaps the next by 40 rows.
            let shard = """
                import apimacro, os, sys
                i = int(sys.argv[1])
                rows = [{"id": n, "shard": i, "value": f"v{n}"} for n in range(i * 60, i * 60 + 100)]
                rows[0]["late"] = True
                apimacro.output(rows, table="items", key="id")
                print(len(rows))

                """
            let space = try Workspace(files: ["shard.py": shard])
            defer { space.remove() }
            let environment = ["APIMACRO_DATABASE_URL": server.url()]
            let count = 6
            let results = try await withThrowingTaskGroup(of: RunResult.self) { group in
                for index in 0..<count {
                    group.addTask {
                        try await Binary.run(
                            ["run", "shard.py", String(index)], in: space.url, environment: environment)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for result in results {
                #expect(result.status == 0, "\(result.stderr)")
                Self.expectNoPassword(result, server)
            }
            let expected = (count - 1) * 60 + 100
            let summary = try await server.query(
                "SELECT count(*), count(DISTINCT id), min(id), max(id), count(*) FILTER (WHERE value = 'v' || id) FROM items"
            )
            #expect(summary == "\(expected)|\(expected)|0|\(expected - 1)|\(expected)", "\(summary)")
            #expect(
                try await server.query("SELECT count(*), sum(rows_written) FROM _apimacro_runs")
                    == "\(count)|\(count * 100)")
        }
    }

    /// A macro that reads its bookmark, says so in `read-TAG`, waits for `go-TAG`, then moves the
    /// bookmark and writes a row.
    @Test("two machines race on one bookmark: the first commits, the second fails clearly and writes nothing")
    func bookmarkCompareAndSet() async throws {
        try await Self.withServer { server in
            // Two homes: two machines, each with its own lock folder, one database.
            let space = try Workspace(files: ["sync.py": BookmarkRacer.source()])
            defer { space.remove() }
            let environment = ["APIMACRO_STATE": server.url(), "APIMACRO_DATABASE_URL": server.url()]
            let homeA = space.url.appendingPathComponent("a")
            let homeB = space.url.appendingPathComponent("b")
            var environmentA = environment
            environmentA["APIMACRO_HOME"] = homeA.path
            var environmentB = environment
            environmentB["APIMACRO_HOME"] = homeB.path
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
            #expect(
                two.stderr.contains("the state of sync was committed by another run"), "\(two.stderr)")
            #expect(two.stderr.contains(#"so this run's changes to "cursor", "by" were refused"#), "\(two.stderr)")
            #expect(two.stderr.contains("nothing was written"), "\(two.stderr)")
            Self.expectNoPassword(two, server)
            #expect(try await server.query("SELECT id, by FROM synced ORDER BY id") == "1|A")
            let show = try await Binary.run(["state", "export", "sync"], in: space.url, environment: environmentB)
            #expect(show.stdout == "{\n  \"by\": \"A\",\n  \"cursor\": 1\n}\n", "\(show.stderr)")
            // The next run on machine B continues from where A committed.
            try space.write("go-B", "")
            let again = try await Binary.run(["run", "sync.py", "B"], in: space.url, environment: environmentB)
            #expect(again.stdout == "B 2\n", "\(again.stderr)")
            let reset = try await Binary.run(["state", "reset", "sync"], in: space.url, environment: environmentA)
            #expect(reset.stdout == "removed sync's state (2 keys)\n", "\(reset.stderr)")
        }
    }

    @Test(
        "state in PostgreSQL, rows in SQLite: a run killed after its rows' commit keeps the old bookmark; other macros commit meanwhile"
    )
    func rowsBeforeStateKilled() async throws {
        try await Self.withServer { server in
            // Holds the bookmark's row locked, from `locked` appearing until `release` does.
            let hold = """
                BEGIN;
                SELECT 1 FROM _apimacro_state WHERE macro = 'inc' AND key = 'cursor' FOR UPDATE;
                \\! touch locked; while [ ! -e release ]; do sleep 0.02; done
                ROLLBACK;

                """
            let space = try Workspace(files: ["inc.py": RedisStateEndToEndTests.incremental, "hold.sql": hold])
            defer { space.remove() }
            let environment = ["APIMACRO_STATE": server.url()]
            #expect(try await space.run("run", "inc.py", environment: environment).stdout == "3\n")
            let holder = try Spawned(
                "/usr/bin/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", server.url(), "-f", "hold.sql"],
                environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], directory: space.url.path)
            try await space.waitFor("locked")
            // The next run commits its rows into rows.db, then waits to write its bookmark: killed there.
            let waiting =
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                + "AND query LIKE 'INSERT INTO _apimacro_state (%'"
            let killed = try await space.run("run", "inc.py", environment: environment) { process in
                let deadline = Date().addingTimeInterval(600)
                while try await server.query(waiting) != "1" {
                    guard Date() < deadline else {
                        throw WorkspaceError("gave up waiting for the run to wait on the lock")
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
                // Its commit holds the state of inc only: another macro commits meanwhile.
                let other = try await space.run(
                    "run", "--timeout", "300", "--state-key", "other", "-c",
                    "import apimacro; apimacro.state['x'] = 1", environment: environment)
                #expect(other.status == 0, "\(other.stderr)")
                kill(process.processIdentifier, SIGKILL)
            }
            #expect(killed.status != 0)
            try space.write("release", "")
            #expect(await holder.exit().status == 0)
            let rows = "SELECT count(*), count(DISTINCT id), max(id) FROM items"
            #expect(try await StateEndToEndTests.query(space, "rows.db", rows) == "[[6, 6, 6]]")
            #expect(try await space.run("state", "export", "inc", "cursor", environment: environment).stdout == "3\n")
            // The rerun reads the old bookmark and upserts the same rows again: none doubled.
            #expect(try await space.run("run", "inc.py", environment: environment).stdout == "6\n")
            #expect(try await StateEndToEndTests.query(space, "rows.db", rows) == "[[6, 6, 6]]")
            #expect(try await space.run("run", "inc.py", environment: environment).stdout == "9\n")
            #expect(try await StateEndToEndTests.query(space, "rows.db", rows) == "[[9, 9, 9]]")
        }
    }

    @Test("state in SQLite, rows in PostgreSQL: a run killed after its rows' commit keeps the old bookmark")
    func rowsBeforeSQLiteStateKilled() async throws {
        try await Self.withServer { server in
            // A writer holding the state file (WAL) locked, from `locked` appearing until
            // `release` does: the state's commit waits for it.
            let reader = """
                import os, sqlite3, sys, time
                db = sqlite3.connect(sys.argv[1], isolation_level=None)
                db.execute("BEGIN IMMEDIATE")
                open("locked", "w").close()
                while not os.path.exists("release"):
                    time.sleep(0.02)
                db.execute("ROLLBACK")

                """
            let macro = RedisStateEndToEndTests.incremental.replacingOccurrences(
                of: #"to="rows.db", "#, with: "")
            let space = try Workspace(files: ["inc.py": macro, "reader.py": reader])
            defer { space.remove() }
            let home = space.url.appendingPathComponent("home")
            let environment = ["APIMACRO_DATABASE_URL": server.url(), "APIMACRO_HOME": home.path]
            #expect(try await space.run("run", "inc.py", environment: environment).stdout == "3\n")
            async let held = Binary.run(
                ["reader.py", home.appendingPathComponent("state.db").path], in: space.url,
                executable: URL(fileURLWithPath: "/usr/bin/python3"))
            try await space.waitFor("locked")
            // The next run's rows are committed in PostgreSQL, then its state file's commit waits:
            // killed there.
            let killed = try await space.run("run", "--timeout", "600", "inc.py", environment: environment) {
                process in
                let deadline = Date().addingTimeInterval(600)
                while try await server.query("SELECT count(*) FROM items") != "6" {
                    guard Date() < deadline else { throw WorkspaceError("gave up waiting for the rows") }
                    try await Task.sleep(for: .milliseconds(20))
                }
                kill(process.processIdentifier, SIGKILL)
            }
            #expect(killed.status != 0)
            try space.write("release", "")
            #expect(try await held.status == 0)
            #expect(try await space.run("state", "export", "inc", "cursor", environment: environment).stdout == "3\n")
            // The rerun reads the old bookmark and upserts the same rows again: none doubled.
            #expect(try await space.run("run", "inc.py", environment: environment).stdout == "6\n")
            let rows = "SELECT count(*), count(DISTINCT id), max(id) FROM items"
            #expect(try await server.query(rows) == "6|6|6")
        }
    }

    @Test(
        "an unreachable PostgreSQL fails the run before the macro starts or any request is sent, password redacted",
        arguments: ["APIMACRO_STATE", "APIMACRO_DATABASE_URL"])
    func unreachable(setting: String) async throws {
        try await Workspace.withServer(files: [:]) { http, space in
            // Refused at once, and taken by no other test's server meanwhile.
            let closed = try ClosedPort()
            let port = closed.port
            defer { withExtendedLifetime(closed) {} }
            let url = "postgresql://apimacro:hunter2-secret@127.0.0.1:\(port)/postgres"
            try space.write(
                "fetch.py",
                pythonTouch("started") + "import apimacro\napimacro.request('GET', '\(http.baseURL)/users/octocat')\n")
            let result = try await space.run("run", "fetch.py", environment: [setting: url])
            #expect(result.status != 0)
            #expect(
                result.stderr.contains(
                    "\(setting): cannot reach PostgreSQL at postgresql://apimacro:***@127.0.0.1:\(port)/postgres"),
                "\(result.stderr)")
            #expect(result.stderr.contains("Start the server, or fix the URL"), "\(result.stderr)")
            #expect(!result.stderr.contains("hunter2"))
            #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("started").path))
            #expect(http.requests.isEmpty)
        }
    }

    @Test("table and key names that are not identifiers, and bad settings, are refused with nothing written")
    func badNames() async throws {
        try await Self.withServer { server in
            let space = try Workspace()
            defer { space.remove() }
            let url = server.url()
            let cases: [(String, String)] = [
                (#"table="st-ars", key="id""#, #"table "st-ars" is not an identifier"#),
                (#"table="stars; drop table x", key="id""#, #"table "stars; drop table x" is not an identifier"#),
                (#"table="stars", key="i d""#, #"key "i d" is not an identifier"#),
                (#"table="stars", key="name""#, #"row 1 has no "name", the key of table "stars""#),
            ]
            for (arguments, message) in cases {
                let result = try await space.run(
                    "run", "-c", "import apimacro; apimacro.output([{'id': 1}], to='\(url)', \(arguments))")
                #expect(result.status == 1)
                #expect(result.stderr.contains("ValueError: " + message), "\(result.stderr)")
                Self.expectNoPassword(result, server)
            }
            #expect(try await server.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == "0")
            let bogus = try await space.run(
                "run", "-c", "print(1)", environment: ["APIMACRO_STATE": "mysql://root:pw@db/x"])
            #expect(bogus.status == 2)
            #expect(bogus.stderr.contains("APIMACRO_STATE must be sqlite"), "\(bogus.stderr)")
            #expect(bogus.stderr.contains("mysql://root:***@db/x"), "\(bogus.stderr)")
        }
    }
}
