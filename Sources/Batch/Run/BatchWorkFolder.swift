import Platform

/// The private folder where a batch's children write their unredacted output while they run:
/// `$TMPDIR/apimacro-batch-UUID/`, mode 0700, holding `N.out` and `N.err` (mode 0600, made by
/// the batch before the child starts) and `N.stats.json`.
///
/// A macro may print a token; only the batch redacts it, when the macro ends. So the folder is
/// owner-only from its creation whatever the umask, and the files are never readable by others,
/// not even for an instant.
///
/// While the batch runs it holds a lock (`flock`) on the folder's `batch.lock`; the kernel drops
/// it when the process ends, however it ends. A batch that was killed (SIGKILL, OOM) cannot
/// remove its folder, so each batch, as it starts, removes the folders of this user's batches
/// whose lock nobody holds (`removeAbandoned`).
final class BatchWorkFolder {
    /// The folder.
    let url: URL
    /// The open `batch.lock`, locked for the batch's lifetime (close-on-exec: no child holds it).
    private let lock: Int32

    /// The start of every work folder's name.
    static let prefix = "apimacro-batch-"
    /// The file whose lock says the batch is alive.
    static let lockName = "batch.lock"

    private init(url: URL, lock: Int32) {
        self.url = url
        self.lock = lock
    }

    deinit {
        close(lock)
    }

    /// Creates a new work folder in `parent` (mode 0700, locked).
    ///
    /// - Throws: `ChildProcess.SpawnError` naming the folder when it cannot be made.
    static func create(in parent: URL = FileManager.default.temporaryDirectory) throws -> BatchWorkFolder {
        let url = parent.appendingPathComponent(prefix + UUID().uuidString)
        let path = url.path
        // mkdir never replaces or follows anything at the path; the umask can only take bits
        // away from 0700, and fchmod gives back exactly 0700.
        guard mkdir(path, 0o700) == 0 else { throw failure("cannot create the work folder", path) }
        let folder = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { throw failure("cannot open the work folder", path) }
        defer { close(folder) }
        guard fchmod(folder, 0o700) == 0 else { throw failure("cannot make the work folder owner-only", path) }
        // Locked under a temporary name, then renamed: a batch starting meanwhile never sees an
        // unlocked `batch.lock` of a live batch and takes the folder for abandoned.
        let lock = openat(folder, "batch.lock.new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw failure("cannot create the work folder's lock", path) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0, renameat(folder, "batch.lock.new", folder, lockName) == 0 else {
            let error = failure("cannot lock the work folder", path)
            close(lock)
            throw error
        }
        return BatchWorkFolder(url: url, lock: lock)
    }

    /// Creates `name` in the folder for writing, mode exactly 0600 from the start; returns its
    /// descriptor (close-on-exec), which the caller closes.
    ///
    /// - Throws: `ChildProcess.SpawnError` naming the file.
    func createOwnerOnly(_ name: String) throws -> Int32 {
        let path = url.appendingPathComponent(name).path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("cannot create", path) }
        // The umask may have taken the owner's bits away: never more than 0600, and now exactly.
        guard fchmod(descriptor, 0o600) == 0 else {
            let error = Self.failure("cannot make owner-only", path)
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Removes the folder and what it holds (the lock goes when this value does).
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// Removes the work folders in `parent` of this user's batches that ended without removing
    /// them (killed: nobody holds their lock), and makes the other folders of this user that
    /// have no lock (an older apimacro's, or one being created) owner-only.
    ///
    /// Another user's folders, and anything that is not a folder (a symbolic link), are left alone.
    static func removeAbandoned(in parent: URL = FileManager.default.temporaryDirectory) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            let path = parent.appendingPathComponent(name).path
            let folder = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard folder >= 0 else { continue }
            defer { close(folder) }
            var status = stat()
            guard fstat(folder, &status) == 0, status.st_uid == getuid() else { continue }
            let lock = openat(folder, lockName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard lock >= 0 else {
                fchmod(folder, 0o700)
                continue
            }
            defer { close(lock) }
            // Held: that batch is running. Free: it was killed; the lock is ours while we remove.
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    private static func failure(_ what: String, _ path: String) -> ChildProcess.SpawnError {
        ChildProcess.SpawnError(description: "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
