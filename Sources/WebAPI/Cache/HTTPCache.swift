import Foundation
import GRDB

/// The persistent HTTP cache: stored GET responses in one SQLite file
/// (`cache.sqlite` under `$XDG_CACHE_HOME/apimacro`), shared safely by
/// concurrent apimacro processes (WAL mode, immediate write transactions, a
/// busy timeout). Bounded in size; the least recently used entries go first.
///
/// Keys are SHA-256 digests made by `CacheStage` (they cover the credential,
/// which is never stored); the URL column is redacted and only for people.
public final class HTTPCache: Sendable {
    /// One stored response.
    public struct Entry: Sendable {
        /// The digest that names the request.
        public var key: String
        /// The request's URL, credentials redacted (for `cache info` and warnings).
        public var url: String
        public var status: Int
        public var headers: Headers
        public var body: [UInt8]
        /// The lower-cased request header names the response varies on.
        public var varyNames: [String]
        /// A digest of the request's values of those headers.
        public var varyDigest: String
        /// When the response was received or last revalidated, seconds since 1970.
        public var storedAt: Double

        public init(
            key: String, url: String, status: Int, headers: Headers, body: [UInt8], varyNames: [String],
            varyDigest: String, storedAt: Double
        ) {
            self.key = key
            self.url = url
            self.status = status
            self.headers = headers
            self.body = body
            self.varyNames = varyNames
            self.varyDigest = varyDigest
            self.storedAt = storedAt
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
    /// The size bound in bytes (headers and bodies). Default 100 MB.
    public let maximumBytes: Int
    private let pool: DatabasePool

    /// A recently used entry's last-use time is refreshed at most this often
    /// (seconds), so most cache hits need no write.
    static let touchInterval = 60.0

    /// Opens (creating if needed) the cache in `directory`.
    /// - Parameter maximumBytes: the size bound; default 100 MB.
    public init(directory: URL, maximumBytes: Int = 100_000_000) throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        file = directory.appendingPathComponent("cache.sqlite")
        self.maximumBytes = maximumBytes
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "apimacro.cache"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let path = file.path
        if !FileManager.default.fileExists(atPath: path) {
            // Bodies may echo what the user sent: readable by the owner only (the WAL files inherit it).
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        pool = try HTTPCache.retryingBusy {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS response (
                            key TEXT PRIMARY KEY, url TEXT NOT NULL, status INTEGER NOT NULL,
                            headers BLOB NOT NULL, body BLOB NOT NULL, vary TEXT NOT NULL, vary_digest TEXT NOT NULL,
                            stored_at REAL NOT NULL, last_used REAL NOT NULL, size INTEGER NOT NULL);
                        CREATE INDEX IF NOT EXISTS response_last_used ON response(last_used);
                        """)
            }
            return pool
        }
    }

    /// Switching a new file to WAL mode takes a lock SQLite's busy handler does
    /// not wait for: when several processes open a fresh cache at once, try again.
    private static func retryingBusy<T>(_ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                attempt += 1
                if attempt >= 50 { throw error }
                Thread.sleep(forTimeInterval: 0.02 * Double(min(attempt, 10)))
            }
        }
    }

    /// The entry stored under `key`, if any; marks it used at `now`.
    public func entry(key: String, now: Double = Date().timeIntervalSince1970) async throws -> Entry? {
        let found = try await pool.read { db -> (Entry, Double)? in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM response WHERE key = ?", arguments: [key]) else {
                return nil
            }
            return (try HTTPCache.entry(row), row["last_used"] as Double)
        }
        guard let (entry, lastUsed) = found else { return nil }
        if now - lastUsed > HTTPCache.touchInterval {
            try await pool.write { db in
                try db.execute(sql: "UPDATE response SET last_used = ? WHERE key = ?", arguments: [now, key])
            }
        }
        return entry
    }

    /// Stores `entry` (replacing what was under its key), then evicts the least
    /// recently used entries while the cache is over its bound.
    public func store(_ entry: Entry, now: Double = Date().timeIntervalSince1970) async throws {
        let headers = try HTTPCache.encode(entry.headers)
        let size = headers.count + entry.body.count
        let limit = maximumBytes
        guard size <= limit else { return }
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO response
                    (key, url, status, headers, body, vary, vary_digest, stored_at, last_used, size)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    entry.key, entry.url, entry.status, headers, Data(entry.body), entry.varyNames.joined(separator: ","),
                    entry.varyDigest, entry.storedAt, now, size,
                ])
            try HTTPCache.evict(db, limit: limit)
        }
    }

    /// After a 304: the stored headers updated, the freshness clock restarted.
    public func refresh(key: String, headers: Headers, storedAt: Double) async throws {
        let encoded = try HTTPCache.encode(headers)
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE response SET headers = ?, stored_at = ?, last_used = ?, size = length(body) + ? WHERE key = ?",
                arguments: [encoded, storedAt, storedAt, encoded.count, key])
        }
    }

    /// Entries, bytes, and the oldest and newest storage times.
    public func summary() throws -> Summary {
        try pool.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes, min(stored_at) AS oldest, max(stored_at) AS newest FROM response")
            return Summary(
                entries: row?["n"] ?? 0, bytes: row?["bytes"] ?? 0, oldest: row?["oldest"], newest: row?["newest"])
        }
    }

    /// Removes every entry; returns how many there were.
    @discardableResult
    public func clear() throws -> Int {
        let removed = try pool.write { db -> Int in
            try db.execute(sql: "DELETE FROM response")
            return db.changesCount
        }
        try pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        return removed
    }

    /// Deletes least recently used entries until the total is at most 90 % of `limit`.
    private static func evict(_ db: Database, limit: Int) throws {
        var total = try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM response") ?? 0
        guard total > limit else { return }
        let target = limit / 10 * 9
        let rows = try Row.fetchCursor(db, sql: "SELECT key, size FROM response ORDER BY last_used")
        var doomed: [String] = []
        while total > target, let row = try rows.next() {
            doomed.append(row["key"])
            total -= row["size"] as Int
        }
        for key in doomed {
            try db.execute(sql: "DELETE FROM response WHERE key = ?", arguments: [key])
        }
    }

    private static func entry(_ row: Row) throws -> Entry {
        let vary: String = row["vary"]
        return Entry(
            key: row["key"], url: row["url"], status: row["status"], headers: try decode(row["headers"]),
            body: Array(row["body"] as Data), varyNames: vary.split(separator: ",").map(String.init),
            varyDigest: row["vary_digest"], storedAt: row["stored_at"])
    }

    private static func encode(_ headers: Headers) throws -> Data {
        try JSONEncoder().encode(headers.fields.map { [$0.name, $0.value] })
    }

    private static func decode(_ data: Data) throws -> Headers {
        let pairs = try JSONDecoder().decode([[String]].self, from: data)
        return Headers(pairs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil })
    }
}
