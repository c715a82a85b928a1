import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The tokens `apimacro login` obtained, in `<APIMACRO_HOME>/credentials.json`
/// (mode 0600): `{"NAME": {"token": …, "kind": "access_token|api_key",
/// "obtained_at": EPOCH, "scope": …}}`.
///
/// It refuses a file others can read or write, and no token ever appears in its
/// errors or descriptions.
public struct CredentialStore: Sendable, CustomStringConvertible {
    /// One stored credential.
    public struct Entry: Sendable {
        /// The token itself (prints `REDACTED`).
        public let token: Secret
        /// `access_token` or `api_key`.
        public let kind: String
        /// When it was obtained, in epoch seconds.
        public let obtainedAt: Int
        /// The scope granted, when the provider said.
        public let scope: String?
    }

    /// The folder (`$APIMACRO_HOME`).
    public let home: URL

    /// Keeps credentials in `home/credentials.json`.
    public init(home: URL) { self.home = home }

    /// `<home>/credentials.json`.
    public var path: URL { home.appendingPathComponent("credentials.json") }

    /// The file's path, never its contents.
    public var description: String { "CredentialStore(\(path.path))" }

    /// The token stored for `name`, or nil when there is none.
    public func token(for name: String) throws -> Secret? {
        try entry(for: name)?.token
    }

    /// The whole entry stored for `name`, or nil when there is none.
    public func entry(for name: String) throws -> Entry? {
        guard let raw = try load()[name] else { return nil }
        guard let fields = raw as? [String: Any], let token = fields["token"] as? String, !token.isEmpty else {
            throw APIError(
                .auth,
                "the entry \"\(name)\" in \(path.path) is corrupt; run: apimacro logout \(name), then log in again")
        }
        let obtained = (fields["obtained_at"] as? NSNumber)?.intValue ?? 0
        return Entry(
            token: Secret(token), kind: fields["kind"] as? String ?? "access_token", obtainedAt: obtained,
            scope: fields["scope"] as? String)
    }

    /// The names that have a stored credential, sorted.
    public func names() throws -> [String] {
        try load().keys.sorted()
    }

    /// Stores `token` for `name` (replacing any previous one, keeping the others).
    ///
    /// Creates `home` (mode 0700) when missing; the file ends with mode 0600
    /// whatever the umask, and is replaced atomically.
    public func save(_ token: Secret, for name: String, kind: String, scope: String? = nil) throws {
        guard !name.isEmpty else { throw APIError(.invalidRequest, "a credential needs a name (github, instagram, …)") }
        var all = try load()
        var fields: [String: Any] = [
            "token": token.revealed, "kind": kind, "obtained_at": Int(Date().timeIntervalSince1970),
        ]
        if let scope { fields["scope"] = scope }
        all[name] = fields
        try write(all)
    }

    /// Forgets the credential of `name`; true if there was one.
    ///
    /// A file that is not valid JSON is refused with `load`'s error and left
    /// alone: it may still hold everyone else's tokens, for the user to repair.
    @discardableResult
    public func remove(_ name: String) throws -> Bool {
        let all = try load()
        guard all[name] != nil else { return false }
        var rest = all
        rest[name] = nil
        if rest.isEmpty { try SecureFile.remove(path) } else { try write(rest) }
        return true
    }

    /// The file's top-level object; empty when the file does not exist.
    private func load() throws -> [String: Any] {
        guard let object = try parsed() else {
            throw APIError(
                .auth,
                "cannot use the credential file \(path.path): it is not valid JSON (nothing was read from it or "
                    + "changed in it); repair it, or move it aside (it may hold tokens you want to keep) and log in again"
            )
        }
        return object
    }

    /// The file's top-level object (empty when there is no file), or nil when it is not a JSON object.
    private func parsed() throws -> [String: Any]? {
        guard let bytes = try SecureFile.contents(of: path) else { return [:] }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    private func write(_ all: [String: Any]) throws {
        guard let data = try? JSONSerialization.data(withJSONObject: all, options: [.prettyPrinted, .sortedKeys]) else {
            throw APIError(.invalidRequest, "the credentials could not be encoded as JSON")
        }
        try SecureFile.ensureDirectory(home)
        try SecureFile.replace(path, with: Array(data) + [0x0A])
    }
}

/// Owner-only files: reads that refuse group/other access, atomic 0600 writes.
enum SecureFile {
    /// The largest file read: 1 MiB (a credential file is a few hundred bytes).
    static let sizeLimit = 1 << 20

    /// The file's bytes, or nil when it does not exist.
    ///
    /// Throws `.auth` when it is not a regular file (a FIFO, a device: opened without
    /// blocking, never read), is larger than `sizeLimit`, or the group or others may
    /// read or write it.
    static func contents(of url: URL) throws -> [UInt8]? {
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
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
                    + "remove it, then log in again")
        }
        guard info.st_size <= sizeLimit else {
            throw APIError(
                .auth, "refusing to read \(url.path): it is larger than 1 MiB; it is not a file apimacro wrote")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let mode = info.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw APIError(
                .auth,
                "refusing to read \(url.path): it is readable by others (mode \(String(format: "%04o", mode))); "
                    + "run: chmod 600 \(url.path)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw APIError(.auth, "cannot read \(url.path): \(errorText())") }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
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
