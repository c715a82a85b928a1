import Foundation
import Store
import Testing
import WebAPI

#if canImport(Glibc)
    import Glibc
#endif

/// A scratch folder per test.
struct Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    func remove() { try? FileManager.default.removeItem(at: url) }
    func text(_ name: String) -> String? { try? String(contentsOf: file(name), encoding: .utf8) }
}

/// Reads a database back through WebAPI's SQLite wrapper (read-only).
enum StoreTestDatabase {
    /// The rows of `sql` on `db`, each value as text (`NULL`, `BLOB` for those).
    static func rows(_ db: URL, _ sql: String) throws -> [[String]] {
        let connection = try SQLiteConnection(path: db.path, mode: .readOnly, busyTimeout: 5)
        return try connection.rows(sql).map { row in
            row.map { value in
                switch value {
                case .null: "NULL"
                case .integer(let number): "\(number)"
                case .real(let number): "\(number)"
                case .text(let text): text
                case .blob: "BLOB"
                }
            }
        }
    }
}

@Suite("a run's state and rows, committed together or not at all")
struct RunTransactionTests {
    func rows(_ db: URL, _ sql: String) throws -> [[String]] {
        try StoreTestDatabase.rows(db, sql)
    }

    @Test("state commits in one transaction, owner-only, and reads back; nothing is written before commit")
    func stateRoundTrip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let state = StateDatabase(home: scratch.url)
        let run = RunTransaction(wait: 5)
        run.stageState([("cursor", "\"2024-01-01\""), ("count", "3")])
        #expect(!FileManager.default.fileExists(atPath: state.file.path))
        try run.commit(state: state, macro: "stars")
        let mode = try FileManager.default.attributesOfItem(atPath: state.file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(
            try state.entries(macro: "stars").map { "\($0.key)=\($0.json)" } == ["count=3", "cursor=\"2024-01-01\""])
        let again = RunTransaction(wait: 5)
        again.stageState([("count", nil)])
        try again.commit(state: state, macro: "stars")
        #expect(try state.entries(macro: "stars").map(\.key) == ["cursor"])
        #expect(try state.entries(macro: "other").isEmpty)
    }

    @Test("an upsert evolves the table: new columns, kept fields, ints widened, bools 0/1, nested JSON, a run line")
    func upsertEvolves() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = scratch.file("stars.db")
        let state = StateDatabase(home: scratch.url.appendingPathComponent("home"))
        let first = RunTransaction(wait: 5)
        try first.stage(
            [Row([("id", .integer(1)), ("login", .text("a")), ("score", .real(1.5)), ("admin", .bool(true))])],
            to: .sqlite(file: db, table: "stars"), key: ["id"])
        first.stageState([("cursor", "1")])
        let started = Date()
        try first.commit(
            state: state, macro: "m",
            run: .init(macro: "m", started: started, finished: Date(), exit: 0, requests: 2, cacheHits: 1))
        let second = RunTransaction(wait: 5)
        try second.stage(
            [
                Row([("id", .integer(1)), ("score", .integer(7)), ("user", .json("{\"x\":1}"))]),
                Row([("id", .integer(2)), ("login", .text("b")), ("admin", .bool(false))]),
            ], to: .sqlite(file: db, table: "stars"), key: ["id"])
        try second.commit(state: state, macro: "m")
        #expect(
            try rows(db, "SELECT id, login, score, admin, user, typeof(score) FROM stars ORDER BY id") == [
                ["1", "a", "7.0", "1", "{\"x\":1}", "real"], ["2", "b", "NULL", "0", "NULL", "null"],
            ])
        #expect(
            try rows(db, "SELECT macro, exit, requests, cache_hits, rows_written FROM _apimacro_runs") == [
                ["m", "0", "2", "1", "1"]
            ])
        #expect(try state.entries(macro: "m").map(\.json) == ["1"])
    }

    @Test("a type clash is refused at stage time naming the column, and the file is untouched")
    func clashUntouched() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = scratch.file("t.db")
        let run = RunTransaction(wait: 5)
        try run.stage([Row([("id", .integer(1)), ("n", .integer(1))])], to: .sqlite(file: db, table: "t"), key: ["id"])
        try run.commit(state: nil, macro: nil)
        let before = try Data(contentsOf: db)
        let next = RunTransaction(wait: 5)
        let error = #expect(throws: StoreError.self) {
            try next.stage(
                [Row([("id", .integer(2)), ("n", .text("x"))])], to: .sqlite(file: db, table: "t"), key: ["id"])
        }
        #expect(error?.description.contains("column \"n\"") == true)
        #expect(try Data(contentsOf: db) == before)
    }

    @Test("a failed commit writes nothing: the state stays and the CSV and JSON Lines files are cut back")
    func failedCommitLeavesNothing() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = scratch.file("t.db")
        let state = StateDatabase(home: scratch.url)
        let setup = RunTransaction(wait: 5)
        try setup.stage([Row([("id", .integer(1))])], to: .sqlite(file: db, table: "t"), key: ["id"])
        try setup.stage([Row([("a", .integer(1))])], to: .csv(file: scratch.file("x.csv")))
        setup.stageState([("k", "1")])
        try setup.commit(state: state, macro: "m")
        let csvBefore = scratch.text("x.csv")
        // Another process holds the table's file: the commit waits, then fails.
        do {
            let otherDB = try SQLiteConnection(path: db.path, mode: .readWrite, busyTimeout: 5)
            try otherDB.execute("BEGIN EXCLUSIVE")
            let run = RunTransaction(wait: 0.2)
            try run.stage([Row([("id", .integer(2))])], to: .sqlite(file: db, table: "t"), key: ["id"])
            try run.stage([Row([("a", .integer(2))])], to: .csv(file: scratch.file("x.csv")))
            try run.stage([Row([("a", .integer(2))])], to: .jsonLines(file: scratch.file("x.jsonl")))
            run.stageState([("k", "2")])
            let error = #expect(throws: StoreError.self) { try run.commit(state: state, macro: "m") }
            #expect(error?.kind == .locked)
            #expect(error?.description.contains("locked by another process") == true)
            try otherDB.execute("ROLLBACK")
        }
        #expect(try state.entries(macro: "m").map(\.json) == ["1"])
        #expect(scratch.text("x.csv") == csvBefore)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("x.jsonl").path))
        #expect(try rows(db, "SELECT id FROM t") == [["1"]])
    }

    @Test("CSV appends under its header, refuses a column the header lacks, and replace rewrites it")
    func csv() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = scratch.file("out.csv")
        let one = RunTransaction(wait: 5)
        try one.stage(
            [Row([("a", .integer(1)), ("b", .text("x,y"))]), Row([("b", .null), ("a", .bool(true))])],
            to: .csv(file: file))
        try one.commit(state: nil, macro: nil)
        #expect(scratch.text("out.csv") == "a,b\r\n1,\"x,y\"\r\ntrue,\r\n")
        let two = RunTransaction(wait: 5)
        try two.stage([Row([("b", .text("z")), ("a", .integer(2))])], to: .csv(file: file))
        #expect(throws: StoreError.self) { try two.stage([Row([("c", .integer(1))])], to: .csv(file: file)) }
        try two.commit(state: nil, macro: nil)
        #expect(scratch.text("out.csv") == "a,b\r\n1,\"x,y\"\r\ntrue,\r\n2,z\r\n")
        let three = RunTransaction(wait: 5)
        try three.stage([Row([("c", .real(0.5))])], to: .csv(file: file), mode: .replace)
        try three.commit(state: nil, macro: nil)
        #expect(scratch.text("out.csv") == "c\r\n0.5\r\n")
    }

    @Test("JSON Lines keeps nested values nested; .json is a whole array")
    func jsonLines() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = RunTransaction(wait: 5)
        try run.stage(
            [Row([("a", .json("[1,2]")), ("s", .text("q\"\n"))])], to: .jsonLines(file: scratch.file("o.jsonl")))
        try run.stage([Row([("n", .real(2))])], to: .json(file: scratch.file("o.json")))
        try run.commit(state: nil, macro: nil)
        #expect(scratch.text("o.jsonl") == "{\"a\":[1,2],\"s\":\"q\\\"\\n\"}\n")
        #expect(scratch.text("o.json") == "[\n{\"n\":2.0}\n]\n")
    }

    /// The locks this process holds on `file`, as /proc/locks lists them ("1: POSIX ADVISORY
    /// READ 4242 fe:00:1234567 0 EOF": kind, pid, device:inode).
    static func locksHeld(on file: URL) throws -> [Substring] {
        var status = stat()
        guard stat(file.path, &status) == 0 else { return [] }
        let locks = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
        return locks.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ")
            return fields.count >= 6 && fields[1] == "POSIX" && fields[4] == "\(getpid())"
                && fields[5].hasSuffix(":\(status.st_ino)")
        }
    }

    /// Checking a destination again never closes a descriptor of it: the run's connection keeps its lock.
    ///
    /// Closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's
    /// included. A destination in WAL mode keeps its connection's shared lock between commits;
    /// a second `output(to=)` of it after an early commit read its header again, and the lock
    /// went: a process closing that database next took itself for the last, checkpointed and
    /// removed the WAL under this run's connection.
    @Test("a second output to a SQLite destination in WAL mode keeps the run's lock on it")
    func destinationLockKept() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = scratch.file("wal.db")
        do {
            let made = try SQLiteConnection(path: file.path, mode: .readWriteCreate, busyTimeout: 5)
            try made.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER)")
        }
        let run = RunTransaction(wait: 5)
        try run.stage([Row([("n", .integer(1))])], to: .sqlite(file: file, table: "t"))
        try run.commit(state: nil, macro: nil)
        #expect(!(try Self.locksHeld(on: file)).isEmpty, "the run's connection holds no lock on its WAL database")
        try run.stage([Row([("n", .integer(2))])], to: .sqlite(file: file, table: "t"))
        #expect(!(try Self.locksHeld(on: file)).isEmpty, "checking the destination again dropped the run's lock")
        try run.commit(state: nil, macro: nil)
        #expect(try StoreTestDatabase.rows(file, "SELECT n FROM t ORDER BY n") == [["1"], ["2"]])
    }

    @Test("a file that is not SQLite, or cannot be written, is refused before anything is written")
    func badFiles() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try Data("hello, not a database\n".utf8).write(to: scratch.file("text.db"))
        let notSQLite = #expect(throws: StoreError.self) {
            try Destination.sqlite(file: scratch.file("text.db"), table: "t").checkWritable()
        }
        #expect(notSQLite?.description.contains("is not a SQLite database") == true)
        #expect(scratch.text("text.db") == "hello, not a database\n")
        let locked = scratch.url.appendingPathComponent("ro")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        chmod(locked.path, 0o500)
        defer { chmod(locked.path, 0o700) }
        if getuid() != 0 {
            #expect(throws: StoreError.self) {
                try Destination.csv(file: locked.appendingPathComponent("x.csv")).checkWritable()
            }
        }
        #expect(throws: StoreError.self) {
            try Destination.parse(path: "x.txt", table: nil, relativeTo: scratch.url)
        }
        #expect(throws: StoreError.self) {
            try Destination.parse(path: "x.db", table: "bad name", relativeTo: scratch.url)
        }
    }

    @Test("a second holder of a macro's lock waits, then fails naming the macro; the lock goes with its holder")
    func lock() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var first: MacroLock? = try await MacroLock.acquire(macro: "plugin/m", folder: scratch.url, wait: 1)
        let error = await #expect(throws: StoreError.self) {
            _ = try await MacroLock.acquire(macro: "plugin/m", folder: scratch.url, wait: 0.1)
        }
        #expect(error?.description.contains("another run of plugin/m") == true)
        _ = try await MacroLock.acquire(macro: "other", folder: scratch.url, wait: 0.1)
        #expect(first != nil)
        first = nil
        _ = try await MacroLock.acquire(macro: "plugin/m", folder: scratch.url, wait: 0.1)
        #expect(MacroLock.file(for: "plugin/m", in: scratch.url).lastPathComponent == "plugin%2Fm.lock")
    }

    @Test("reset removes one key or all of a macro's state")
    func reset() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let state = StateDatabase(home: scratch.url)
        let run = RunTransaction(wait: 5)
        run.stageState([("a", "1"), ("b", "2")])
        try run.commit(state: state, macro: "m")
        #expect(try await state.reset(macro: "m", key: "a", wait: 1) == 1)
        #expect(try state.entries(macro: "m").map(\.key) == ["b"])
        #expect(try await state.reset(macro: "m", key: nil, wait: 1) == 1)
        #expect(try state.entries().isEmpty)
    }
}
