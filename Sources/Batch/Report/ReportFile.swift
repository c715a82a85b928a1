public import Platform
import Spawning

/// A file a batch writes when its jobs have run (the JUnit report, an `--output-dir` file):
/// its folder made and checked before any job runs, and written whole or not at all, with a
/// place to put it when its own place fails after the jobs ran.
///
/// Only POSIX calls, so every failure reads as "cannot write PATH: REASON" (the system's own
/// words for errno), never as Foundation's error domain and code.
public enum ReportFile {
    /// Why a report file or its folder cannot be written.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The file or folder that could not be written.
        public let path: String
        /// The system's reason ("Permission denied", "No such file or directory", ...).
        public let reason: String
        /// "cannot write PATH: REASON".
        public var description: String { "cannot write \(path): \(reason)" }
    }

    /// Makes `folder` and its missing parents (mode 0777 less the umask, as `mkdir -p`), then
    /// checks that a file can be created in it.
    ///
    /// - Throws: `Failure` naming the folder that could not be made or written to.
    public static func prepare(folder: URL) throws {
        try makeFolder(folder.path)
        let probe = folder.appendingPathComponent(".apimacro-probe-\(UUID().uuidString)")
        let descriptor = open(probe.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(path: folder.path, reason: reason()) }
        close(descriptor)
        unlink(probe.path)
    }

    /// Makes the folder `file` goes in (see `prepare(folder:)`) and checks that `file` is not a folder.
    ///
    /// - Throws: `Failure` naming what cannot be written.
    public static func prepare(file: URL) throws {
        var isFolder = false
        if FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), isFolder {
            throw Failure(path: file.path, reason: "it is a folder")
        }
        try prepare(folder: file.deletingLastPathComponent())
    }

    /// Writes `text` to `file` whole: into a new file beside it, then renamed over it, so a
    /// reader never sees half a report.
    ///
    /// `mode` is the file's permission bits, whatever the umask.
    ///
    /// - Throws: `Failure` naming `file`.
    public static func write(_ text: String, to file: URL, mode: mode_t = 0o644) throws {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(
            ".\(file.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw Failure(path: file.path, reason: reason()) }
        var failed: String?
        if fchmod(descriptor, mode) != 0 { failed = reason() }
        if failed == nil, !DescriptorIO.writeAll(descriptor, Array(text.utf8)) { failed = reason() }
        if close(descriptor) != 0, failed == nil { failed = reason() }
        if failed == nil, rename(temporary.path, file.path) != 0 { failed = reason() }
        if let failed {
            unlink(temporary.path)
            throw Failure(path: file.path, reason: failed)
        }
    }

    /// Writes `text` to `file`, or when that fails, to a file of the same name in the working
    /// directory, else in the temporary folder (mode 0600 there: it may hold a macro's output).
    ///
    /// - Returns: nil when `file` was written; else the line saying why not and where the text
    ///   went instead (or that it could be written nowhere).
    public static func writeOrRescue(_ text: String, to file: URL, what: String, mode: mode_t = 0o644) -> String? {
        let failure: Failure
        do {
            try write(text, to: file, mode: mode)
            return nil
        } catch let error as Failure {
            failure = error
        } catch {
            failure = Failure(path: file.path, reason: String(describing: error))
        }
        let name = file.lastPathComponent.isEmpty ? "apimacro-report" : file.lastPathComponent
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(name)
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-\(UUID().uuidString.prefix(8))-\(name)")
        for place in [here, temporary] where place.standardizedFileURL != file.standardizedFileURL {
            guard (try? FileManager.default.attributesOfItem(atPath: place.path)) == nil else { continue }
            if (try? write(text, to: place, mode: 0o600)) != nil {
                return "cannot write \(what) to \(failure.path) (\(failure.reason)); wrote it to \(place.path) instead"
            }
        }
        return "cannot write \(what) to \(failure.path) (\(failure.reason)), nor to \(here.path) or "
            + "\(temporary.path): it is lost"
    }

    /// `mkdir -p`: each missing folder on the way made, an existing one left as it is.
    private static func makeFolder(_ path: String) throws {
        var isFolder = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            guard isFolder else { throw Failure(path: path, reason: "it is a file, not a folder") }
            return
        }
        let parent = parent(path)
        if !parent.isEmpty, parent != path { try makeFolder(parent) }
        guard mkdir(path, 0o777) == 0 || errno == EEXIST else { throw Failure(path: path, reason: reason()) }
    }

    /// errno in the system's words.
    private static func reason() -> String { String(cString: strerror(errno)) }

    /// `path` without its last component, as `NSString.deletingLastPathComponent` gives it:
    /// `/a/b` `/a`, `/a` `/`, `a` and `` ``, trailing slashes ignored.
    static func parent(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var head = trimmed[..<slash]
        while head.hasSuffix("/") { head = head.dropLast() }
        return head.isEmpty ? "/" : String(head)
    }

    /// Why a Foundation call failed, in the system's words: the errno under Foundation's error,
    /// never Foundation's own text with its domain and code.
    static func reason(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let cocoa = error as? CocoaError {
            if let underlying = cocoa.underlying as? POSIXError {
                return String(cString: strerror(underlying.code.rawValue))
            }
            let code = cocoa.code.rawValue
            return [4, 260].contains(code) ? "No such file or directory" : "the file cannot be read (error \(code))"
        }
        return String(describing: error)
    }
}
