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
}
