public import Platform
public import WebAPI

/// Every macro's state: `state.db` under `$APIMACRO_HOME` (mode 0600), one row per macro and key
/// holding the value as JSON text.
///
/// Writes happen only inside a `RunTransaction`'s commit.
public struct StateDatabase: Sendable {
    /// The file's name under the home folder.
    public static let fileName = "state.db"

    /// The database file.
    public let file: URL
    /// The folder of the lock files (the home folder).
    public let folder: URL
    /// The PostgreSQL database the state lives in instead (`APIMACRO_STATE=postgresql://…`), or nil.
    public let postgres: String?
    /// The shared-state Redis server the state lives in instead (`APIMACRO_STATE=redis`), or nil.
    public let redis: SharedStateAddress?

    /// The state of the home folder `home`, or of the PostgreSQL database `postgres` or the
    /// Redis server `redis` when given (the lock files stay in `home`).
    public init(home: URL, postgres: String? = nil, redis: SharedStateAddress? = nil) {
        folder = home
        file = home.appendingPathComponent(Self.fileName)
        self.postgres = postgres
        self.redis = redis
    }

    /// Whether the state lives on a server (PostgreSQL or Redis), where commits compare and set
    /// the version they read.
    public var isShared: Bool { postgres != nil || redis != nil }

    /// Where the state lives, for messages: the file, or the server with its password redacted.
    public var shown: String {
        if let redis { return "\(redis) (APIMACRO_STATE=redis)" }
        return postgres.map(PostgresURL.redacted) ?? file.path
    }

    /// Checks that the state's database can be reached (PostgreSQL: connects, and makes its
    /// tables; Redis: connects and pings).
    ///
    /// - Throws: `StoreError` (`.unreachable`) naming the server, its password redacted.
    public func check(wait: Double) throws {
        if let redis { try RedisState.check(redis, timeout: wait) }
        guard let postgres else { return }
        try PostgresState.prepare(try PostgresConnection.shared(postgres, timeout: wait))
    }

    /// The stored entries of `macro` and the version they make (PostgreSQL and Redis: the
    /// version the commit compares against; nil for SQLite, where the state lock alone orders runs).
    public func read(macro: String, wait: Double = 60) throws -> (entries: [Entry], version: Int64?) {
        if let redis {
            let read = try RedisState.read(redis, timeout: wait, macro: macro)
            return (read.entries, read.version)
        }
        guard let postgres else { return (try entries(macro: macro), nil) }
        let read = try PostgresState.read(try PostgresConnection.shared(postgres, timeout: wait), macro: macro)
        return (read.entries, read.version)
    }

    /// One stored value.
    public struct Entry: Sendable, Equatable {
        /// The macro's state key (`stars`, `plugin/macro`).
        public let macro: String
        /// The key within its state.
        public let key: String
        /// The value as compact JSON text.
        public let json: String
        /// When it was last committed, as seconds since 1970.
        public let updated: Double
    }

    /// The stored entries of `macro` (every macro's when nil), by macro then key; none when the
    /// file does not exist yet.
    ///
    /// - Throws: `StoreError` when the file cannot be read.
    public func entries(macro: String? = nil) throws -> [Entry] {
        if let redis { return try RedisState.read(redis, timeout: 60, macro: macro).entries }
        if let postgres {
            return try PostgresState.read(try PostgresConnection.shared(postgres, timeout: 60), macro: macro).entries
        }
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        return try StoreFailure.mapping(file: file, wait: 60) {
            let database = try Self.open(file, wait: 60, readOnly: true)
            return try database.withConnection { db in
                // One deferred transaction: the table's check and the rows read one snapshot.
                try db.transaction(.deferred) {
                    guard try db.tableExists("state") else { return [] }
                    let sql = "SELECT macro, key, value, updated FROM state"
                    let statement = try db.prepare(
                        macro == nil ? sql + " ORDER BY macro, key" : sql + " WHERE macro = ? ORDER BY key")
                    if let macro { statement.bind(macro, at: 1) }
                    var entries: [Entry] = []
                    while try statement.step() {
                        entries.append(
                            Entry(
                                macro: statement.text(0), key: statement.text(1), json: statement.text(2),
                                updated: statement.double(3)))
                    }
                    return entries
                }
            }
        }
    }

    /// Removes `macro`'s state (only `key` when given) at once, outside any run; returns how
    /// many entries went.
    ///
    /// Waits for a run of the macro holding the state lock up to `wait` s.
    ///
    /// - Throws: `StoreError` (`.locked`) when a run holds it past `wait`.
    public func reset(macro: String, key: String?, wait: Double) async throws -> Int {
        if let redis {
            let lock = try await MacroLock.acquire(macro: macro, folder: folder, wait: wait)
            defer { withExtendedLifetime(lock) {} }
            return try RedisState.reset(redis, timeout: wait, macro: macro, key: key)
        }
        if let postgres {
            let lock = try await MacroLock.acquire(macro: macro, folder: folder, wait: wait)
            defer { withExtendedLifetime(lock) {} }
            return try PostgresState.reset(
                try PostgresConnection.shared(postgres, timeout: wait), macro: macro, key: key)
        }
        guard FileManager.default.fileExists(atPath: file.path) else { return 0 }
        let lock = try await MacroLock.acquire(macro: macro, folder: folder, wait: wait)
        defer { withExtendedLifetime(lock) {} }
        return try StoreFailure.mapping(file: file, wait: wait) {
            let database = try Self.open(file, wait: wait, stateFile: true)
            return try database.withConnection { db in
                try db.transaction(.immediate) {
                    guard try db.tableExists("state") else { return 0 }
                    if let key {
                        try db.execute("DELETE FROM state WHERE macro = ? AND key = ?", [.text(macro), .text(key)])
                    } else {
                        try db.execute("DELETE FROM state WHERE macro = ?", [.text(macro)])
                    }
                    return db.changes
                }
            }
        }
    }

    /// Writes `changes` (a nil value deletes the key) of `macro` in the open transaction of `db`,
    /// whose main schema is this file.
    static func write(
        _ db: SQLiteConnection, macro: String, changes: [(key: String, json: String?)], now: Double
    ) throws {
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS main.state (macro TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                updated REAL NOT NULL, PRIMARY KEY (macro, key)) WITHOUT ROWID
            """)
        for (key, json) in changes {
            if let json {
                try db.execute(
                    """
                    INSERT INTO main.state (macro, key, value, updated) VALUES (?, ?, ?, ?)
                    ON CONFLICT (macro, key) DO UPDATE SET value = excluded.value, updated = excluded.updated
                    """, [.text(macro), .text(key), .text(json), .real(now)])
            } else {
                try db.execute("DELETE FROM main.state WHERE macro = ? AND key = ?", [.text(macro), .text(key)])
            }
        }
    }

    /// Opens `file`, waiting up to `wait` seconds for another writer's lock.
    ///
    /// Destination files stay in rollback-journal mode with SQLite's default `synchronous=FULL`
    /// (a transaction over several attached files commits atomically, and is on disk when the
    /// commit returns). The state file, written alone and last (`stateFile`), is in WAL mode
    /// with `synchronous=NORMAL`: a commit is no fsync, durable against a crash of the process;
    /// a power loss may take back the last commits (never half of one), which leaves an older
    /// bookmark over rows already on disk, so the next run upserts them again.
    ///
    /// Foreign keys are enforced (`PRAGMA foreign_keys = ON`, as GRDB's connections had them): a
    /// destination table made elsewhere with a foreign key refuses a row that breaks it.
    static func open(
        _ file: URL, wait: Double, readOnly: Bool = false, ownerOnly: Bool = false, stateFile: Bool = false
    ) throws -> SQLiteDatabase {
        if ownerOnly {
            try makeFolder(file.deletingLastPathComponent())
            // O_EXCL: a file that exists is never opened here (closing a descriptor of a database
            // drops this process's POSIX locks on it, SQLite's too).
            let descriptor = Glibc.open(file.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 { Glibc.close(descriptor) }
        }
        let connection = try SQLiteConnection(
            path: file.path, mode: readOnly ? .readOnly : .readWriteCreate, busyTimeout: max(0, wait))
        try connection.execute("PRAGMA foreign_keys = ON")
        if stateFile, !readOnly {
            // Two processes making the file at once: the switch to WAL is retried, not waited for.
            try SQLiteConnection.retryingBusy { try connection.execute("PRAGMA journal_mode = WAL") }
            try connection.execute("PRAGMA synchronous = NORMAL")
        }
        return SQLiteDatabase(connection, label: "apimacro.store")
    }

    /// Creates `folder` (owner-only) unless it exists.
    static func makeFolder(_ folder: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.io("cannot create \(folder.path): \(SystemErrorText.describe(error))")
        }
    }
}

extension StateDatabase {
    /// The error of a lost compare-and-set: it names the macro and the keys this run changed
    /// (`keys`); `committed`: the rows this run had committed before (the state is committed
    /// last), nil when it wrote nothing.
    static func conflict(
        macro: String, expected: Int64, current: Int64, keys: [String], committed: CommittedRows? = nil
    ) -> StoreError {
        let shownKeys = keys.map { String(reflecting: $0) }.joined(separator: ", ")
        let refused =
            keys.isEmpty
            ? ""
            : ", so this run's change\(keys.count == 1 ? "" : "s") to \(shownKeys) "
                + "\(keys.count == 1 ? "was" : "were") refused"
        let written =
            committed.map { "its state was not written, but " + $0.description }
            ?? "nothing was written, neither state nor rows"
        return .conflict(
            "the state of \(macro) was committed by another run (on this or another machine) after this run read it "
                + "(version \(expected), now \(current))\(refused); \(written). "
                + "Run again to continue from where that run left off")
    }
}

/// The rows a commit wrote before its state could not be committed (the state goes last), for
/// the message that says what running again does with them.
struct CommittedRows: Sendable, CustomStringConvertible {
    /// How many.
    var count: Int
    /// Whether every destination upserted them by a key or was replaced whole: running again
    /// then writes the same rows over them.
    var idempotent: Bool

    var description: String {
        let rows = "its \(count) row\(count == 1 ? " was" : "s were")"
        return idempotent
            ? rows + " (upserted by their keys: running again writes the same rows over them, not twice)"
            : rows + " (running again appends them again where there is no key: CSV, JSON Lines, a table without key=)"
    }
}

/// SQLite's failures as the store reports them.
enum StoreFailure {
    /// Runs `body`, turning a `SQLiteError` into a `StoreError` that names `file` and says what to do.
    static func mapping<T>(file: URL, wait: Double, named: String? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw storeError(error, file: named ?? file.path, wait: wait)
        }
    }

    /// The `StoreError` for a SQLite failure on `file`.
    static func storeError(_ error: SQLiteError, file: String, wait: Double) -> StoreError {
        switch error.code {
        case .busy, .locked:
            return .locked(
                "\(file) is locked by another process (waited \(SecondsText.shown(wait)) s); "
                    + "nothing was written. Run again when it is done, or raise --timeout")
        case .full:
            return .io("the disk is full writing \(file); nothing was written. Free some space and run again")
        case .notADatabase:
            return .invalid("\(file) is not a SQLite database; it was left untouched")
        case .readOnly, .permission, .cannotOpen:
            return .io("cannot write \(file) (\(error.message)); nothing was written")
        default:
            return .io("cannot write \(file): \(error.message); nothing was written")
        }
    }
}
