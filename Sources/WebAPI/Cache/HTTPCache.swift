public import Platform
import Synchronization

/// The persistent HTTP cache: stored GET responses in one SQLite file
/// (`cache.sqlite` under `$XDG_CACHE_HOME/apimacro`), shared safely by
/// concurrent apimacro processes (WAL mode, immediate write transactions, a
/// busy timeout).
///
/// Bounded in size; the least recently used entries go first.
///
/// Nothing in the file is readable without the `CacheSecret` (kept beside the
/// credential store): entries are named by keyed hashes of the request and its
/// credentials, and each entry's status, headers and body are sealed
/// (ChaChaPoly) — bodies and headers may echo tokens. An entry that does not
/// open (another key, an older format, tampering) is a miss.
///
/// One URL may hold several variants (`Vary`): rows share the `key` and differ
/// by `variant`. A hit is one indexed read; a 304 rewrites only the small sealed
/// header record, never the body.
public final class HTTPCache: Sendable {
    /// One stored response.
    public struct Entry: Sendable {
        /// The keyed hash that names the request (method, URL, credentials).
        public var key: [UInt8]
        /// The keyed hash of the request's values of the `Vary` headers (empty when none).
        public var variant: [UInt8]
        /// The keyed hash of the URL alone, for invalidation after unsafe methods (RFC 9111 §4.4).
        public var target: [UInt8]
        public var status: Int
        public var headers: Headers {
            didSet { directives = nil }
        }
        /// `CachePolicy.directives(headers)`, worked out when the entry was opened (nil when not).
        var directives: [String: String]?
        public var body: [UInt8]
        /// The lower-cased request header names the response varies on.
        public var varyNames: [String]
        /// When the response was received or last revalidated, seconds since 1970.
        public var storedAt: Double
        /// Its corrected initial age (RFC 9111 §4.2.3) at `storedAt`.
        public var initialAge: Double

        public init(
            key: [UInt8], variant: [UInt8] = [], target: [UInt8], status: Int, headers: Headers, body: [UInt8],
            varyNames: [String] = [], storedAt: Double, initialAge: Double = 0
        ) {
            self.key = key
            self.variant = variant
            self.target = target
            self.status = status
            self.headers = headers
            self.body = body
            self.varyNames = varyNames
            self.storedAt = storedAt
            self.initialAge = initialAge
        }

        /// What `CachePolicy` needs to decide.
        public var stored: CachePolicy.Stored {
            var stored = CachePolicy.Stored(
                status: status, headers: headers, storedAt: storedAt, initialAge: initialAge)
            stored.parsed = directives
            return stored
        }
    }

    /// What `apimacro cache info` shows.
    public struct Summary: Sendable, Equatable {
        public var entries: Int
        /// Bytes of stored headers and bodies.
        public var bytes: Int
        /// The oldest and newest `storedAt`, nil when empty.
        public var oldest: Double?
        public var newest: Double?

        public init(entries: Int, bytes: Int, oldest: Double?, newest: Double?) {
            self.entries = entries
            self.bytes = bytes
            self.oldest = oldest
            self.newest = newest
        }
    }

    /// The SQLite file.
    public let file: URL
    /// The size bound in bytes (headers and bodies).
    ///
    /// Default 100 MB.
    public let maximumBytes: Int
    /// Names and seals the entries.
    public let secret: CacheSecret
    private let opened: Opened
    /// The entries opened last, with the sealed bytes they came from.
    private let openings = Openings()
    /// The lookups made since the database last changed.
    private let recent = Recent()

    /// How many stored rows this cache has unsealed and decoded (a row read again unchanged is
    /// not): for tests.
    var unsealed: Int { openings.opened.load(ordering: .relaxed) }

    /// A recently used entry's last-use time is refreshed at most this often
    /// (seconds), so most cache hits need no write.
    static let touchInterval = 60.0

    /// The file name inside the cache folder.
    public static let fileName = "cache.sqlite"

    /// Opens (creating if needed) the cache in `directory`, now.
    ///
    /// - Parameters:
    ///   - directory: the cache folder, created owner-only when missing.
    ///   - secret: the key that names and seals entries (`CacheSecret(folder: APIMACRO_HOME)`).
    ///   - maximumBytes: the size bound; default 100 MB.
    /// - Throws: the file system's or SQLite's error when the folder cannot be created or the
    ///   database cannot be opened.
    public convenience init(directory: URL, secret: CacheSecret, maximumBytes: Int = 100_000_000) throws {
        self.init(openingOnFirstUse: directory, secret: secret, maximumBytes: maximumBytes)
        _ = try writer
    }

    /// The cache in `directory`, opened (and created if needed) by the first call that reads
    /// or writes it: a macro that never makes a cacheable request never opens SQLite.
    ///
    /// An error opening it is thrown by that call, and by every call for the next
    /// `retryInterval` seconds without trying again (a request does not pay for a failing
    /// open each time); the first call after that tries again, so a long-running host gets
    /// its cache back once the cause (a full disk, a folder's permissions) is gone. The
    /// cache stage warns once and goes on without the cache meanwhile.
    ///
    /// - Parameters:
    ///   - directory: the cache folder, created owner-only when missing.
    ///   - secret: the key that names and seals entries (`CacheSecret(folder: APIMACRO_HOME)`).
    ///   - maximumBytes: the size bound; default 100 MB.
    public convenience init(openingOnFirstUse directory: URL, secret: CacheSecret, maximumBytes: Int = 100_000_000) {
        self.init(openingOnFirstUse: directory, secret: secret, maximumBytes: maximumBytes, clock: Opened.uptime)
    }

    /// `init(openingOnFirstUse:secret:maximumBytes:)` with the clock that spaces the attempts
    /// to open (seconds, monotonic; tests set it).
    init(
        openingOnFirstUse directory: URL, secret: CacheSecret, maximumBytes: Int = 100_000_000,
        clock: @escaping @Sendable () -> Double
    ) {
        file = directory.appendingPathComponent(HTTPCache.fileName)
        self.maximumBytes = maximumBytes
        self.secret = secret
        opened = Opened(directory: directory, clock: clock)
    }

    /// After a failed open, later calls throw the same error for this long (seconds) before
    /// one tries again.
    public static let retryInterval = 30.0

    /// The connection that writes (and answers `summary`), opened on first use.
    private var writer: SQLiteDatabase {
        get throws { try opened.open().writer }
    }

    /// The connections that look entries up, opened with the writer.
    private var reader: CacheReader {
        get throws { try opened.open().reader }
    }

    /// The database once opened, or the last error opening it gave and when.
    private final class Opened: Sendable {
        struct Database: Sendable {
            let writer: SQLiteDatabase
            let reader: CacheReader
            /// The WAL index's header, which every commit changes (nil when it cannot be mapped).
            let walIndex: WALIndexHeader?
        }
        enum State {
            case closed
            case open(Database)
            case failed(any Error, at: Double)
        }

        let directory: URL
        let clock: @Sendable () -> Double
        let state = Mutex<State>(.closed)

        init(directory: URL, clock: @escaping @Sendable () -> Double) {
            self.directory = directory
            self.clock = clock
        }

        @Sendable static func uptime() -> Double { ProcessInfo.processInfo.systemUptime }

        func open() throws -> Database {
            try state.withLock { state in
                switch state {
                case .open(let database):
                    return database
                case .failed(let error, let at) where clock() - at < HTTPCache.retryInterval:
                    throw error
                case .closed, .failed:
                    do {
                        let writer = try HTTPCache.openWriter(directory)
                        let path = directory.appendingPathComponent(HTTPCache.fileName).path
                        // The writer has read in WAL mode, so SQLite has mapped its index.
                        let database = Database(
                            writer: writer, reader: CacheReader(path: path),
                            walIndex: WALIndexHeader(writer: writer))
                        state = .open(database)
                        return database
                    } catch {
                        state = .failed(error, at: clock())
                        throw error
                    }
                }
            }
        }
    }

    /// Creates the folder and the file owner-only, opens the writing connection (WAL mode, a
    /// 10 s busy timeout) and makes the table.
    private static func openWriter(_ directory: URL) throws -> SQLiteDatabase {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent(HTTPCache.fileName).path
        // Owner-only even though sealed (the WAL files inherit it).
        HTTPCache.createOwnerOnly(path)
        return try SQLiteConnection.retryingBusy {
            let connection = try SQLiteConnection(path: path, mode: .readWriteCreate, busyTimeout: 10)
            // Replaced and evicted entries are overwritten with zeros, not left in free pages.
            try connection.execute("PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON")
            try connection.execute("PRAGMA journal_mode = WAL")
            // IMMEDIATE: of several processes opening an old file at once, one migrates it.
            let change = try connection.transaction(.immediate) {
                try HTTPCache.makeSchema(connection, file: path)
            }
            if change == .droppedClearText { try connection.execute("VACUUM") }
            // A file just made leaves its tables in the WAL until the last connection closes:
            // copied in now, so `cache info` sizes a new cache as it will stay (a reader in
            // another process makes this wait, at most the busy timeout, or skips it).
            if change != .none { try? connection.checkpointTruncate() }
            return SQLiteDatabase(connection, label: "apimacro.cache")
        }
    }

    /// The file's layout (`PRAGMA user_version`): 3 is one sealed record per entry (status,
    /// headers and body under one seal) and, after a 304, the refreshed header record beside it.
    ///
    /// 2 (no version set) sealed the header record and the body apart; 1 kept them in clear in
    /// `response`.
    static let schemaVersion = 3

    /// What `makeSchema` did to the file.
    private enum SchemaChange { case none, made, droppedClearText }

    /// Makes the table, discarding the entries of an older layout (they are only a cache: the
    /// next requests fetch them again).
    ///
    /// - Throws: when the file was made by a newer apimacro, whose layout this one cannot read.
    private static func makeSchema(_ db: SQLiteConnection, file: String) throws -> SchemaChange {
        let version = try db.value("PRAGMA user_version")?.integer ?? 0
        if version == schemaVersion { return .none }
        guard version < schemaVersion else {
            throw APIError(
                .invalidRequest,
                "the HTTP cache \(file) was made by a newer apimacro (layout \(version)); run that version, or `apimacro cache clear` to start it afresh"
            )
        }
        // Versions before sealing kept bodies and headers in clear in `response`.
        let clearText = try db.tableExists("response")
        try db.execute(
            """
            DROP TABLE IF EXISTS response;
            DROP TABLE IF EXISTS entry;
            CREATE TABLE entry (
                key BLOB NOT NULL, variant BLOB NOT NULL, target BLOB NOT NULL,
                record BLOB NOT NULL, head BLOB,
                stored_at REAL NOT NULL, initial_age REAL NOT NULL, last_used REAL NOT NULL,
                size INTEGER NOT NULL, PRIMARY KEY (key, variant)) WITHOUT ROWID;
            CREATE INDEX entry_target ON entry(target);
            CREATE INDEX entry_last_used ON entry(last_used);
            PRAGMA user_version = \(schemaVersion);
            """)
        return clearText ? .droppedClearText : .made
    }

    /// Creates `path` empty with mode 0600 unless it exists, atomically, never
    /// replacing a file another process has just made. (Foundation's
    /// `createFile` writes a new file and renames it over the path: a process
    /// that checked for the file a moment before another created and filled
    /// the database swapped in an empty one, and the first lost its `entry`
    /// table or got a disk I/O error — "two processes writing the cache at
    /// once" failed that way under load.)
    static func createOwnerOnly(_ path: String) {
        // O_EXCL: a file that exists is never opened here. Closing a descriptor of a database
        // file drops every POSIX lock this process holds on it, SQLite's too (another connection
        // of this process, e.g. a second cache on the same folder, would lose its claim).
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Removes the cache files in `directory` (the database and its WAL and shared-memory
    /// files): for `cache clear` on a database too damaged to open.
    public static func destroy(directory: URL) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let path = directory.appendingPathComponent(fileName + suffix).path
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        }
    }

    /// The variants stored under `key` that open with the secret; marks them used at `now`
    /// (a write only when the last mark is older than a minute, skipped when the database is busy).
    ///
    /// One prepared SELECT on the calling thread through `CacheReader` (SQLite's C API): no
    /// reader-pool checkout, no transaction around it (one statement reads one snapshot of a
    /// WAL database) and no hop to another thread, so a hit costs no more than the read and
    /// the opening of its sealed records. A database locked past the reader's bounded wait
    /// (another process recovering the WAL) is a miss, not a wait.
    public nonisolated(nonsending) func entries(key: [UInt8], now: Double = Date().timeIntervalSince1970) async throws
        -> [Entry]
    {
        try entriesAtOnce(key: key, now: now)
    }

    /// `entries(key:now:)` on the calling thread, which it is in any case (for a cache hit
    /// answered without a task: `Stage.answerAtOnce`).
    ///
    /// A lookup repeated while nothing was written to the database, by any connection of any
    /// process (`WALIndexHeader`), gives what the last one read without reading again (`Recent`),
    /// unless an entry's LRU mark is due.
    public func entriesAtOnce(key: [UInt8], now: Double = Date().timeIntervalSince1970) throws -> [Entry] {
        let secret = secret
        let database = try opened.open()
        // Read before the rows: a commit in between makes the next lookup read again.
        let stamp = database.walIndex?.stamp()
        if let stamp, let known = recent.entries(key, at: stamp, now: now) { return known }
        recent.reads.add(1, ordering: .relaxed)
        var found: [Entry] = []
        var stale: [[UInt8]] = []
        var marked = Double.infinity
        do {
            try database.reader.rows(key: key) { row in
                let variant = Array(row.variant)
                guard let entry = opened(row, key: key, variant: variant, secret: secret) else { return }
                found.append(entry)
                marked = min(marked, row.lastUsed)
                if now - row.lastUsed > HTTPCache.touchInterval { stale.append(variant) }
            }
        } catch is CacheReader.Busy {
            return []
        }
        // One UPDATE per variant, each its own (autocommit) transaction: an LRU mark needs no more.
        if !stale.isEmpty {
            try database.reader.touch(key: key, variants: stale, now: now)
        } else if let stamp {
            recent.keep(key, found, marked: marked, at: stamp)
        }
        return found
    }

    /// How many lookups read the database (a lookup `Recent` answered does not): for tests.
    var reads: Int { recent.reads.load(ordering: .relaxed) }

    /// The lookups made since the database last changed (`WALIndexHeader`), each with the entries
    /// it found and the oldest LRU mark among them: the same lookup again, with the header as it
    /// was, finds the same rows, so it is given them without reading (about 10 k instructions of
    /// SQLite's and the compare of the sealed bytes).
    ///
    /// Emptied by the first lookup that sees the header changed. In memory only, as what a hit
    /// hands back is; at most `capacity` lookups, of bodies of at most `Openings.largest` bytes
    /// in all (a lookup of larger ones reads each time, as it did).
    private final class Recent: Sendable {
        static let capacity = 16

        struct Found {
            let key: [UInt8]
            let entries: [Entry]
            /// The oldest `last_used` of the rows found: past `touchInterval`, the lookup reads (and marks).
            let marked: Double
        }

        private let state = Mutex<(stamp: WALIndexHeader.Stamp, found: [Found])>((.init(repeating: 0), []))
        /// How many lookups read the database (tests).
        let reads = Atomic<Int>(0)

        func entries(_ key: [UInt8], at stamp: WALIndexHeader.Stamp, now: Double) -> [Entry]? {
            state.withLock { state in
                guard state.stamp == stamp, let found = state.found.last(where: { $0.key == key }),
                    now - found.marked <= HTTPCache.touchInterval
                else { return nil }
                return found.entries
            }
        }

        func keep(_ key: [UInt8], _ entries: [Entry], marked: Double, at stamp: WALIndexHeader.Stamp) {
            guard entries.reduce(0, { $0 + $1.body.count }) <= Openings.largest else { return }
            let found = Found(key: key, entries: entries, marked: marked)
            state.withLock { state in
                if state.stamp != stamp { state = (stamp, []) }
                state.found.removeAll { $0.key == key }
                if state.found.count >= Recent.capacity { state.found.removeFirst() }
                state.found.append(found)
            }
        }
    }

    /// Stores `entry` (replacing the variant under its key), then evicts the least
    /// recently used entries while the cache is over its bound.
    ///
    /// Its status, headers and body are sealed together: a hit opens one record.
    public nonisolated(nonsending) func store(_ entry: Entry, now: Double = Date().timeIntervalSince1970) async throws {
        let head = HTTPCache.encode(status: entry.status, varyNames: entry.varyNames, headers: entry.headers)
        var plain = entry.body
        plain.reserveCapacity(entry.body.count + head.count + 4)
        plain += head
        HTTPCache.appendNumber(head.count, to: &plain)
        let record = try secret.seal(plain, context: HTTPCache.context(entry.key, entry.variant, "record"))
        let size = record.count
        let limit = maximumBytes
        guard size <= limit else { return }
        let values: [SQLiteValue] = [
            .blob(entry.key), .blob(entry.variant), .blob(entry.target), .blob(record), .real(entry.storedAt),
            .real(entry.initialAge), .real(now), .integer(Int64(size)),
        ]
        try await writer.withConnectionOffThread { db in
            try db.transaction(.immediate) {
                try db.execute(
                    """
                    INSERT OR REPLACE INTO entry
                    (key, variant, target, record, head, stored_at, initial_age, last_used, size)
                    VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?)
                    """, values)
                try HTTPCache.evict(db, limit: limit)
            }
        }
    }

    /// After a 304: the variant's headers replaced (a small sealed header record beside the
    /// entry's record, which is not re-sealed or rewritten) and its freshness clock restarted.
    ///
    /// One UPDATE of one row on the calling thread through `CacheReader` (autocommit: it is its
    /// own transaction); its LRU mark moves only when it is a minute old, as on a hit. When
    /// another process holds the write lock past the reader's bounded wait, the UPDATE goes
    /// through the writing connection instead, on its own queue, awaited (it does not hold the thread).
    ///
    /// With `headersChanged` false (the 304 left every stored header as it was), the head is
    /// neither sealed nor written: the UPDATE restarts the clock alone, in the same one statement.
    public nonisolated(nonsending) func refresh(_ entry: Entry, headersChanged: Bool = true) async throws {
        let head: [UInt8]? =
            headersChanged
            ? try secret.seal(
                HTTPCache.encode(status: entry.status, varyNames: entry.varyNames, headers: entry.headers),
                context: HTTPCache.context(entry.key, entry.variant, "head")) : nil
        let written = try reader.refresh(
            key: entry.key, variant: entry.variant, head: head, storedAt: entry.storedAt,
            initialAge: entry.initialAge, touchInterval: HTTPCache.touchInterval)
        if written { return }
        let values: [SQLiteValue] = [
            head.map { .blob($0) } ?? .null, .real(entry.storedAt), .real(entry.initialAge),
            .real(HTTPCache.touchInterval), .blob(entry.key), .blob(entry.variant),
        ]
        try await writer.withConnectionOffThread { db in try db.execute(CacheReader.refreshSQL, values) }
    }

    /// Removes every entry stored for these URL hashes (any credential, any variant).
    public nonisolated(nonsending) func invalidate(targets: [[UInt8]]) async throws {
        guard !targets.isEmpty else { return }
        try await writer.withConnectionOffThread { db in
            try db.transaction(.immediate) {
                let statement = try db.prepare("DELETE FROM entry WHERE target = ?")
                for target in targets { try statement.execute([.blob(target)]) }
            }
        }
    }

    /// Entries, bytes, and the oldest and newest storage times.
    public func summary() throws -> Summary {
        try writer.withConnection { db in
            let row =
                try db.rows("SELECT count(*), coalesce(sum(size), 0), min(stored_at), max(stored_at) FROM entry").first
                ?? [.null, .null, .null, .null]
            return Summary(
                entries: Int(row[0].integer ?? 0), bytes: Int(row[1].integer ?? 0), oldest: row[2].real,
                newest: row[3].real)
        }
    }

    /// Removes every entry and gives the space back to the file system; returns how many
    /// entries there were.
    ///
    /// VACUUM rebuilds the database without its free pages, but in WAL mode it writes the new
    /// file into the WAL: a TRUNCATE checkpoint then copies it into `cache.sqlite`, shortens that
    /// file, and empties the WAL. Safe while other processes use the cache (SQLite's own
    /// locking; no file is removed). The checkpoint waits for their reads up to the busy
    /// timeout; one still reading then keeps the WAL's size until a later checkpoint
    /// (`diskBytes(directory:)` shows what is on disk).
    @discardableResult
    public func clear() throws -> Int {
        try writer.withConnection { db in
            let removed = try db.transaction(.immediate) {
                try db.execute("DELETE FROM entry")
                return db.changes
            }
            try db.execute("VACUUM")
            // SQLITE_BUSY: another process is reading; what could be copied was, and the space
            // comes back at a later checkpoint.
            do {
                try db.checkpointTruncate()
            } catch let error as SQLiteError where error.code == .busy {}
            return removed
        }
    }

    /// The bytes the cache's files in `directory` take on disk: by default the database, its WAL
    /// and its shared-memory index (`suffixes` of `cache.sqlite`).
    public static func diskBytes(directory: URL, suffixes: [String] = ["", "-wal", "-shm"]) -> Int {
        suffixes.reduce(0) { total, suffix in
            var status = stat()
            let path = directory.appendingPathComponent(fileName + suffix).path
            return total + (stat(path, &status) == 0 ? Int(status.st_size) : 0)
        }
    }

    /// Deletes least recently used entries until the total is at most 90 % of `limit`.
    private static func evict(_ db: SQLiteConnection, limit: Int) throws {
        var total = Int(try db.value("SELECT coalesce(sum(size), 0) FROM entry")?.integer ?? 0)
        guard total > limit else { return }
        let target = limit / 10 * 9
        let rows = try db.prepare("SELECT key, variant, size FROM entry ORDER BY last_used")
        var doomed: [(key: [UInt8], variant: [UInt8])] = []
        while total > target, try rows.step() {
            doomed.append((rows.blob(0), rows.blob(1)))
            total -= Int(rows.int64(2))
        }
        rows.reset()
        let delete = try db.prepare("DELETE FROM entry WHERE key = ? AND variant = ?")
        for (key, variant) in doomed { try delete.execute([.blob(key), .blob(variant)]) }
    }

    /// The entry in `row`: the one opened before from the very same sealed bytes (`Opening`),
    /// else opened now; nil when it does not open with `secret` or its record is damaged.
    private func opened(_ row: CacheReader.Row, key: [UInt8], variant: [UInt8], secret: CacheSecret) -> Entry? {
        if var entry = openings.entry(row, key: key, variant: variant) {
            // The clock is the row's, in clear beside the seal (a 304 may move it alone).
            entry.storedAt = row.storedAt
            entry.initialAge = row.initialAge
            return entry
        }
        openings.opened.add(1, ordering: .relaxed)
        guard var entry = HTTPCache.open(row, key: key, variant: variant, secret: secret) else { return nil }
        // Parsed once here, the entry's `Cache-Control` serves every later decision on it.
        entry.directives = CachePolicy.directives(entry.headers)
        openings.keep(entry, row)
        return entry
    }

    /// The entries this process opened last, each with the sealed bytes it was opened from: a
    /// row read again whose record and header record are byte for byte those bytes holds that
    /// entry (unsealing the same bytes under the same key and context gives the same plain
    /// text), so a repeated hit or 304 reads the row but does not unseal and decode it again
    /// (about 20 k instructions, 35 k with a header record).
    ///
    /// Nothing is trusted without the read: a row another process or connection replaced or
    /// refreshed was sealed again with a fresh nonce, its bytes differ, and it is opened anew.
    /// In memory only, as what a hit hands back is; at most `capacity` entries of at most
    /// `largest` sealed bytes each (the least recently used goes first).
    private final class Openings: Sendable {
        static let capacity = 16
        static let largest = 256 * 1024

        struct Opening {
            let key: [UInt8]
            let variant: [UInt8]
            let record: [UInt8]
            let head: [UInt8]
            let entry: Entry
        }

        private let kept = Mutex<[Opening]>([])
        /// How many rows were unsealed (tests).
        let opened = Atomic<Int>(0)

        func entry(_ row: CacheReader.Row, key: [UInt8], variant: [UInt8]) -> Entry? {
            kept.withLock { kept in
                guard
                    let index = kept.lastIndex(where: { opening in
                        opening.key == key && opening.variant == variant
                            && Openings.same(opening.record, row.record) && Openings.same(opening.head, row.head)
                    })
                else { return nil }
                let opening = kept.remove(at: index)
                kept.append(opening)
                return opening.entry
            }
        }

        func keep(_ entry: Entry, _ row: CacheReader.Row) {
            guard row.record.count + row.head.count <= Openings.largest else { return }
            let opening = Opening(
                key: entry.key, variant: entry.variant, record: Array(row.record), head: Array(row.head), entry: entry)
            kept.withLock { kept in
                kept.removeAll { $0.key == entry.key && $0.variant == entry.variant }
                if kept.count >= Openings.capacity { kept.removeFirst() }
                kept.append(opening)
            }
        }

        static func same(_ kept: [UInt8], _ read: UnsafeRawBufferPointer) -> Bool {
            guard kept.count == read.count else { return false }
            guard let base = read.baseAddress else { return true }  // both empty
            return kept.withUnsafeBytes { bytes in
                guard let start = bytes.baseAddress else { return false }
                return memcmp(start, base, read.count) == 0
            }
        }
    }

    /// The entry in `row`, or nil when it does not open with `secret` or its record is damaged.
    ///
    /// One ChaChaPoly open, two when a 304 refreshed the headers.
    private static func open(_ row: CacheReader.Row, key: [UInt8], variant: [UInt8], secret: CacheSecret) -> Entry? {
        // The record is the body, the header record, and the header record's length (4 bytes).
        guard var body = secret.unseal(row.record, context: context(key, variant, "record")), body.count >= 4
        else { return nil }
        let end = body.count - 4
        let headCount =
            Int(body[end]) << 24 | Int(body[end + 1]) << 16 | Int(body[end + 2]) << 8 | Int(body[end + 3])
        guard headCount <= end else { return nil }
        let head: [UInt8]
        if row.head.isEmpty {
            head = Array(body[(end - headCount)..<end])
        } else {
            guard let refreshed = secret.unseal(row.head, context: context(key, variant, "head")) else { return nil }
            head = refreshed
        }
        guard let (status, varyNames, headers) = decode(head) else { return nil }
        body.removeLast(headCount + 4)
        return Entry(
            key: key, variant: variant, target: Array(row.target), status: status, headers: headers, body: body,
            varyNames: varyNames, storedAt: row.storedAt, initialAge: row.initialAge)
    }

    /// What a sealed value is bound to: its entry and its role.
    static func context(_ key: [UInt8], _ variant: [UInt8], _ role: String) -> [UInt8] {
        key + [UInt8(variant.count)] + variant + Array(role.utf8)
    }

    /// `value` as 4 bytes, most significant first.
    static func appendNumber(_ value: Int, to out: inout [UInt8]) {
        let v = UInt32(clamping: value)
        out += [
            UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8),
            UInt8(truncatingIfNeeded: v),
        ]
    }

    /// Status, vary names and headers as length-prefixed strings (no JSON on the hit path).
    static func encode(status: Int, varyNames: [String], headers: Headers) -> [UInt8] {
        var out: [UInt8] = []
        func append(_ value: Int) {
            let v = UInt32(clamping: value)
            out += [
                UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16),
                UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v),
            ]
        }
        func append(_ text: String) {
            append(text.utf8.count)
            out += text.utf8
        }
        append(status)
        append(varyNames.count)
        for name in varyNames { append(name) }
        append(headers.fields.count)
        for field in headers.fields {
            append(field.name)
            append(field.value)
        }
        return out
    }

    /// The inverse of `encode`; nil when the record is damaged.
    static func decode(_ bytes: [UInt8]) -> (Int, [String], Headers)? {
        var index = 0
        func number() -> Int? {
            guard index + 4 <= bytes.count else { return nil }
            let value =
                Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
                | Int(bytes[index + 3])
            index += 4
            return value
        }
        func text() -> String? {
            guard let count = number(), count <= bytes.count - index else { return nil }
            defer { index += count }
            return String(decoding: bytes[index..<(index + count)], as: UTF8.self)
        }
        guard let status = number(), let varyCount = number(), varyCount <= bytes.count else { return nil }
        var names: [String] = []
        for _ in 0..<varyCount {
            guard let name = text() else { return nil }
            names.append(name)
        }
        guard let fieldCount = number(), fieldCount <= bytes.count else { return nil }
        var fields: [(String, String)] = []
        fields.reserveCapacity(fieldCount)
        for _ in 0..<fieldCount {
            guard let name = text(), let value = text() else { return nil }
            fields.append((name, value))
        }
        return (status, names, Headers(fields))
    }
}
