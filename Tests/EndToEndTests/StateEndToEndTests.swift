import Foundation
import TestSupport
import Testing

/// Issue 38, first part: `apimacro.state` between runs, committed only when a run succeeds;
/// two runs of one macro at once; `apimacro.output(to=)` and `run --output`; `state show |
/// reset | export`; each bad input.
///
/// Every wait is for an event (a file a macro writes, a line on stderr), never a duration.
@Suite("state between runs and rows into files (issue 38)")
struct StateEndToEndTests {
    /// A macro that counts its runs in `apimacro.state["n"]`.
    static let counter = """
        import apimacro
        apimacro.state["n"] = apimacro.state.get("n", 0) + 1
        print(apimacro.state["n"])

        """

    /// The rows of `sql` in the SQLite file `file`, as JSON text (Debian's own Python reads it).
    static func query(_ space: Workspace, _ file: String, _ sql: String) async throws -> String {
        let result = try await Binary.run(
            [
                "-c",
                "import json, sqlite3, sys; print(json.dumps(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall()))",
                file, sql,
            ], in: space.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The state file of a workspace (its HOME's `.config/apimacro`).
    static func stateFile(_ space: Workspace) -> URL {
        space.url.appendingPathComponent(".config/apimacro/state.db")
    }

    @Test("state persists across runs in an owner-only file; show and export print it, reset forgets it")
    func acrossRuns() async throws {
        let space = try Workspace(files: ["counter.py": Self.counter])
        defer { space.remove() }
        for expected in 1...3 {
            let run = try await space.run("run", "counter.py")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == "\(expected)\n")
        }
        let mode =
            try FileManager.default.attributesOfItem(atPath: Self.stateFile(space).path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // WAL mode: its side files as private as the state file.
        for suffix in ["-wal", "-shm"] {
            let side = Self.stateFile(space).path + suffix
            guard FileManager.default.fileExists(atPath: side) else { continue }
            #expect(try FileManager.default.attributesOfItem(atPath: side)[.posixPermissions] as? Int == 0o600)
        }
        #expect(
            try await Self.query(space, Self.stateFile(space).path, "PRAGMA journal_mode") == #"[["wal"]]"#)
        let other = try await space.run(
            "run", "--state-key", "counter", "-c",
            "import apimacro; apimacro.state['cursor'] = {'at': '2024-01-01', 'ids': [1, 2]}")
        #expect(other.status == 0, "\(other.stderr)")
        let show = try await space.run("state", "show", "counter")
        #expect(show.status == 0, "\(show.stderr)")
        let lines = show.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines.first?.hasPrefix("cursor  {\"at\":\"2024-01-01\",\"ids\":[1,2]}  committed ") == true,
            "\(show.stdout)")
        // The key column as wide as "cursor", the value column as wide as its JSON (31).
        let padded = "n" + String(repeating: " ", count: 5) + "  3" + String(repeating: " ", count: 30) + "  committed "
        #expect(lines.last?.hasPrefix(padded) == true, "\(show.stdout)")
        let all = try await space.run("state", "show")
        #expect(all.stdout.hasPrefix("counter  2 keys  committed "), "\(all.stdout)")
        let export = try await space.run("state", "export", "counter.py")
        #expect(export.stdout == "{\n  \"cursor\": {\"at\":\"2024-01-01\",\"ids\":[1,2]},\n  \"n\": 3\n}\n")
        let one = try await space.run("state", "export", "counter", "n")
        #expect(one.stdout == "3\n")
        let reset = try await space.run("state", "reset", "counter", "n")
        #expect(reset.stdout == "removed n from counter's state\n")
        #expect(try await space.run("run", "counter.py").stdout == "1\n")
        let resetAll = try await space.run("state", "reset", "counter")
        #expect(resetAll.stdout == "removed counter's state (2 keys)\n")
        #expect(try await space.run("state", "show", "counter").stdout == "counter has no state\n")
    }

    @Test(
        "a run that raises, exits non-zero or times out commits neither its state nor its rows",
        arguments: [
            "raise RuntimeError('boom')", "import sys; sys.exit(3)",
            "open('ready', 'w').close(); apimacro.sleep(600)",
        ])
    func failedRunCommitsNothing(ending: String) async throws {
        let space = try Workspace(files: [
            "counter.py": Self.counter,
            "fail.py": """
            import apimacro
            apimacro.state["n"] = 100
            apimacro.output([{"id": 1}], to="rows.db", table="t", key="id")
            apimacro.output([{"id": 1}], to="rows.csv")
            \(ending)

            """,
        ])
        defer { space.remove() }
        #expect(try await space.run("run", "counter.py").stdout == "1\n")
        let failed = try await space.run("run", "--state-key", "counter", "--timeout", "5", "fail.py")
        #expect(failed.status != 0)
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("rows.db").path))
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("rows.csv").path))
        #expect(try await space.run("run", "counter.py").stdout == "2\n")
    }

    @Test("SIGTERM or Ctrl-C after the state was set leaves the state as it was", arguments: [SIGTERM, SIGINT])
    func sigtermMidRun(signal: Int32) async throws {
        let space = try Workspace(files: [
            "counter.py": Self.counter,
            "slow.py": """
            import apimacro
            apimacro.state["n"] = apimacro.state.get("n", 0) + 50
            open("ready", "w").close()
            apimacro.sleep(600)

            """,
        ])
        defer { space.remove() }
        #expect(try await space.run("run", "counter.py").stdout == "1\n")
        let ready = space.url.appendingPathComponent("ready")
        let stopped = try await space.run("run", "--state-key", "counter", "slow.py", defaultSIGINT: true) { process in
            try await waitUntil("the macro's ready file") { FileManager.default.fileExists(atPath: ready.path) }
            kill(process.processIdentifier, signal)
        }
        #expect(stopped.status == 128 + signal, "\(stopped.stderr)")
        #expect(try await space.run("state", "export", "counter", "n").stdout == "1\n")
    }

    /// The macro the concurrency tests run: it reads the state, says so in a file, waits for a
    /// `go` file from the test, then counts.
    static let holder = """
        import apimacro, os
        n = apimacro.state.get("n", 0)
        open("holding", "w").close()
        while not os.path.exists("go"):
            apimacro.sleep(0.02)
        apimacro.state["n"] = n + 1
        print(apimacro.state["n"])

        """

    /// Waits until one of the workspace's captured stderr files (`Binary.run` writes them there)
    /// holds `text`.
    static func waitForStderr(_ space: Workspace, containing text: String) async throws {
        try await waitUntil("stderr to say \(text)") {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: space.url.path)) ?? []
            return names.filter { $0.hasPrefix(".stderr-") }.contains { name in
                let content = try? String(contentsOf: space.url.appendingPathComponent(name), encoding: .utf8)
                return content?.contains(text) == true
            }
        }
    }

    @Test("a second run of the same macro waits for the first to commit: no update is lost")
    func concurrentRunsWait() async throws {
        let space = try Workspace(files: ["holder.py": Self.holder, "counter.py": Self.counter])
        defer { space.remove() }
        async let first = space.run("run", "holder.py")
        try await space.waitFor("holding")
        async let second = space.run("run", "--state-key", "holder", "counter.py")
        try await Self.waitForStderr(space, containing: "waiting for another run of holder")
        try space.write("go", "")
        let (one, two) = try await (first, second)
        #expect(one.status == 0 && one.stdout == "1\n", "\(one.stderr)")
        #expect(two.status == 0 && two.stdout == "2\n", "\(two.stderr)")
        #expect(try await space.run("state", "export", "holder", "n").stdout == "2\n")
    }

    @Test("a second run that waits past its --timeout fails clearly and changes nothing")
    func concurrentRunTimesOut() async throws {
        let space = try Workspace(files: ["holder.py": Self.holder, "counter.py": Self.counter])
        defer { space.remove() }
        async let first = space.run("run", "holder.py")
        try await space.waitFor("holding")
        let second = try await space.run("run", "--timeout", "4", "--state-key", "holder", "counter.py")
        try space.write("go", "")
        #expect(second.status == 1)
        #expect(
            second.stderr.contains("another run of holder holds its state and did not finish within"),
            "\(second.stderr)")
        #expect(second.stderr.contains("raise --timeout"))
        let one = try await first
        #expect(one.stdout == "1\n", "\(one.stderr)")
        #expect(try await space.run("state", "export", "holder", "n").stdout == "1\n")
    }

    @Test("-c and standard input have state only with --state-key; an unstorable value is a TypeError naming its key")
    func keysAndValues() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let noKey = try await space.run("run", "-c", "import apimacro; apimacro.state['a'] = 1")
        #expect(noKey.status == 1)
        #expect(noKey.stderr.contains("--state-key NAME"), "\(noKey.stderr)")
        let stdin = try await space.run(
            "run", "--state-key", "piped", "-",
            stdin: "import apimacro\napimacro.state['a'] = [1, 2.5, None, True, {'b': 'c'}]\n")
        #expect(stdin.status == 0, "\(stdin.stderr)")
        #expect(try await space.run("state", "export", "piped", "a").stdout == "[1,2.5,null,true,{\"b\":\"c\"}]\n")
        let bad = try await space.run(
            "run", "--state-key", "piped", "-",
            stdin: "import apimacro\napimacro.state['ok'] = 1\napimacro.state['tags'] = {'a', 'b'}\n")
        #expect(bad.status == 1)
        #expect(
            bad.stderr.contains("TypeError: cannot store apimacro.state['tags']: a set is not a JSON value"),
            "\(bad.stderr)")
        #expect(bad.stderr.contains("line 3"), "\(bad.stderr)")
        #expect(try await space.run("state", "show", "piped").stdout.split(separator: "\n").count == 1)
        let commitEarly = try await space.run(
            "run", "--state-key", "early", "-",
            stdin:
                "import apimacro\napimacro.state['page'] = 1\napimacro.state.commit()\napimacro.state['page'] = 2\nraise SystemExit(4)\n"
        )
        #expect(commitEarly.status == 4)
        #expect(try await space.run("state", "export", "early", "page").stdout == "1\n")
    }

    @Test("a plugin's macro is keyed plugin/macro; the REPL has state with --state-key and commits when it ends well")
    func pluginAndRepl() async throws {
        let manifest = try String(
            contentsOf: ExampleReplayTests.repository.appendingPathComponent("plugins/hackernews/plugin.toml"),
            encoding: .utf8)
        let space = try Workspace(files: [
            "plugins/hackernews/plugin.toml": manifest, "plugins/hackernews/macros/tally.py": Self.counter,
        ])
        defer { space.remove() }
        let plugins = space.url.appendingPathComponent("plugins").path
        let run = try await space.run("run", "tally", environment: ["APIMACRO_PLUGINS": plugins])
        #expect(run.status == 0 && run.stdout == "1\n", "\(run.stderr)")
        #expect(try await space.run("state", "export", "hackernews/tally", "n").stdout == "1\n")
        let path = try await space.run("state", "export", "plugins/hackernews/macros/tally.py", "n")
        #expect(path.stdout == "1\n", "\(path.stderr)")
        let session =
            "import apimacro\napimacro.state['n'] = apimacro.state.get('n', 0) + 10\nprint(apimacro.state['n'])\n"
        let repl = try await space.run("repl", "--state-key", "hackernews/tally", stdin: session)
        #expect(repl.status == 0 && repl.stdout == "11\n", "\(repl.stderr)")
        #expect(try await space.run("state", "export", "hackernews/tally", "n").stdout == "11\n")
        let failing = try await space.run("repl", "--state-key", "hackernews/tally", stdin: session + "1/0\n")
        #expect(failing.status == 1)
        #expect(try await space.run("state", "export", "hackernews/tally", "n").stdout == "11\n")
        // A `:run` inside the session runs with the macro's own state; the session's goes on after it.
        try space.write("counter.py", Self.counter)
        let mixed = try await space.run(
            "repl", "--state-key", "session",
            stdin: "import apimacro\napimacro.state['a'] = 1\n:run counter.py\napimacro.state['b'] = 2\n")
        #expect(mixed.status == 0 && mixed.stdout == "1\n", "\(mixed.stderr)")
        #expect(try await space.run("state", "export", "counter").stdout == "{\n  \"n\": 1\n}\n")
        #expect(try await space.run("state", "export", "session").stdout == "{\n  \"b\": 2\n}\n")
        let noKey = try await space.run("repl", stdin: "import apimacro\napimacro.state['x'] = 1\n")
        #expect(noKey.stderr.contains("give one with --state-key NAME"), "\(noKey.stderr)")
    }

    @Test("upserts evolve the table: new columns, kept fields, ints widened, bools 0/1, nested JSON, a run table")
    func upsertEvolves() async throws {
        let space = try Workspace(files: [
            "one.py": """
            import apimacro
            apimacro.output([{"id": 1, "login": "a", "score": 1.5, "admin": True}], to="stars.db", table="stars", key="id")

            """,
            "two.py": """
            import apimacro
            apimacro.output(
                [{"id": 1, "score": 7, "user": {"x": [1, 2]}}, {"id": 2, "login": "b", "admin": False}],
                to="stars.db", table="stars", key="id")

            """,
            "clash.py": """
            import apimacro
            apimacro.output([{"id": 3, "score": "high"}], to="stars.db", table="stars", key="id")

            """,
        ])
        defer { space.remove() }
        #expect(try await space.run("run", "one.py").status == 0)
        let two = try await space.run("run", "two.py")
        #expect(two.status == 0, "\(two.stderr)")
        #expect(
            try await Self.query(
                space, "stars.db", "SELECT id, login, score, typeof(score), admin, user FROM stars ORDER BY id")
                == #"[[1, "a", 7.0, "real", 1, "{\"x\":[1,2]}"], [2, "b", null, "null", 0, null]]"#)
        #expect(
            try await Self.query(space, "stars.db", "SELECT macro, exit, rows_written FROM _apimacro_runs ORDER BY id")
                == #"[["one", 0, 1], ["two", 0, 2]]"#)
        let before = try Data(contentsOf: space.url.appendingPathComponent("stars.db"))
        let clash = try await space.run("run", "clash.py")
        #expect(clash.status == 1)
        // Found when the rows are given (a ValueError) or, when the file could not be read at
        // once without waiting (a lock, a busy machine), at the commit: the same words either way.
        #expect(
            clash.stderr.contains("column \"score\" of table \"stars\" holds REAL, but row 1 gives text"),
            "\(clash.stderr)")
        #expect(try Data(contentsOf: space.url.appendingPathComponent("stars.db")) == before)
    }

    @Test("CSV and JSON Lines append, mode=\"replace\" rewrites; run --output takes what output() prints")
    func filesAndRunOutput() async throws {
        let space = try Workspace(files: [
            "rows.py": """
            import apimacro, sys
            mode = sys.argv[1]
            apimacro.output([{"a": 1, "b": [1]}], to="x.csv", mode=mode)
            apimacro.output([{"a": 1, "b": [1]}], to="x.jsonl", mode=mode)

            """,
            "print-rows.py": """
            import apimacro
            apimacro.output([{"id": 1, "v": "x"}, {"id": 2, "v": None}])

            """,
        ])
        defer { space.remove() }
        for _ in 0..<2 { #expect(try await space.run("run", "rows.py", "append").status == 0) }
        let csvPath = space.url.appendingPathComponent("x.csv")
        let jsonlPath = space.url.appendingPathComponent("x.jsonl")
        #expect(try String(contentsOf: csvPath, encoding: .utf8) == "a,b\r\n1,[1]\r\n1,[1]\r\n")
        #expect(try String(contentsOf: jsonlPath, encoding: .utf8) == "{\"a\":1,\"b\":[1]}\n{\"a\":1,\"b\":[1]}\n")
        #expect(try await space.run("run", "rows.py", "replace").status == 0)
        #expect(try String(contentsOf: csvPath, encoding: .utf8) == "a,b\r\n1,[1]\r\n")
        #expect(try String(contentsOf: jsonlPath, encoding: .utf8) == "{\"a\":1,\"b\":[1]}\n")
        let csv = try await space.run("run", "--output", "out.csv", "print-rows.py")
        #expect(csv.status == 0 && csv.stdout.isEmpty, "\(csv.stderr)")
        #expect(
            try String(contentsOf: space.url.appendingPathComponent("out.csv"), encoding: .utf8)
                == "id,v\r\n1,x\r\n2,\r\n")
        let json = try await space.run("run", "print-rows.py", "--output", "out.json")
        #expect(json.status == 0 && json.stdout.isEmpty, "\(json.stderr)")
        #expect(
            try String(contentsOf: space.url.appendingPathComponent("out.json"), encoding: .utf8)
                == "[\n{\"id\":1,\"v\":\"x\"},\n{\"id\":2,\"v\":null}\n]\n")
        for _ in 0..<2 {
            let db = try await space.run("run", "--output", "out.db", "--key", "id", "print-rows.py")
            #expect(db.status == 0 && db.stdout.isEmpty, "\(db.stderr)")
        }
        #expect(
            try await Self.query(space, "out.db", "SELECT id, v FROM print_rows ORDER BY id")
                == #"[[1, "x"], [2, null]]"#)
    }

    @Test(
        "bad input: an --output that is not SQLite or not writable stops before the macro runs; names and rows are checked"
    )
    func badInput() async throws {
        let space = try Workspace(files: [
            "notes.db": "these are notes, not a database\n",
            "touch.py": "import apimacro\n" + pythonTouch("ran") + "apimacro.output([{'id': 1}])\n",
            "names.py": """
            import apimacro, sys
            table, key, rows = sys.argv[1], sys.argv[2], eval(sys.argv[3])
            apimacro.output(rows, to="t.db", table=table, key=key)

            """,
        ])
        defer { space.remove() }
        let notSQLite = try await space.run("run", "--output", "notes.db", "touch.py")
        #expect(notSQLite.status == 2)
        #expect(
            notSQLite.stderr.contains("notes.db is not a SQLite database; it was left untouched"), "\(notSQLite.stderr)"
        )
        #expect(
            try String(contentsOf: space.url.appendingPathComponent("notes.db"), encoding: .utf8)
                == "these are notes, not a database\n")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran").path))
        let missing = try await space.run("run", "--output", "no/such/folder/x.csv", "touch.py")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("does not exist"), "\(missing.stderr)")
        let unknown = try await space.run("run", "--output", "x.txt", "touch.py")
        #expect(unknown.status == 2 && unknown.stderr.contains("cannot tell the format of x.txt"), "\(unknown.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran").path))
        let cases: [(String, String, String, String)] = [
            ("bad name", "id", "[{'id': 1}]", "ValueError: table \"bad name\" is not an identifier"),
            ("t", "id; drop", "[{'id': 1}]", "ValueError: key \"id; drop\" is not an identifier"),
            ("t", "id", "[{'id': 1}, [1, 2]]", "TypeError: output() row 2 is a list, not a dict"),
            ("t", "id", "[{'name': 'x'}]", "ValueError: row 1 has no \"id\""),
            ("t", "id", "[{'id': object()}]", "TypeError: row 1 field 'id' is of type object"),
        ]
        for (table, key, rows, message) in cases {
            let run = try await space.run("run", "names.py", table, key, rows)
            #expect(run.status == 1)
            #expect(run.stderr.contains(message), "\(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("t.db").path))
    }

    @Test("a full disk at the commit fails the run; the state and the other files stay as they were")
    func diskFull() async throws {
        let space = try Workspace(files: [
            "counter.py": Self.counter,
            "full.py": """
            import apimacro
            apimacro.state["n"] = 100
            apimacro.output([{"id": 1}], to="rows.csv")
            apimacro.output([{"id": 1}], to="full.jsonl")

            """,
        ])
        defer { space.remove() }
        // /dev/full answers every write with ENOSPC, as a full disk does.
        try FileManager.default.createSymbolicLink(
            atPath: space.url.appendingPathComponent("full.jsonl").path, withDestinationPath: "/dev/full")
        #expect(try await space.run("run", "counter.py").stdout == "1\n")
        let full = try await space.run("run", "--state-key", "counter", "full.py")
        #expect(full.status == 1)
        #expect(full.stderr.contains("succeeded, but its state and rows were not saved"), "\(full.stderr)")
        #expect(full.stderr.contains("full.jsonl") && full.stderr.contains("nothing was written"), "\(full.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("rows.csv").path))
        #expect(try await space.run("state", "export", "counter", "n").stdout == "1\n")
    }

    @Test("a run killed between its rows' commit and its state's keeps the old bookmark; the rerun doubles nothing")
    func killedBetweenRowsAndState() async throws {
        let space = try Workspace(files: [
            "inc.py": RedisStateEndToEndTests.incremental,
            // Holds the state file's write lock (WAL) from `locked` appearing until `release` does.
            "hold.py": """
            import os, sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            open("locked", "w").close()
            while not os.path.exists("release"):
                time.sleep(0.02)
            db.execute("ROLLBACK")

            """,
        ])
        defer { space.remove() }
        #expect(try await space.run("run", "inc.py").stdout == "3\n")
        async let holder = Binary.run(
            ["hold.py", Self.stateFile(space).path], in: space.url, executable: URL(fileURLWithPath: "/usr/bin/python3")
        )
        try await space.waitFor("locked")
        let rows = "SELECT count(*), count(DISTINCT id), max(id) FROM items"
        // The next run commits its rows into rows.db, then waits for the state file: killed there.
        let killed = try await space.run("run", "--timeout", "600", "inc.py") { process in
            let deadline = Date().addingTimeInterval(600)
            while try await Self.query(space, "rows.db", rows) != "[[6, 6, 6]]" {
                guard Date() < deadline else { throw WorkspaceError("gave up waiting for the rows") }
                try await Task.sleep(for: .milliseconds(20))
            }
            kill(process.processIdentifier, SIGKILL)
        }
        #expect(killed.status != 0)
        try space.write("release", "")
        #expect(try await holder.status == 0)
        #expect(try await space.run("state", "export", "inc", "cursor").stdout == "3\n")
        // The rerun reads the old bookmark and upserts the same rows again: none doubled.
        #expect(try await space.run("run", "inc.py").stdout == "6\n")
        #expect(try await Self.query(space, "rows.db", rows) == "[[6, 6, 6]]")
    }

    @Test(
        "a database another process holds locked: the commit waits up to --timeout, then fails clearly, writing nothing"
    )
    func lockedDatabase() async throws {
        let space = try Workspace(files: [
            "write.py": "import apimacro\napimacro.output([{'id': 2}], to='t.db', table='t', key='id')\n",
            "seed.py": "import apimacro\napimacro.output([{'id': 1}], to='t.db', table='t', key='id')\n",
            "hold.py": """
            import os, sqlite3, time
            db = sqlite3.connect("t.db", isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            open("locked", "w").close()
            while not os.path.exists("release"):
                time.sleep(0.02)
            db.execute("ROLLBACK")

            """,
        ])
        defer { space.remove() }
        #expect(try await space.run("run", "seed.py").status == 0)
        async let holder = Binary.run(["hold.py"], in: space.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        try await space.waitFor("locked")
        let blocked = try await space.run("run", "--timeout", "2", "write.py")
        try space.write("release", "")
        _ = try await holder
        #expect(blocked.status == 1)
        #expect(blocked.stderr.contains("is locked by another process (waited 2 s)"), "\(blocked.stderr)")
        #expect(try await Self.query(space, "t.db", "SELECT id FROM t") == "[[1]]")
    }

    @Test("incremental yields only what is past the bookmark, once; the bookmark moves only when the run commits")
    func incremental() async throws {
        let space = try Workspace(files: [
            "sync.py": """
            import apimacro, json, sys
            items = json.load(open("items.json"))
            new = list(apimacro.incremental(items, cursor="updated_at", key="items"))
            print(",".join(str(item["id"]) for item in new) or "-")
            if len(sys.argv) > 1:
                raise SystemExit(1)

            """,
            "items.json":
                #"[{"id": 1, "updated_at": "2024-01-01T00:00:00Z"}, {"id": 2, "updated_at": "2024-01-02T00:00:00Z"}]"#,
            "late.py": """
            import apimacro, datetime, json
            items = json.load(open("items.json"))
            lag = datetime.timedelta(days=1)
            new = apimacro.incremental(items, cursor="updated_at", key="items", lag=lag)
            print(",".join(str(item["id"]) for item in new) or "-")

            """,
        ])
        defer { space.remove() }
        #expect(try await space.run("run", "sync.py").stdout == "1,2\n")
        #expect(try await space.run("run", "sync.py").stdout == "-\n")
        try space.write(
            "items.json",
            #"[{"id": 2, "updated_at": "2024-01-02T00:00:00Z"}, {"id": 3, "updated_at": "2024-01-02T00:00:00Z"}, {"id": 4, "updated_at": "2024-01-03T00:00:00Z"}]"#
        )
        #expect(try await space.run("run", "sync.py", "fail").stdout == "3,4\n")
        #expect(try await space.run("run", "sync.py").stdout == "3,4\n")
        #expect(try await space.run("run", "sync.py").stdout == "-\n")
        #expect(
            try await space.run("state", "export", "sync", "items").stdout
                == "{\"cursor\":\"2024-01-03T00:00:00Z\",\"seen\":[4]}\n")
        // lag re-reads a day before the bookmark, for writes that land late.
        #expect(try await space.run("run", "--state-key", "sync", "late.py").stdout == "2,3,4\n")
    }
}

/// `examples/github-stars-sync.py`: stargazers synced incrementally into SQLite.
@Suite("github-stars-sync: stargazers into SQLite, a second run adding nothing (issue 38)")
struct StarsSyncExampleTests {
    static let example = ExampleTests.examples.appendingPathComponent("github-stars-sync.py").path
    static let cassette = ExampleReplayTests.cassettes.appendingPathComponent("github-stars-sync.har").path

    @Test("replayed from its cassette with no token, twice in one place: 230 rows, then nothing new")
    func replayTwice() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let first = try await space.run("run", "--format", "csv", "--replay", Self.cassette, Self.example)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "repo,since,new,db,table\noctocat/Hello-World,,230,stars.db,stars\n")
        let second = try await space.run("run", "-v", "--format", "csv", "--replay", Self.cassette, Self.example)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == "repo,since,new,db,table\noctocat/Hello-World,2024-01-10T13:00:00Z,0,stars.db,stars\n")
        // It starts at the page the first run ended on.
        let requests = second.stderr.split(separator: "\n").filter { $0.contains("/stargazers?") }
        #expect(requests.count == 1 && requests.first?.contains("page=3") == true, "\(second.stderr)")
        #expect(
            try await StateEndToEndTests.query(
                space, "stars.db", "SELECT count(*), count(DISTINCT id), max(starred_at) FROM stars")
                == #"[[230, 230, "2024-01-10T13:00:00Z"]]"#)
        #expect(
            try await StateEndToEndTests.query(
                space, "stars.db", "SELECT requests, rows_written FROM _apimacro_runs ORDER BY id")
                == "[[3, 230], [1, 0]]")
    }

    @Test("against an unchanged source, the second run sends only a revalidation and adds nothing")
    func revalidatesOnly() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL]
        let first = try await space.run("run", "--format", "csv", Self.example, environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await space.run("run", "-v", "--format", "csv", Self.example, environment: environment)
        try await server.shutdown()
        #expect(second.stdout.hasSuffix(",0,stars.db,stars\n"), "\(second.stdout)\(second.stderr)")
        let lines = second.stderr.split(separator: "\n").filter { $0.contains("/stargazers?") }
        #expect(lines.count == 1, "\(second.stderr)")
        #expect(lines.allSatisfy { $0.hasSuffix("revalidated (304)") }, "\(second.stderr)")
    }
}
