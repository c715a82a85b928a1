import CSQLite
import Foundation
import Synchronization
import Testing

@testable import WebAPI

@Suite("the cache database file")
struct HTTPCacheFileTests {
    /// Two processes opening a fresh cache at once: the second must not replace the file the
    /// first has just created and filled (Foundation's createFile renames a new file over it).
    @Test("creating the file keeps one another process already made, content and inode")
    func creationNeverReplaces() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(HTTPCache.fileName).path
        try Data("SQLite format 3\0 and pages".utf8).write(to: URL(fileURLWithPath: path))
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        HTTPCache.createOwnerOnly(path)
        let after = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "SQLite format 3\0 and pages")
        #expect(before != nil && before == after)
    }

    /// The file is made in place by one `open(O_CREAT)`, never written under another name and
    /// renamed over the path: a rename replaces whatever another process made between a check
    /// for the file and the rename.
    ///
    /// Watched with inotify, the folder sees exactly one event, the creation of `cache.sqlite`
    /// itself. (Foundation's `createFile`, checked or not, shows a temporary file created and
    /// then moved to the path, and fails this test.)
    @Test("the file is created in place, never renamed over the path")
    func creationIsInPlace() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let watch = inotify_init1(0)
        try #require(watch >= 0)
        defer { close(watch) }
        _ = fcntl(watch, F_SETFL, O_NONBLOCK)
        try #require(inotify_add_watch(watch, directory.path, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0)
        HTTPCache.createOwnerOnly(directory.appendingPathComponent(HTTPCache.fileName).path)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        var events: [String] = []
        var offset = 0
        while count > 0, offset + 16 <= count {
            let mask = buffer[offset + 4..<offset + 8].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let length = Int(buffer[offset + 12..<offset + 16].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let name = buffer[offset + 16..<offset + 16 + length].prefix { $0 != 0 }
            events.append(
                (mask & UInt32(IN_MOVED_TO) != 0 ? "moved " : "created ") + String(decoding: name, as: UTF8.self))
            offset += 16 + length
        }
        #expect(events == ["created \(HTTPCache.fileName)"])
    }

    @Test("a new file is created empty and owner-only")
    func creationIsOwnerOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(HTTPCache.fileName).path
        HTTPCache.createOwnerOnly(path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((attributes[.size] as? Int) == 0)
    }

    @Test(
        "a cache opened on first use touches nothing until then; a failure to open is not retried within the retry interval"
    )
    func openedOnFirstUse() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-file-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("cache")
        let cache = HTTPCache(openingOnFirstUse: directory, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)))
        #expect(!FileManager.default.fileExists(atPath: directory.path), "the folder was made before any use")
        #expect(try await cache.entries(key: Array(repeating: 1, count: 32)).isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: cache.file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // A folder that cannot be made (a file stands in its place): every use throws the same
        // error, and the file is not tried again once the cause is gone.
        let blocked = root.appendingPathComponent("blocked")
        try Data("not a folder".utf8).write(to: blocked)
        // A clock that stands still: the retry interval never passes (no dependence on speed).
        let broken = HTTPCache(
            openingOnFirstUse: blocked, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)), clock: { 0 })
        await #expect(throws: (any Error).self) { try await broken.entries(key: [1]) }
        try FileManager.default.removeItem(at: blocked)
        await #expect(throws: (any Error).self) { try await broken.entries(key: [1]) }
        #expect(!FileManager.default.fileExists(atPath: blocked.path), "a failed open was tried again")
    }

    /// A failed open is not kept for the life of the process: once `retryInterval` has passed
    /// (the clock set by the test) the next use tries again and gets the cache. (Before, the
    /// first error was kept and thrown by every later call.)
    @Test("a failed open is tried again after the retry interval, and the cache works once the cause is gone")
    func failedOpenRetried() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-file-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let blocked = root.appendingPathComponent("blocked")
        try Data("not a folder".utf8).write(to: blocked)
        let clock = Mutex(1000.0)
        let cache = HTTPCache(
            openingOnFirstUse: blocked, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)),
            clock: { clock.withLock { $0 } })
        await #expect(throws: (any Error).self) { try await cache.entries(key: [1]) }
        try FileManager.default.removeItem(at: blocked)
        clock.withLock { $0 += HTTPCache.retryInterval - 1 }
        await #expect(throws: (any Error).self) { try await cache.entries(key: [1]) }
        clock.withLock { $0 += 2 }
        #expect(try await cache.entries(key: [1]).isEmpty)
        #expect(FileManager.default.fileExists(atPath: cache.file.path))
    }

    /// The cache never closes a descriptor of its WAL index: this process's lock on it stays.
    ///
    /// SQLite's locks on a file are POSIX record locks, which the kernel drops for the whole
    /// process when any descriptor of that file is closed. The cache once opened and closed
    /// `cache.sqlite-shm` itself (to read the WAL index's header): this process's claim on the
    /// index went with it, and a connection of another process opening the cache next believed
    /// itself the first, truncated the index and rebuilt it under this one, whose next commit
    /// died of SIGBUS in `sqlite3WalFrames` (`batch -j 4` of README's macro, 1 run in 30).
    @Test("the cache keeps this process's SQLite lock on its WAL index once opened and read (/proc/locks)")
    func walIndexLockKept() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-file-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let secret = CacheSecret(bytes: Array(repeating: 7, count: 32))
        let cache = HTTPCache(openingOnFirstUse: root.appendingPathComponent("cache"), secret: secret)
        // Opens the database and reads the WAL index's header (the at-once lookup's stamp).
        #expect(try cache.entriesAtOnce(key: Array(repeating: 1, count: 32)).isEmpty)
        #expect(try cache.entriesAtOnce(key: Array(repeating: 1, count: 32)).isEmpty)
        var status = stat()
        #expect(stat(cache.file.path + "-shm", &status) == 0, "no WAL index beside \(cache.file.path)")
        // "1: POSIX  ADVISORY  READ 4242 fe:00:1234567 128 128": kind, pid, device:inode.
        let locks = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
        let held = locks.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ")
            return fields.count >= 6 && fields[1] == "POSIX" && fields[4] == "\(getpid())"
                && fields[5].hasSuffix(":\(status.st_ino)")
        }
        #expect(!held.isEmpty, "this process holds no lock on its cache's WAL index:\n\(locks)")
    }
}

/// A clock a test sets by hand (the cache stage's `now`).
final class TestClock: Sendable {
    private let value: Mutex<Double>
    init(_ start: Double) { value = Mutex(start) }
    var now: Double { value.withLock { $0 } }
    func set(_ seconds: Double) { value.withLock { $0 = seconds } }
}

/// Runs `sql` on the database at `path` with SQLite's C API (a file as another version left it).
func execute(_ path: String, _ sql: String) -> Int32 {
    var database: OpaquePointer?
    guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
        sqlite3_close_v2(database)
        return SQLITE_CANTOPEN
    }
    defer { sqlite3_close_v2(database) }
    return sqlite3_exec(database, sql, nil, nil, nil)
}

/// The first integer `sql` gives on the database at `path`.
func integer(_ path: String, _ sql: String) -> Int? {
    text(path, sql).flatMap { Int($0) }
}

/// The first value `sql` gives on the database at `path`, as text.
func text(_ path: String, _ sql: String) -> String? {
    var database: OpaquePointer?
    guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return nil }
    defer { sqlite3_close_v2(database) }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
    defer { sqlite3_finalize(statement) }
    guard sqlite3_step(statement) == SQLITE_ROW, let value = sqlite3_column_text(statement, 0) else { return nil }
    return String(cString: value)
}

@Suite("the cache file's layout")
struct HTTPCacheLayoutTests {
    func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-layout-\(UUID().uuidString)")
    }

    /// A file of layout 2 (header record and body sealed apart, no version set): its entries are
    /// discarded, the file is not an error, and the cache works in layout 3 at once.
    @Test("a cache file of the previous layout is discarded cleanly, never an error")
    func previousLayoutDiscarded() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(HTTPCache.fileName).path
        #expect(
            execute(
                path,
                """
                PRAGMA journal_mode = WAL;
                CREATE TABLE entry (
                    key BLOB NOT NULL, variant BLOB NOT NULL, target BLOB NOT NULL,
                    meta BLOB NOT NULL, body BLOB NOT NULL,
                    stored_at REAL NOT NULL, initial_age REAL NOT NULL, last_used REAL NOT NULL,
                    size INTEGER NOT NULL, PRIMARY KEY (key, variant)) WITHOUT ROWID;
                CREATE INDEX entry_target ON entry(target);
                CREATE INDEX entry_last_used ON entry(last_used);
                INSERT INTO entry VALUES (x'01', x'', x'02', x'0303', x'0404', 1, 0, 1, 4);
                """) == SQLITE_OK)
        let secret = CacheSecret(bytes: Array(repeating: 7, count: 32))
        let cache = try HTTPCache(directory: directory, secret: secret)
        #expect(try await cache.entries(key: [1]).isEmpty)
        #expect(try cache.summary().entries == 0)
        #expect(integer(path, "PRAGMA user_version") == HTTPCache.schemaVersion)
        let key = Array(repeating: UInt8(9), count: 32)
        try await cache.store(
            HTTPCache.Entry(
                key: key, target: [2], status: 200, headers: Headers([("ETag", "\"a\"")]), body: Array("hi".utf8),
                storedAt: 5))
        let found = try #require(try await cache.entries(key: key).first)
        #expect(found.body == Array("hi".utf8) && found.headers["etag"] == "\"a\"" && found.status == 200)
        // A second process opening it finds layout 3 and keeps the entry.
        let again = try HTTPCache(directory: directory, secret: secret)
        #expect(try await again.entries(key: key).count == 1)
    }

    /// A cache file as the GRDB version (up to e71ccfe) left it is served as it is.
    ///
    /// Its `DatabasePool` in WAL mode ran the same `CREATE TABLE` and `PRAGMA user_version = 3`
    /// (no migrator table), and `store` bound the key, variant (a blob of length zero when none),
    /// target and record as blobs. The SQLite version opens it as it is: every entry served, a 304's head honoured, nothing dropped.
    @Test("a cache file the GRDB version wrote is served as it is, every entry kept")
    func grdbVersionFileServed() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(HTTPCache.fileName).path
        #expect(
            execute(
                path,
                """
                PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON; PRAGMA journal_mode = WAL;
                BEGIN IMMEDIATE;
                CREATE TABLE entry (
                    key BLOB NOT NULL, variant BLOB NOT NULL, target BLOB NOT NULL,
                    record BLOB NOT NULL, head BLOB,
                    stored_at REAL NOT NULL, initial_age REAL NOT NULL, last_used REAL NOT NULL,
                    size INTEGER NOT NULL, PRIMARY KEY (key, variant)) WITHOUT ROWID;
                CREATE INDEX entry_target ON entry(target);
                CREATE INDEX entry_last_used ON entry(last_used);
                PRAGMA user_version = 3;
                COMMIT;
                """) == SQLITE_OK)
        let secret = CacheSecret(bytes: Array(repeating: 7, count: 32))
        // Sealed as the GRDB version's `store` and `refresh` sealed them (the format is unchanged).
        func record(_ key: [UInt8], _ variant: [UInt8], status: Int, headers: Headers, body: String) throws -> [UInt8] {
            let head = HTTPCache.encode(status: status, varyNames: variant.isEmpty ? [] : ["accept"], headers: headers)
            var plain = Array(body.utf8) + head
            HTTPCache.appendNumber(head.count, to: &plain)
            return try secret.seal(plain, context: HTTPCache.context(key, variant, "record"))
        }
        let plainKey = Array(repeating: UInt8(1), count: 32)
        let variedKey = Array(repeating: UInt8(2), count: 32)
        let refreshedHead = try secret.seal(
            HTTPCache.encode(status: 200, varyNames: [], headers: Headers([("ETag", "\"b\"")])),
            context: HTTPCache.context(variedKey, [9], "head"))
        let rows: [(key: [UInt8], variant: [UInt8], record: [UInt8], head: [UInt8]?)] = [
            (
                plainKey, [], try record(plainKey, [], status: 200, headers: Headers([("ETag", "\"a\"")]), body: "one"),
                nil
            ),
            (variedKey, [8], try record(variedKey, [8], status: 200, headers: Headers([]), body: "two"), nil),
            (
                variedKey, [9],
                try record(variedKey, [9], status: 203, headers: Headers([("ETag", "\"x\"")]), body: "three"),
                refreshedHead
            ),
        ]
        do {
            let writer = try SQLiteConnection(path: path, mode: .readWrite, busyTimeout: 5)
            for row in rows {
                try writer.execute(
                    """
                    INSERT OR REPLACE INTO entry
                    (key, variant, target, record, head, stored_at, initial_age, last_used, size)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .blob(row.key), .blob(row.variant), .blob([3]), .blob(row.record),
                        row.head.map { .blob($0) } ?? .null,
                        .real(100), .real(0), .real(100), .integer(Int64(row.record.count + (row.head?.count ?? 0))),
                    ])
            }
        }
        #expect(
            text(
                path,
                "SELECT typeof(variant) || length(variant) FROM entry WHERE key = x'\(String(repeating: "01", count: 32))'"
            ) == "blob0")
        let cache = try HTTPCache(directory: directory, secret: secret)
        #expect(try cache.summary().entries == 3)
        let plain = try await cache.entries(key: plainKey, now: 100)
        #expect(plain.map { String(decoding: $0.body, as: UTF8.self) } == ["one"])
        #expect(plain.first?.headers["etag"] == "\"a\"" && plain.first?.storedAt == 100)
        let varied = try await cache.entries(key: variedKey, now: 100).sorted {
            $0.variant.lexicographicallyPrecedes($1.variant)
        }
        #expect(varied.map { String(decoding: $0.body, as: UTF8.self) } == ["two", "three"])
        #expect(varied.last?.headers["etag"] == "\"b\"" && varied.last?.status == 200)
        // Invalidation by target works on the old file too.
        try await cache.invalidate(targets: [[3]])
        #expect(try cache.summary().entries == 0)
        #expect(integer(path, "PRAGMA user_version") == HTTPCache.schemaVersion)
    }

    @Test("a cache file of a newer layout is refused with what to do, and left as it is")
    func newerLayoutRefused() throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(HTTPCache.fileName).path
        #expect(execute(path, "CREATE TABLE future (x); PRAGMA user_version = 99") == SQLITE_OK)
        do {
            _ = try HTTPCache(directory: directory, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)))
            Issue.record("a newer layout was opened")
        } catch let error as APIError {
            #expect(error.message.contains("newer apimacro") && error.message.contains("cache clear"), "\(error)")
        }
        #expect(integer(path, "PRAGMA user_version") == 99)
        #expect(integer(path, "SELECT count(*) FROM sqlite_master WHERE name = 'future'") == 1)
    }

    /// A 304 stores the refreshed headers beside the record: the record's bytes are not rewritten
    /// (no body re-sealed), the next hit sees the new headers and the old body.
    @Test("a 304's refresh leaves the sealed record as it was and changes the headers a hit sees")
    func refreshKeepsTheRecord() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try HTTPCache(directory: directory, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)))
        let key = Array(repeating: UInt8(4), count: 32)
        try await cache.store(
            HTTPCache.Entry(
                key: key, target: [2], status: 200, headers: Headers([("ETag", "\"a\""), ("X-N", "1")]),
                body: Array("body".utf8), storedAt: 5),
            now: 5)
        let path = cache.file.path
        let before = try #require(text(path, "SELECT hex(record) FROM entry"))
        var entry = try #require(try await cache.entries(key: key, now: 5).first)
        entry.headers = Headers([("ETag", "\"a\""), ("X-N", "2")])
        entry.storedAt = 50
        try await cache.refresh(entry)
        #expect(text(path, "SELECT hex(record) FROM entry") == before)
        #expect(integer(path, "SELECT length(head) FROM entry") ?? 0 > 0)
        // Within a minute of its last use: the LRU mark (and its index) is not moved by the 304.
        #expect(integer(path, "SELECT CAST(last_used AS INTEGER) FROM entry") == 5)
        let after = try #require(try await cache.entries(key: key, now: 50).first)
        #expect(after.headers["x-n"] == "2" && after.body == Array("body".utf8) && after.storedAt == 50)
    }

    /// RFC 9111 §4.3.4 with nothing to change: a refresh whose headers are the stored ones
    /// writes the clock alone, in its one UPDATE; the head (none yet, or a 304's) stays as it was.
    @Test("a refresh that changed no header restarts the clock and leaves the head as it was")
    func refreshWithoutHeaderChanges() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try HTTPCache(directory: directory, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)))
        let key = Array(repeating: UInt8(5), count: 32)
        try await cache.store(
            HTTPCache.Entry(
                key: key, target: [2], status: 200, headers: Headers([("ETag", "\"a\"")]), body: Array("body".utf8),
                storedAt: 5),
            now: 5)
        let path = cache.file.path
        let size = integer(path, "SELECT size FROM entry")
        var entry = try #require(try await cache.entries(key: key, now: 5).first)
        entry.storedAt = 20
        entry.initialAge = 3
        try await cache.refresh(entry, headersChanged: false)
        #expect(integer(path, "SELECT head IS NULL FROM entry") == 1)
        #expect(integer(path, "SELECT size FROM entry") == size)
        #expect(text(path, "SELECT stored_at || ' ' || initial_age FROM entry") == "20.0 3.0")
        // A 304 that changed a header writes a head; one that changed none after it keeps that head.
        entry.headers = Headers([("ETag", "\"a\""), ("X-N", "2")])
        try await cache.refresh(entry, headersChanged: true)
        let head = try #require(text(path, "SELECT hex(head) FROM entry"))
        let sized = integer(path, "SELECT size FROM entry")
        entry.storedAt = 40
        try await cache.refresh(entry, headersChanged: false)
        #expect(text(path, "SELECT hex(head) FROM entry") == head)
        #expect(integer(path, "SELECT size FROM entry") == sized)
        let after = try #require(try await cache.entries(key: key, now: 40).first)
        #expect(after.headers["x-n"] == "2" && after.body == Array("body".utf8) && after.storedAt == 40)
    }

    /// The cache stage decides: a 304 repeating the stored fields (a Date of the same second)
    /// writes no head, and nothing at all within a second of the stored clock; one whose fields
    /// differ writes them, and the next answer shows them.
    @Test("the cache stage writes a 304's headers only when they change what is stored")
    func stageWritesChangedHeadersOnly() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try HTTPCache(directory: directory, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)))
        let clock = TestClock(1_000)
        let stage = CacheStage(
            cache: cache, offline: false, slot: CredentialSlot(.bearer(Secret("tok-304-fields"))),
            baseURL: "https://api.example.com", log: ExchangeLog(logger: nil), warn: { _ in },
            now: { clock.now })
        let exchange = Exchange(
            method: "GET", url: "https://api.example.com/etag", headers: Headers([]), body: [], timeout: 30)
        let date = "Sun, 29 Nov 2026 09:00:00 GMT"
        let stored = [("Cache-Control", "no-cache"), ("ETag", "\"v1\""), ("Date", date)]
        let first = Next { exchange in
            Response(status: 200, headers: Headers(stored), body: Array("{}".utf8), url: exchange.url)
        }
        _ = try await stage.handle(exchange, next: first)
        let path = cache.file.path
        func notModified(_ fields: [(String, String)]) -> Next {
            Next { exchange in Response(status: 304, headers: Headers(fields), body: [], url: exchange.url) }
        }
        clock.set(1_010)
        let same = try await stage.handle(exchange, next: notModified([("ETag", "\"v1\""), ("Date", date)]))
        #expect(same.source == .revalidated && same.headers["date"] == date)
        #expect(integer(path, "SELECT head IS NULL FROM entry") == 1)
        #expect(integer(path, "SELECT CAST(stored_at AS INTEGER) FROM entry") == 1_010)
        // Less than a second later, the same fields: nothing a reader could tell apart, nothing written.
        clock.set(1_010.5)
        let soon = try await stage.handle(exchange, next: notModified([("ETag", "\"v1\""), ("Date", date)]))
        #expect(soon.source == .revalidated && soon.headers["date"] == date)
        #expect(text(path, "SELECT stored_at FROM entry") == "1010.0")
        clock.set(1_020)
        let later = "Sun, 29 Nov 2026 09:00:20 GMT"
        let changed = try await stage.handle(exchange, next: notModified([("ETag", "\"v1\""), ("Date", later)]))
        #expect(changed.source == .revalidated && changed.headers["date"] == later)
        #expect(integer(path, "SELECT head IS NULL FROM entry") == 0)
        #expect(integer(path, "SELECT CAST(stored_at AS INTEGER) FROM entry") == 1_020)
        clock.set(1_030)
        let again = try await stage.handle(exchange, next: notModified([("ETag", "\"v1\"")]))
        #expect(again.source == .revalidated && again.headers["date"] == later && again.body == Array("{}".utf8))
    }
}

@Suite("the cache's hit path")
struct CacheReaderTests {
    /// Another connection (another process) holding the write lock: a hit whose LRU mark is
    /// due skips the mark and answers, instead of waiting the writer's 10 s busy timeout on a
    /// thread of the cooperative pool and then failing. (Before, the mark went through GRDB's
    /// writer: the lookup threw "database is locked" after 10 s.)
    @Test("a hit while another connection holds the write lock answers at once, without its LRU mark")
    func busyWriterSkipsTheMark() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-file-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = CacheSecret(bytes: Array(repeating: 7, count: 32))
        let cache = try HTTPCache(directory: directory, secret: secret)
        let key = Array(repeating: UInt8(1), count: 32)
        try await cache.store(
            HTTPCache.Entry(key: key, target: [2], status: 200, headers: Headers([]), body: [3], storedAt: 0), now: 0)

        var locker: OpaquePointer?
        #expect(sqlite3_open_v2(cache.file.path, &locker, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(locker) }
        #expect(sqlite3_exec(locker, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        // A day after it was stored: the mark is due, and the write lock is taken.
        let found = try await cache.entries(key: key, now: 86_400)
        #expect(found.map(\.body) == [[3]])
        #expect(sqlite3_exec(locker, "COMMIT", nil, nil, nil) == SQLITE_OK)
        var lastUsed: Double?
        var statement: OpaquePointer?
        #expect(sqlite3_prepare_v2(locker, "SELECT last_used FROM entry", -1, &statement, nil) == SQLITE_OK)
        if sqlite3_step(statement) == SQLITE_ROW { lastUsed = sqlite3_column_double(statement, 0) }
        sqlite3_finalize(statement)
        #expect(lastUsed == 0, "the mark was written through the lock")
        // Unlocked, the next hit marks it.
        _ = try await cache.entries(key: key, now: 86_400)
        #expect(sqlite3_prepare_v2(locker, "SELECT last_used FROM entry", -1, &statement, nil) == SQLITE_OK)
        if sqlite3_step(statement) == SQLITE_ROW { lastUsed = sqlite3_column_double(statement, 0) }
        sqlite3_finalize(statement)
        #expect(lastUsed == 86_400)
    }

    /// Two caches on one new folder's file, each with its own memory, as two processes have
    /// (the caller removes the folder).
    static func twoConnections() throws -> (directory: URL, mine: HTTPCache, other: HTTPCache) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-file-\(UUID().uuidString)")
        let secret = CacheSecret(bytes: Array(repeating: 7, count: 32))
        return (
            directory, try HTTPCache(directory: directory, secret: secret),
            try HTTPCache(directory: directory, secret: secret)
        )
    }

    /// The key `entry` stores under.
    static let sharedKey = Array(repeating: UInt8(1), count: 32)

    /// A 200 for target `[2]` under `sharedKey`, stored at 10.
    static func entry(_ body: String, etag: String) -> HTTPCache.Entry {
        HTTPCache.Entry(
            key: sharedKey, target: [2], status: 200, headers: Headers([("ETag", etag)]), body: Array(body.utf8),
            storedAt: 10)
    }

    /// The entries a cache opened are kept with the sealed bytes they came from, and served
    /// again only while the row still holds exactly those bytes: a second connection (another
    /// process) that replaces the entry or refreshes its headers is seen on the next read.
    @Test("an entry opened before is reused only while its row is byte for byte the same")
    func openedEntriesFollowOtherConnections() async throws {
        let (directory, mine, other) = try Self.twoConnections()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = Self.sharedKey
        func entry(_ body: String, etag: String) -> HTTPCache.Entry { Self.entry(body, etag: etag) }
        try await mine.store(entry("first", etag: "\"1\""), now: 10)
        #expect(try await mine.entries(key: key, now: 10).map(\.body) == [Array("first".utf8)])
        #expect(try await mine.entries(key: key, now: 10).map(\.body) == [Array("first".utf8)])
        #expect(mine.unsealed == 1, "the unchanged row was unsealed again")

        // Replaced by the other connection, the same size: new bytes, opened anew.
        try await other.store(entry("secnd", etag: "\"2\""), now: 11)
        let replaced = try #require(try await mine.entries(key: key, now: 11).first)
        #expect(replaced.body == Array("secnd".utf8) && replaced.headers["etag"] == "\"2\"")
        #expect(mine.unsealed == 2)

        // Its headers refreshed by the other connection (a 304 there): the new headers, the new clock.
        var refreshed = try #require(try await other.entries(key: key, now: 11).first)
        refreshed.headers = Headers([("ETag", "\"2\""), ("X-N", "3")])
        refreshed.storedAt = 40
        try await other.refresh(refreshed)
        let seen = try #require(try await mine.entries(key: key, now: 40).first)
        #expect(seen.headers["x-n"] == "3" && seen.body == Array("secnd".utf8) && seen.storedAt == 40)
        // The clock alone moved by the other connection: the same entry, the row's clock.
        refreshed.storedAt = 90
        try await other.refresh(refreshed, headersChanged: false)
        let unsealedBefore = mine.unsealed
        let moved = try #require(try await mine.entries(key: key, now: 90).first)
        #expect(moved.storedAt == 90 && moved.headers["x-n"] == "3" && mine.unsealed == unsealedBefore)

        // Deleted by the other connection: nothing, whatever was opened before.
        try await other.invalidate(targets: [[2]])
        #expect(try await mine.entries(key: key, now: 90).isEmpty)
    }

    @Test("a lookup repeated while nothing was written is not read again; any connection's write is seen")
    func lookupsFollowEveryWrite() async throws {
        let (directory, mine, other) = try Self.twoConnections()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = Self.sharedKey
        let missing = Array(repeating: UInt8(3), count: 32)
        func entry(_ body: String) -> HTTPCache.Entry { Self.entry(body, etag: "\"\(body)\"") }
        func bodies(_ cache: HTTPCache, _ key: [UInt8], now: Double) throws -> [String] {
            try cache.entriesAtOnce(key: key, now: now).map { String(decoding: $0.body, as: UTF8.self) }
        }
        try await mine.store(entry("first"), now: 10)
        #expect(try bodies(mine, key, now: 10) == ["first"])
        #expect(try bodies(mine, missing, now: 10) == [])
        let reads = mine.reads
        #expect(try bodies(mine, key, now: 20) == ["first"] && bodies(mine, missing, now: 20) == [])
        #expect(mine.reads == reads, "nothing was written: nothing read again")

        // Another connection's write, even of another key, and this one reads again.
        try await other.store(
            HTTPCache.Entry(key: missing, target: [4], status: 200, headers: Headers(), body: [1], storedAt: 10),
            now: 20)
        #expect(try bodies(mine, key, now: 20) == ["first"] && bodies(mine, missing, now: 20) == ["\u{1}"])
        #expect(mine.reads == reads + 2)
        try await other.store(entry("secnd"), now: 21)
        #expect(try bodies(mine, key, now: 21) == ["secnd"])
        var refreshed = try #require(try other.entriesAtOnce(key: key, now: 21).first)
        refreshed.storedAt = 50
        try await other.refresh(refreshed, headersChanged: false)
        #expect(try mine.entriesAtOnce(key: key, now: 50).first?.storedAt == 50, "the clock another 304 moved")
        try await other.invalidate(targets: [[2]])
        #expect(try bodies(mine, key, now: 50) == [])

        // An LRU mark due (a minute after the last) is read and written, not remembered past it.
        try await mine.store(entry("third"), now: 100)
        #expect(try bodies(mine, key, now: 100) == ["third"])
        let before = mine.reads
        #expect(try bodies(mine, key, now: 161) == ["third"])
        #expect(mine.reads == before + 1)

        // A large body is not held in memory past its lookup: read each time.
        let large = HTTPCache.Entry(
            key: missing, target: [4], status: 200, headers: Headers(), body: Array(repeating: 7, count: 300_000),
            storedAt: 200)
        try await mine.store(large, now: 200)
        #expect(try mine.entriesAtOnce(key: missing, now: 200).first?.body.count == 300_000)
        let beforeLarge = mine.reads
        #expect(try mine.entriesAtOnce(key: missing, now: 200).first?.body.count == 300_000)
        #expect(mine.reads == beforeLarge + 1)
    }
}
