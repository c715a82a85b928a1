import Foundation
import Testing

@testable import WebAPI

/// WebAPI's wrapper over SQLite's C API, which the HTTP cache and Store share.
@Suite("the SQLite wrapper")
struct SQLiteConnectionTests {
    func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("values round-trip by type: an empty blob is a blob and empty text is text, never NULL")
    func valuesRoundTrip() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = try SQLiteConnection(path: folder.appendingPathComponent("v.db").path, busyTimeout: 1)
        try db.execute("CREATE TABLE t (n, r, s, b, z)")
        let values: [SQLiteValue] = [.integer(-7), .real(2.5), .text("é\u{0}x"), .blob([]), .null]
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", values)
        try db.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            [.integer(Int64.max), .real(-0.5), .text(""), .blob([0, 255]), .null])
        #expect(
            try db.rows("SELECT * FROM t ORDER BY n") == [
                values, [.integer(Int64.max), .real(-0.5), .text(""), .blob([0, 255]), .null],
            ])
        #expect(
            try db.rows("SELECT typeof(b), typeof(s) FROM t ORDER BY n") == [
                [.text("blob"), .text("text")], [.text("blob"), .text("text")],
            ])
        #expect(try db.value("SELECT count(*) FROM t WHERE s = ?", [.text("")]) == .integer(1))
        #expect(try db.value("SELECT n FROM t WHERE 0") == nil)
    }

    @Test("an error carries SQLite's code, message and statement; a double-quoted name is never a string")
    func errors() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = try SQLiteConnection(path: folder.appendingPathComponent("e.db").path, busyTimeout: 1)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        try db.execute("INSERT INTO t VALUES (1)")
        let duplicate = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?)", [.integer(1)]) }
        #expect(duplicate?.code == .constraint && duplicate?.message.contains("UNIQUE") == true)
        #expect(duplicate?.sql == "INSERT INTO t VALUES (?)")
        // As GRDB had it: "missing" names a column, and there is none.
        let quoted = #expect(throws: SQLiteError.self) { try db.rows("SELECT \"missing\" FROM t") }
        #expect(quoted?.message.contains("no such column") == true)
        let missing = #expect(throws: SQLiteError.self) {
            try SQLiteConnection(path: folder.appendingPathComponent("none.db").path, mode: .readWrite, busyTimeout: 1)
        }
        #expect(missing?.code == .cannotOpen)
        let notADatabase = folder.appendingPathComponent("text.db")
        try Data(String(repeating: "not SQLite ", count: 100).utf8).write(to: notADatabase)
        let text = try SQLiteConnection(path: notADatabase.path, busyTimeout: 1)
        #expect(throws: SQLiteError.self) { try text.execute("PRAGMA journal_mode = WAL") }
        #expect(String(decoding: try Data(contentsOf: notADatabase), as: UTF8.self).hasPrefix("not SQLite"))
    }

    @Test("a transaction commits what its body did, and rolls all of it back when the body throws")
    func transactions() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = try SQLiteConnection(path: folder.appendingPathComponent("t.db").path, busyTimeout: 1)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let count = try db.transaction(.immediate) {
            try db.execute("INSERT INTO t VALUES (1), (2)")
            return db.changes
        }
        #expect(count == 2 && db.isAutocommit)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.transaction(.immediate) {
                try db.execute("INSERT INTO t VALUES (3)")
                throw Stop()
            }
        }
        // A failing statement inside: rolled back too, and the connection usable after.
        #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (4)")
                try db.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(db.isAutocommit)
        #expect(try db.rows("SELECT id FROM t ORDER BY id") == [[.integer(1)], [.integer(2)]])
    }

    @Test("BEGIN IMMEDIATE against another connection's write lock fails as busy once the timeout passes")
    func immediateBusy() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("b.db").path
        let holder = try SQLiteConnection(path: path, busyTimeout: 1)
        try holder.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER)")
        try holder.execute("BEGIN IMMEDIATE")
        let other = SQLiteDatabase(try SQLiteConnection(path: path, busyTimeout: 0))
        let busy = #expect(throws: SQLiteError.self) {
            try other.withConnection { db in
                try db.transaction(.immediate) { try db.execute("INSERT INTO t VALUES (1)") }
            }
        }
        #expect(busy?.isBusy == true)
        // WAL: a reader is not held up by the writer.
        #expect(try other.withConnection { db in try db.value("SELECT count(*) FROM t") } == .integer(0))
        try holder.execute("COMMIT")
        try other.withConnection { db in try db.transaction(.immediate) { try db.execute("INSERT INTO t VALUES (1)") } }
        #expect(try holder.value("SELECT count(*) FROM t") == .integer(1))
    }

    @Test("writes off the calling thread run one at a time and each sees the one before")
    func offThreadWrites() async throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = SQLiteDatabase(
            try SQLiteConnection(path: folder.appendingPathComponent("q.db").path, busyTimeout: 1))
        try database.withConnection { db in try db.execute("CREATE TABLE t (n INTEGER)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<20 {
                group.addTask {
                    try await database.withConnectionOffThread { db in
                        try db.transaction(.immediate) {
                            try db.execute("INSERT INTO t VALUES (?)", [.integer(Int64(n))])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try database.withConnection { db in try db.value("SELECT count(DISTINCT n) FROM t") } == .integer(20))
    }
}
