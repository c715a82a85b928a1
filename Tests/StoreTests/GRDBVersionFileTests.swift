import Foundation
import Store
import Testing
import WebAPI

/// Files the GRDB version (up to e71ccfe) wrote, opened by the SQLite version as they are.
///
/// That version used no `DatabaseMigrator` (no `grdb_migrations` table): the state file was a
/// `DatabaseQueue` in WAL mode with `synchronous = NORMAL` whose commits ran `CREATE TABLE IF NOT
/// EXISTS main.state (…) WITHOUT ROWID`, and a destination file stayed in rollback-journal mode
/// with the rows' table and `_apimacro_runs`. The SQL below is that version's, word for word.
@Suite("state and destination files the GRDB version wrote")
struct GRDBVersionFileTests {
    @Test("a state file and a destination the GRDB version wrote open as they are, every key and row kept")
    func grdbFilesKept() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let stateFile = scratch.file("state.db")
        do {
            let old = try SQLiteConnection(path: stateFile.path, busyTimeout: 5)
            try old.execute("PRAGMA journal_mode = WAL")
            try old.execute("PRAGMA synchronous = NORMAL")
            try old.execute(
                """
                BEGIN IMMEDIATE;
                CREATE TABLE IF NOT EXISTS main.state (macro TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                    updated REAL NOT NULL, PRIMARY KEY (macro, key)) WITHOUT ROWID;
                INSERT INTO main.state VALUES ('stars', 'cursor', '"2024-01-01"', 1700000000.5);
                INSERT INTO main.state VALUES ('stars', 'count', '3', 1700000000.5);
                INSERT INTO main.state VALUES ('other/macro', 'seen', '{"a":[1,2]}', 1700000001);
                COMMIT;
                """)
        }
        #expect(chmod(stateFile.path, 0o600) == 0)
        let destination = scratch.file("out.db")
        do {
            let old = try SQLiteConnection(path: destination.path, busyTimeout: 5)
            try old.execute(
                """
                BEGIN IMMEDIATE;
                CREATE TABLE main."t" ("id" INTEGER, "name" TEXT, "score" REAL, PRIMARY KEY ("id"));
                INSERT INTO main."t" VALUES (1, 'a', 1.5), (2, 'b', 2.5);
                CREATE TABLE IF NOT EXISTS main._apimacro_runs (id INTEGER PRIMARY KEY, macro TEXT NOT NULL,
                    started TEXT NOT NULL, finished TEXT NOT NULL, exit INTEGER NOT NULL, requests INTEGER NOT NULL,
                    cache_hits INTEGER NOT NULL, rows_written INTEGER NOT NULL);
                INSERT INTO main._apimacro_runs (macro, started, finished, exit, requests, cache_hits, rows_written)
                VALUES ('stars', '2024-05-01T12:00:00.000Z', '2024-05-01T12:00:01.000Z', 0, 1, 0, 2);
                COMMIT;
                """)
        }
        let state = StateDatabase(home: scratch.url)
        #expect(
            try state.entries().map { "\($0.macro) \($0.key)=\($0.json) \($0.updated)" } == [
                "other/macro seen={\"a\":[1,2]} 1700000001.0", "stars count=3 1700000000.5",
                "stars cursor=\"2024-01-01\" 1700000000.5",
            ])

        // The next run upserts into the old table and moves the bookmark; nothing else changes.
        let run = RunTransaction(wait: 5)
        try run.stage(
            [Row([("id", .integer(2)), ("name", .text("b2"))]), Row([("id", .integer(3)), ("score", .integer(7))])],
            to: .sqlite(file: destination, table: "t"), key: ["id"])
        run.stageState([("cursor", "\"2024-02-01\"")])
        let started = Date(timeIntervalSince1970: 1_714_564_800.25)
        try run.commit(
            state: state, macro: "stars",
            run: .init(
                macro: "stars", started: started, finished: started.addingTimeInterval(1), exit: 0, requests: 2,
                cacheHits: 1))
        #expect(
            try StoreTestDatabase.rows(destination, "SELECT id, name, score FROM t ORDER BY id") == [
                ["1", "a", "1.5"], ["2", "b2", "2.5"], ["3", "NULL", "7.0"],
            ])
        // The run's line as the GRDB version wrote it (ISO8601DateFormatter, fractional seconds).
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(
            try StoreTestDatabase.rows(destination, "SELECT macro, started, finished, rows_written FROM _apimacro_runs")
                == [
                    ["stars", "2024-05-01T12:00:00.000Z", "2024-05-01T12:00:01.000Z", "2"],
                    ["stars", format.string(from: started), format.string(from: started.addingTimeInterval(1)), "2"],
                ])
        #expect(format.string(from: started) == "2024-05-01T12:00:00.250Z")
        #expect(
            try state.entries().map { "\($0.macro) \($0.key)=\($0.json)" } == [
                "other/macro seen={\"a\":[1,2]}", "stars count=3", "stars cursor=\"2024-02-01\"",
            ])
        #expect(try StoreTestDatabase.rows(stateFile, "PRAGMA journal_mode") == [["wal"]])
        #expect(try StoreTestDatabase.rows(destination, "PRAGMA journal_mode") == [["delete"]])
        #expect(try await state.reset(macro: "other/macro", key: nil, wait: 5) == 1)
        #expect(try state.entries().map(\.key) == ["count", "cursor"])
    }
}
