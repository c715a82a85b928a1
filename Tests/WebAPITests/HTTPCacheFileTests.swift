import Foundation
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
}
