public import Platform
import WebAPI

/// Files that hold secrets or decide where they go, and the folders that hold them: reads that
/// refuse what another user could read or change, atomic 0600 writes.
///
/// `exposure` is the one owner and mode rule: `credentials.json` and the OAuth state files,
/// `config.toml` and `APIMACRO_HOME` (issue 24) all go through it.
public enum SecureFile {
    /// The largest file read: 1 MiB (a credential file is a few hundred bytes).
    static let sizeLimit = 1 << 20

    /// The file's bytes, or nil when it does not exist.
    ///
    /// Throws `.auth` when it is a link, is not a regular file (a FIFO, a device: opened without
    /// blocking, never read), is larger than `sizeLimit`, belongs to another user, or the group
    /// or others may read or write it.
    static func contents(of url: URL) throws -> [UInt8]? {
        try load(url, followingLinks: false) { exposure($0, path: url.path, isPrivate: true) }?.bytes
    }

    /// The bytes and the facts (`stat`) of a regular file of at most 1 MiB, or nil when there is
    /// none; `refuse` sees the facts before anything is read and says why not to read it, if so.
    ///
    /// A FIFO or a device is opened without blocking and never read. Throws `.auth` naming the file.
    public static func load(
        _ url: URL, followingLinks: Bool, refuse: (stat) -> String? = { _ in nil }
    ) throws -> (bytes: [UInt8], info: stat)? {
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW))
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw APIError(.auth, "cannot open \(url.path): \(errorText()); check its owner and permissions")
        }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw APIError(.auth, "cannot inspect \(url.path): \(errorText())") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw APIError(
                .auth,
                "refusing to read \(url.path): it is not a regular file (a FIFO, a device or a folder); "
                    + "remove it\(url.lastPathComponent == "credentials.json" ? ", then log in again" : "")")
        }
        guard info.st_size <= sizeLimit else {
            throw APIError(
                .auth, "refusing to read \(url.path): it is larger than 1 MiB; it is not a file apimacro wrote")
        }
        if let reason = refuse(info) { throw APIError(.auth, "refusing to read \(url.path): \(reason)") }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw APIError(.auth, "cannot read \(url.path): \(errorText())") }
            if count == 0 { return (bytes, info) }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// The one owner and mode rule: nil when the file or folder `info` describes belongs to this
    /// user (or root) and no one else may write it, nor read it when it `isPrivate`; otherwise
    /// what is wrong and what to run.
    ///
    /// `stickyAllowed`: a folder with the sticky bit (as `/tmp`) may be writable by others, who
    /// can add to it but not rename or remove what is ours in it.
    public static func exposure(_ info: stat, path: String, isPrivate: Bool, stickyAllowed: Bool = false) -> String? {
        if info.st_uid != geteuid(), info.st_uid != 0 {
            return "it belongs to another user (uid \(info.st_uid)), who can change it at will; use one of your own"
        }
        let mode = info.st_mode & 0o777
        // As `%04o` prints it, without Foundation's `String(format:)` (1.1 M instructions at
        // every start, where this runs for the config folders).
        let octal = String(mode, radix: 8)
        let shown = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
        if isPrivate, mode & 0o077 != 0 {
            let who = mode & 0o022 != 0 ? "others can write to it" : "it is readable by others"
            return "\(who) (mode \(shown)); run: chmod 600 \(path)"
        }
        if mode & 0o022 != 0, !(stickyAllowed && info.st_mode & S_ISVTX != 0) {
            return "others can write to it (mode \(shown)); run: chmod go-w \(path)"
        }
        return nil
    }

    /// `exposure` of `folder` (which need not exist yet) and of every folder above it, links
    /// resolved: the first problem, naming the folder, or nil when no other user can put files
    /// there or swap ours (a folder above may be writable by others when it has the sticky bit).
    public static func folderExposure(_ folder: URL) -> (folder: String, problem: String)? {
        // The nearest folder that exists: another user who could create the rest is caught there.
        // Walked up by path text; `realpath` below resolves `.`, `..` and links of what exists
        // (`standardizedFileURL` first cost 0.3 M instructions of every start).
        var existing = folder.path
        var info = stat()
        var isTarget = true
        while stat(existing, &info) != 0 {
            let parent = PathText.deletingLastComponent(existing)
            guard errno == ENOENT, !parent.isEmpty, parent != existing else { return nil }
            existing = parent
            isTarget = false
        }
        guard let resolved = realpath(existing, nil) else { return nil }
        var path = String(cString: resolved)
        free(resolved)
        while true {
            guard stat(path, &info) == 0 else { return nil }
            if let problem = exposure(info, path: path, isPrivate: false, stickyAllowed: !isTarget) {
                return (path, problem)
            }
            let parent = PathText.deletingLastComponent(path)
            if parent.isEmpty || parent == path { return nil }
            path = parent
            isTarget = false
        }
    }

    /// Replaces `url` atomically by `bytes`, with mode 0600 whatever the umask.
    static func replace(_ url: URL, with bytes: [UInt8]) throws {
        let folder = url.deletingLastPathComponent().path
        let temporary = "\(folder)/.\(url.lastPathComponent).\(UInt64.random(in: 0...UInt64.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw APIError(.auth, "cannot create a file in \(folder): \(errorText()); check its permissions")
        }
        var ok = fchmod(fd, 0o600) == 0
        var offset = 0
        while ok, offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { ok = false } else { offset += count }
        }
        ok = ok && fsync(fd) == 0
        let failure = errorText()
        _ = close(fd)
        guard ok, rename(temporary, url.path) == 0 else {
            _ = unlink(temporary)
            throw APIError(.auth, "cannot write \(url.path): \(ok ? errorText() : failure)")
        }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            _ = close(directory)
        }
    }

    /// Creates `url` with mode 0700 when it is missing (missing parents get the usual 0755 less the umask).
    static func ensureDirectory(_ url: URL, mode: mode_t = 0o700) throws {
        var info = stat()
        if stat(url.path, &info) == 0 { return }
        let parent = url.deletingLastPathComponent()
        if parent.path != url.path { try ensureDirectory(parent, mode: 0o755) }
        if mkdir(url.path, mode) != 0 {
            guard errno == EEXIST else {
                throw APIError(.auth, "cannot create the folder \(url.path): \(errorText()); check APIMACRO_HOME")
            }
            return
        }
        if mode == 0o700 { _ = chmod(url.path, 0o700) }
    }

    /// Deletes `url`; a missing file is not an error.
    static func remove(_ url: URL) throws {
        if unlink(url.path) != 0, errno != ENOENT {
            throw APIError(.auth, "cannot delete \(url.path): \(errorText())")
        }
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
