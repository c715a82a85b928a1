import CPython
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Compiled code of the Python the host runs itself (`Interpreter.exec`), kept between runs
/// in one folder (`$XDG_CACHE_HOME/apimacro/bytecode`): compiling the bundled sources cost
/// most of an empty macro's Python time at every start.
///
/// A file holds the Python magic number, the file name and the whole source it was compiled
/// from, then the code in `marshal` form; it is used only when all of them match byte for
/// byte, so a changed source or another Python never runs stale code. Only a regular file
/// owned by this user and writable by no one else is read. A folder that is missing, not
/// writable or read-only only means compiling each time, as before.
public enum CodeCache {
    private static let folder = Mutex<String?>(nil)

    /// Where compiled code is kept from now on (nil: nowhere, compile every time).
    public static var directory: String? {
        get { folder.withLock { $0 } }
        set { folder.withLock { $0 = newValue } }
    }

    /// The code object for `source` (GIL held): from the cache folder `directory` when it
    /// holds this exact source, else compiled now and stored there.
    /// - Throws: `PythonErrorSet` when the source does not compile.
    public static func code(for source: String, filename: String, in directory: String? = CodeCache.directory) throws
        -> PyRef
    {
        guard let directory else { return try compile(source, filename: filename) }
        let header = Self.header(source: source, filename: filename)
        let path = directory + "/" + fileName(header: header)
        if let code = load(path: path, header: header) { return code }
        let code = try compile(source, filename: filename)
        store(code, header: header, directory: directory, path: path)
        return code
    }

    private static func compile(_ source: String, filename: String) throws -> PyRef {
        try PyRef.checked(Py_CompileString(source, filename, Py_file_input))
    }

    /// What a cache file starts with: format, Python magic number, then the name and
    /// source, each after its length (GIL held: the magic number is the interpreter's).
    public static func header(source: String, filename: String) -> [UInt8] {
        var bytes = Array("apimacro-code 1\n".utf8)
        func append(_ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        append(UInt64(UInt(bitPattern: PyImport_GetMagicNumber())))
        let name = Array(filename.utf8)
        let text = Array(source.utf8)
        append(UInt64(name.count))
        bytes += name
        append(UInt64(text.count))
        bytes += text
        return bytes
    }

    /// The file for `header`: its FNV-1a hash (finding the file; the header itself is
    /// compared in full).
    public static func fileName(header: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in header {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits + ".code"
    }

    /// The cached code, or nil when the file is missing, not ours, or for another source.
    private static func load(path: String, header: [UInt8]) -> PyRef? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(),
            status.st_mode & (S_IWGRP | S_IWOTH) == 0, status.st_size > header.count,
            status.st_size < 64 << 20
        else { return nil }
        var contents = [UInt8](repeating: 0, count: Int(status.st_size))
        let filled = whole(contents.count) { filled in
            contents.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
            }
        }
        guard filled else { return nil }
        // memcmp and marshal's C reader: `elementsEqual` over the header (it holds the whole
        // source) and a `bytes` copy handed to `marshal.loads` cost 1 M instructions a start.
        let matches = contents.withUnsafeBytes { stored in
            header.withUnsafeBytes { expected in
                guard let stored = stored.baseAddress, let expected = expected.baseAddress else { return false }
                return memcmp(stored, expected, header.count) == 0
            }
        }
        guard matches,
            let code = try? contents.withUnsafeBytes({ stored -> PyRef? in
                guard let base = stored.baseAddress else { return nil }
                return try PyRef.checked(
                    PyMarshal_ReadObjectFromString(
                        base.assumingMemoryBound(to: CChar.self) + header.count, stored.count - header.count))
            })
        else {
            // A damaged file (or one from a broken write) is compiled over, never run.
            PyErr_Clear()
            return nil
        }
        guard String(cString: apimacro_TypeName(code.pointer)) == "code" else { return nil }
        return code
    }

    /// Writes the file through a temporary name and a rename; any failure only means no cache.
    private static func store(_ code: PyRef, header: [UInt8], directory: String, path: String) {
        guard let marshal = try? Interpreter.import("marshal"),
            let marshalled = try? marshal.callMethod("dumps", [code]),
            case .bytes(let bytes)? = try? PythonValue(python: marshalled)
        else {
            PyErr_Clear()
            return
        }
        guard makeFolders(directory) else { return }
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        var written = writeAll(descriptor, header)
        written = written && writeAll(descriptor, bytes)
        close(descriptor)
        if !written || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// Creates `path` and any missing parent, each mode 0700; whether it exists now.
    private static func makeFolders(_ path: String) -> Bool {
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return true }
        guard errno == ENOENT, let slash = path.lastIndex(of: "/"), slash > path.startIndex else { return false }
        return makeFolders(String(path[..<slash])) && (mkdir(path, 0o700) == 0 || errno == EEXIST)
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        whole(bytes.count) { done in
            bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done)
            }
        }
    }

    /// Calls `step` with the bytes done so far until `count` are, again when a call is
    /// interrupted (`EINTR`); false when one fails or moves nothing (the end of the file).
    private static func whole(_ count: Int, _ step: (Int) -> Int) -> Bool {
        var done = 0
        while done < count {
            let moved = step(done)
            if moved < 0, errno == EINTR { continue }
            guard moved > 0 else { return false }
            done += moved
        }
        return true
    }
}
