import Foundation
import GRDBSQLite
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

    @Test("a cache opened on first use touches nothing until then; a failure to open is kept, not retried")
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
        let broken = HTTPCache(openingOnFirstUse: blocked, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)))
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
}
