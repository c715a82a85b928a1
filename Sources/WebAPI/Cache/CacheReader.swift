import CSQLite
import Platform
import Synchronization

/// The cache's hit path: SQLite connections of its own (SQLite's C API), each
/// with the lookup `SELECT` prepared once, taken by the calling thread for one lookup and
/// given back.
///
/// A lookup is one lock to take a connection, one indexed read and one lock to give it back:
/// no reader-pool checkout, no queue, no transaction around the one statement (it reads one
/// snapshot of the WAL database, and WAL keeps it apart from any writer).
///
/// Bounded waiting: a connection waits at most `busyMilliseconds` for a lock (a reader waits
/// only while another process recovers or restarts the WAL), and a lookup that still finds
/// the database busy is reported as `Busy`, which the cache treats as a miss. The writing
/// connection's 10 s busy timeout never holds a thread of the cooperative pool on a hit.
///
/// The connections also mark entries used (the LRU mark, at most once a minute per entry):
/// a mark is advisory, so a busy database skips it rather than wait.
final class CacheReader: Sendable {
    /// The database is locked by another connection past the bounded wait.
    struct Busy: Error {}

    /// SQLite said no: its message.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One stored row, valid only inside the closure that receives it (the bytes are SQLite's).
    struct Row {
        let variant: UnsafeRawBufferPointer
        let target: UnsafeRawBufferPointer
        /// The sealed body and header record.
        let record: UnsafeRawBufferPointer
        /// The sealed header record a 304 left, or empty.
        let head: UnsafeRawBufferPointer
        let storedAt: Double
        let initialAge: Double
        let lastUsed: Double
    }

    /// How long a lookup waits for a lock, at most.
    static let busyMilliseconds: Int32 = 100
    /// Idle connections kept (more threads than this at once open short-lived ones).
    static let maximumIdle = 4

    private let path: String
    private let idle = Mutex<[Connection]>([])

    init(path: String) {
        self.path = path
    }

    /// Calls `each` with every row stored under `key`.
    func rows(key: [UInt8], _ each: (Row) -> Void) throws {
        try withConnection { connection in try connection.rows(key: key, each) }
    }

    /// Sets `last_used` of the variants under `key` to `now`; skipped when the database is busy.
    func touch(key: [UInt8], variants: [[UInt8]], now: Double) throws {
        try withConnection { connection in
            for variant in variants { try connection.touch(key: key, variant: variant, now: now) }
        }
    }

    /// After a 304: the variant's sealed header record replaced and its freshness clock
    /// restarted (its LRU mark moved only when a minute old), the record untouched.
    ///
    /// - Returns: false when the database stayed locked past the bounded wait (nothing written).
    func refresh(
        key: [UInt8], variant: [UInt8], head: [UInt8]?, storedAt: Double, initialAge: Double, touchInterval: Double
    ) throws -> Bool {
        try withConnection { connection in
            try connection.refresh(
                key: key, variant: variant, head: head, storedAt: storedAt, initialAge: initialAge,
                touchInterval: touchInterval)
        }
    }

    /// The UPDATE of `refresh` (also run through the writing connection when this one finds the database busy).
    ///
    /// A NULL head (`?1`) keeps the stored one: a 304 that changed no header restarts the clock alone.
    static let refreshSQL = """
        UPDATE entry SET head = coalesce(?1, head), stored_at = ?2, initial_age = ?3,
        size = length(record) + ifnull(length(coalesce(?1, head)), 0),
        last_used = CASE WHEN ?2 - last_used > ?4 THEN ?2 ELSE last_used END
        WHERE key = ?5 AND variant = ?6
        """

    private func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try idle.withLock { $0.popLast() } ?? Connection(path: path)
        defer {
            idle.withLock { idle in
                if idle.count < CacheReader.maximumIdle { idle.append(connection) }
            }
        }
        return try body(connection)
    }

    /// One connection and its prepared statements; used by one thread at a time (it is
    /// out of the idle list while in use).
    ///
    /// The hit path speaks SQLite's C API on their handles.
    private final class Connection: @unchecked Sendable {
        let connection: SQLiteConnection
        let statements: [SQLiteStatement]
        let database: OpaquePointer
        let select: OpaquePointer
        let update: OpaquePointer
        let refresh: OpaquePointer

        init(path: String) throws {
            let connection: SQLiteConnection
            do {
                connection = try SQLiteConnection(
                    path: path, mode: .readWrite, busyTimeout: Double(CacheReader.busyMilliseconds) / 1000)
                // As the writer: a replaced row's old bytes are zeroed, not left in free pages.
                try connection.execute("PRAGMA secure_delete = ON; PRAGMA synchronous = NORMAL")
                // Preparing reads the schema: the same bounded wait as a lookup.
                statements = try [
                    "SELECT variant, target, record, head, stored_at, initial_age, last_used FROM entry WHERE key = ?",
                    "UPDATE entry SET last_used = ? WHERE key = ? AND variant = ?",
                    CacheReader.refreshSQL,
                ].map { try connection.prepare($0, persistent: true) }
            } catch let error as SQLiteError {
                if error.isBusy { throw Busy() }
                throw Failure(description: "cannot read \(path): \(error.message)")
            }
            self.connection = connection
            database = connection.handle
            select = statements[0].handle
            update = statements[1].handle
            refresh = statements[2].handle
        }

        func rows(key: [UInt8], _ each: (Row) -> Void) throws {
            defer {
                sqlite3_reset(select)
                sqlite3_clear_bindings(select)
            }
            try key.withUnsafeBytes { bytes in
                // SQLITE_STATIC (nil): `bytes` outlives every step below.
                sqlite3_bind_blob(select, 1, bytes.baseAddress, Int32(bytes.count), nil)
                while true {
                    let code = sqlite3_step(select)
                    if code == SQLITE_DONE { return }
                    guard code == SQLITE_ROW else { throw failure(code) }
                    each(
                        Row(
                            variant: blob(0), target: blob(1), record: blob(2), head: blob(3),
                            storedAt: sqlite3_column_double(select, 4), initialAge: sqlite3_column_double(select, 5),
                            lastUsed: sqlite3_column_double(select, 6)))
                }
            }
        }

        func touch(key: [UInt8], variant: [UInt8], now: Double) throws {
            defer {
                sqlite3_reset(update)
                sqlite3_clear_bindings(update)
            }
            try key.withUnsafeBytes { key in
                try variant.withUnsafeBytes { variant in
                    sqlite3_bind_double(update, 1, now)
                    bind(update, key: key, at: 2, variant: variant, at: 3)
                    let code = sqlite3_step(update) & 0xFF
                    guard code == SQLITE_DONE || code == SQLITE_BUSY || code == SQLITE_LOCKED else {
                        throw failure(code)
                    }
                }
            }
        }

        /// Binds an entry's key and variant (SQLITE_STATIC: the caller's buffers outlive the step);
        /// an entry without variants has a blob of length zero, not NULL.
        private func bind(
            _ statement: OpaquePointer, key: UnsafeRawBufferPointer, at keyIndex: Int32,
            variant: UnsafeRawBufferPointer, at variantIndex: Int32
        ) {
            sqlite3_bind_blob(statement, keyIndex, key.baseAddress, Int32(key.count), nil)
            sqlite3_bind_zeroblob(statement, variantIndex, 0)
            if variant.count > 0 {
                sqlite3_bind_blob(statement, variantIndex, variant.baseAddress, Int32(variant.count), nil)
            }
        }

        func refresh(
            key: [UInt8], variant: [UInt8], head: [UInt8]?, storedAt: Double, initialAge: Double, touchInterval: Double
        ) throws -> Bool {
            defer {
                sqlite3_reset(refresh)
                sqlite3_clear_bindings(refresh)
            }
            return try key.withUnsafeBytes { key in
                try variant.withUnsafeBytes { variant in
                    try (head ?? []).withUnsafeBytes { bytes in
                        // Unbound, ?1 is NULL: the stored head stays.
                        if head != nil { sqlite3_bind_blob(refresh, 1, bytes.baseAddress, Int32(bytes.count), nil) }
                        sqlite3_bind_double(refresh, 2, storedAt)
                        sqlite3_bind_double(refresh, 3, initialAge)
                        sqlite3_bind_double(refresh, 4, touchInterval)
                        bind(refresh, key: key, at: 5, variant: variant, at: 6)
                        // The primary code (the connection reports extended ones: SQLITE_BUSY_SNAPSHOT).
                        let code = sqlite3_step(refresh) & 0xFF
                        if code == SQLITE_BUSY || code == SQLITE_LOCKED { return false }
                        guard code == SQLITE_DONE else { throw failure(code) }
                        return true
                    }
                }
            }
        }

        private func blob(_ column: Int32) -> UnsafeRawBufferPointer {
            // The pointer first, then the size (SQLite's documented order).
            let start = sqlite3_column_blob(select, column)
            let count = Int(sqlite3_column_bytes(select, column))
            guard count > 0, let start else {
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            return UnsafeRawBufferPointer(start: start, count: count)
        }

        private func failure(_ code: Int32) -> any Error {
            let code = code & 0xFF
            if code == SQLITE_BUSY || code == SQLITE_LOCKED { return Busy() }
            return Failure(description: String(cString: sqlite3_errmsg(database)))
        }
    }
}
