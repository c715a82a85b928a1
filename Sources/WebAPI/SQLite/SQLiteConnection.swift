import CSQLite

/// One connection to a SQLite file on SQLite's C API: used by one thread at a time (opened
/// `SQLITE_OPEN_NOMUTEX`); `SQLiteDatabase` shares one between threads behind a lock.
///
/// Extended result codes are on: an error carries SQLite's primary code, its extended code and
/// its message (`SQLiteError`). Double-quoted text is an identifier only (as GRDB's connections
/// had it): a quoted column name that does not exist is an error, never a string literal.
public final class SQLiteConnection {
    /// How the file is opened.
    public enum OpenMode: Sendable {
        /// Reads only; the file must exist.
        case readOnly
        /// Reads and writes; the file must exist.
        case readWrite
        /// Reads and writes, creating the file when it is missing.
        case readWriteCreate

        var flags: Int32 {
            switch self {
            case .readOnly: SQLITE_OPEN_READONLY
            case .readWrite: SQLITE_OPEN_READWRITE
            case .readWriteCreate: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            }
        }
    }

    /// How a transaction takes its locks (SQLite's `BEGIN DEFERRED/IMMEDIATE/EXCLUSIVE`).
    public enum TransactionKind: String, Sendable {
        /// Locks when the first statement reads or writes.
        case deferred = "DEFERRED"
        /// Takes the write lock at once (waiting for it up to the busy timeout): of two
        /// processes, the second waits at `BEGIN` rather than failing when it first writes.
        case immediate = "IMMEDIATE"
        /// Also keeps readers out (rollback-journal mode).
        case exclusive = "EXCLUSIVE"
    }

    /// SQLite's handle (`sqlite3 *`), for code that speaks the C API itself.
    public let handle: OpaquePointer
    /// The file.
    public let path: String

    /// Opens `path`, waiting up to `busyTimeout` seconds for another connection's lock on each
    /// statement.
    ///
    /// - Throws: `SQLiteError` when SQLite cannot open it (a missing file without `.readWriteCreate`,
    ///   a folder it cannot write, no memory).
    public init(path: String, mode: OpenMode = .readWriteCreate, busyTimeout: Double) throws {
        var database: OpaquePointer?
        let code = sqlite3_open_v2(path, &database, mode.flags | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let database else {
            let message = database.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(database)
            throw SQLiteError(code: code, message: message)
        }
        handle = database
        self.path = path
        sqlite3_extended_result_codes(database, 1)
        apimacro_sqlite_strict_quotes(database)
        sqlite3_busy_timeout(database, Int32(clamping: Int((max(0, busyTimeout) * 1000).rounded())))
    }

    deinit {
        // v2: a statement not finalized yet keeps the connection open until it is.
        sqlite3_close_v2(handle)
    }

    /// The first 32 KB region of this connection's WAL index (`FILE-shm`), as SQLite itself
    /// has it mapped (the VFS's `xShmMap`); nil when the connection is not in WAL mode or has
    /// not read the database yet.
    ///
    /// Valid while the connection is open. This is the only safe way into that file from this
    /// process: SQLite's locks on it are POSIX record locks, which the kernel drops for the
    /// whole process when *any* descriptor of the file is closed, so opening and closing it
    /// ourselves would silently give up this process's claim on the index, and a connection
    /// of another process, believing itself the first, would truncate and rebuild it under
    /// this one (SIGBUS in `sqlite3WalFrames`).
    public func walIndexRegion() -> UnsafeRawPointer? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
            let file, let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2,
            let map = methods.pointee.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        // Region 0 of SQLite's 32 KB regions, not extended: mapped already by a read in WAL mode.
        guard map(file, 0, 32768, 0, &region) == SQLITE_OK, let region else { return nil }
        return UnsafeRawPointer(region)
    }

    /// Runs `sql`, one statement or several separated by `;`, without parameters.
    public func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(code: code, message: text, sql: sql)
        }
    }

    /// Runs the one statement `sql` with `values` bound to its parameters in order.
    public func execute(_ sql: String, _ values: [SQLiteValue]) throws {
        let statement = try prepare(sql)
        try statement.execute(values)
    }

    /// The rows of the one statement `sql` with `values` bound, each as its columns' values.
    public func rows(_ sql: String, _ values: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let statement = try prepare(sql)
        statement.bind(values)
        var rows: [[SQLiteValue]] = []
        while try statement.step() {
            rows.append((0..<statement.columnCount).map(statement.value))
        }
        return rows
    }

    /// The first column of the first row of `sql`, or nil when it returns no row.
    public func value(_ sql: String, _ values: [SQLiteValue] = []) throws -> SQLiteValue? {
        let statement = try prepare(sql)
        statement.bind(values)
        return try statement.step() ? statement.value(0) : nil
    }

    /// `sql` compiled once; `persistent` tells SQLite it will be run many times.
    public func prepare(_ sql: String, persistent: Bool = false) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            // No statement (only a comment or spaces) is not an error SQLite reports.
            throw code == SQLITE_OK
                ? SQLiteError(code: SQLITE_MISUSE, message: "no statement in the SQL text", sql: sql)
                : error(code, sql: sql)
        }
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// The rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Whether no transaction is open.
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Whether `schema` (`main`, an attached name) has a table `name`.
    public func tableExists(_ name: String, schema: String = "main") throws -> Bool {
        let sql = "SELECT 1 FROM \(SQLiteConnection.quoted(schema)).sqlite_master WHERE type = 'table' AND name = ?"
        return try value(sql, [.text(name)]) != nil
    }

    /// Runs `body` in a transaction of `kind`: committed when it returns, rolled back when it
    /// (or the commit) throws.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        let result: T
        do {
            result = try body()
            try execute("COMMIT")
        } catch {
            // A failed COMMIT leaves the transaction open; a failed statement may have ended it.
            if !isAutocommit { try? execute("ROLLBACK") }
            throw error
        }
        return result
    }

    /// Copies the WAL into the database and empties it (`SQLITE_CHECKPOINT_TRUNCATE`), waiting for
    /// readers up to the busy timeout.
    public func checkpointTruncate() throws {
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql: nil) }
    }

    /// Runs `body` again while it throws `SQLITE_BUSY` or `SQLITE_LOCKED`, up to 50 times with a
    /// growing pause (20 ms to 200 ms; SQLite's own `sqlite3_sleep`).
    ///
    /// Switching a new file to WAL mode takes a lock SQLite's busy handler does not wait for: when
    /// several processes open a fresh file at once, the others try again.
    public static func retryingBusy<T>(_ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.isBusy {
                attempt += 1
                if attempt >= 50 { throw error }
                sqlite3_sleep(20 * Int32(min(attempt, 10)))
            }
        }
    }

    /// SQLite's error for `code` with the connection's message.
    func error(_ code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// `name` as a quoted SQL identifier.
    public static func quoted(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}

/// A value as SQLite stores it.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The integer, or a real's whole part; nil otherwise.
    public var integer: Int64? {
        switch self {
        case .integer(let number): number
        case .real(let number): Int64(exactly: number.rounded(.towardZero))
        default: nil
        }
    }

    /// The number as a Double; nil when it is not one.
    public var real: Double? {
        switch self {
        case .integer(let number): Double(number)
        case .real(let number): number
        default: nil
        }
    }

    /// The text; nil when it is not text.
    public var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }
}

/// SQLite said no: its result code, its message, and the statement when there was one.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// A SQLite result code (the primary one: `SQLITE_BUSY`, not `SQLITE_BUSY_SNAPSHOT`).
    public struct Code: Hashable, Sendable {
        public let rawValue: Int32

        init(_ rawValue: Int32) { self.rawValue = rawValue }

        public static let busy = Code(SQLITE_BUSY)
        public static let locked = Code(SQLITE_LOCKED)
        public static let full = Code(SQLITE_FULL)
        public static let notADatabase = Code(SQLITE_NOTADB)
        public static let readOnly = Code(SQLITE_READONLY)
        public static let permission = Code(SQLITE_PERM)
        public static let cannotOpen = Code(SQLITE_CANTOPEN)
        public static let constraint = Code(SQLITE_CONSTRAINT)
        public static let corrupt = Code(SQLITE_CORRUPT)
    }

    /// The primary result code.
    public let code: Code
    /// The extended result code (`SQLITE_BUSY_SNAPSHOT`, `SQLITE_CONSTRAINT_UNIQUE`).
    public let extendedCode: Int32
    /// SQLite's message.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    init(code: Int32, message: String, sql: String? = nil) {
        self.code = Code(code & 0xFF)
        extendedCode = code
        self.message = message
        self.sql = sql
    }

    /// Another connection holds the lock (past the busy timeout).
    public var isBusy: Bool { code == .busy || code == .locked }

    public var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " - while executing `\($0)`" } ?? "")
    }
}
