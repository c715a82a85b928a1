import Foundation
import PythonBridge
import Testing

/// `CodeCache`: compiled code of the host's own Python kept between runs, used only for
/// the exact source it was compiled from.
@Suite("compiled code kept between runs")
struct CodeCacheTests {
    /// Runs `source` through the cache folder `directory` and returns its global `value`.
    static func value(of source: String, in directory: String) throws -> Int {
        let globals = try Interpreter.newGlobals()
        let code = try CodeCache.code(for: source, filename: "<test>", in: directory)
        _ = try Interpreter.eval("exec(code, globals())", globals: globals.with("code", code))
        guard let value = try globals.item("value"), case .int(let number) = try PythonValue(python: value) else {
            return -1
        }
        return number
    }

    /// The cache file of `source` and the header it must start with (the header reads the
    /// interpreter's magic number: on a Python thread).
    static func file(for source: String, in directory: String) async throws -> (url: URL, header: [UInt8]) {
        let header = try await python { CodeCache.header(source: source, filename: "<test>") }
        return (URL(fileURLWithPath: directory).appendingPathComponent(CodeCache.fileName(header: header)), header)
    }

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("codecache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("the first run stores the code; a stored file is what later runs execute, for its exact source only")
    func storedAndRead() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = "value = 1\n"
        let second = "value = 2\n"
        let directory = folder.appendingPathComponent("bytecode/nested").path
        #expect(try await python { try fetching { try Self.value(of: first, in: directory) } } == 1)
        let (stored, header) = try await Self.file(for: first, in: directory)
        let contents = try Data(contentsOf: stored)
        #expect(contents.prefix(header.count).elementsEqual(header))
        // Forge the file of `second` with the code of `first`: if it is read, `second` gives 1.
        let (forged, secondHeader) = try await Self.file(for: second, in: directory)
        try (Data(secondHeader) + contents.dropFirst(header.count)).write(to: forged)
        #expect(try await python { try fetching { try Self.value(of: second, in: directory) } } == 1)
        // A file others may write is never read: `second` is compiled from its source.
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: forged.path)
        #expect(try await python { try fetching { try Self.value(of: second, in: directory) } } == 2)
        // A changed source misses the cache (its header differs) and runs the new code.
        #expect(try await python { try fetching { try Self.value(of: "value = 3\n", in: directory) } } == 3)
    }

    @Test("a damaged file is compiled over; an unusable folder only means compiling every time")
    func damagedAndUnusable() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = "value = 7\n"
        let directory = folder.path
        #expect(try await python { try fetching { try Self.value(of: source, in: directory) } } == 7)
        let (stored, header) = try await Self.file(for: source, in: directory)
        try (Data(header) + Data([0xE3, 0x00, 0x01])).write(to: stored)
        #expect(try await python { try fetching { try Self.value(of: source, in: directory) } } == 7)
        #expect(try Data(contentsOf: stored).count > header.count + 3, "the damaged file was not rewritten")
        // A folder that is a file, and one under a file: nothing can be stored, the code still runs.
        let blocker = folder.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        #expect(try await python { try fetching { try Self.value(of: source, in: blocker.path) } } == 7)
        #expect(
            try await python { try fetching { try Self.value(of: source, in: blocker.path + "/below") } } == 7)
        // A source that does not compile raises SyntaxError, as without the cache.
        let error = await #expect(throws: PythonException.self) {
            try await python { try fetching { try Self.value(of: "value = (\n", in: directory) } }
        }
        #expect(error?.typeName == "SyntaxError")
    }
}

extension PyRef {
    /// This globals dict with `name` set to `value`.
    fileprivate func with(_ name: String, _ value: PyRef) throws -> PyRef {
        try setItem(name, value)
        return self
    }
}
