public import Platform
import WebAPI

/// A macro's state lock: an exclusive `flock` on a file of its own under the state folder, held
/// from the first read of `apimacro.state` to the end of the run, so a second run of the same
/// macro waits for the first's commit.
///
/// The kernel releases it when the process ends however it ends (a crash, SIGKILL), so a lock
/// is never left behind.
public final class MacroLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The lock file of `macro` in `folder` (`locks/NAME.lock`, with characters other than letters,
    /// digits, `.`, `-` and `_` percent-encoded, so `plugin/macro` is one file).
    public static func file(for macro: String, in folder: URL) -> URL {
        var name = ""
        for byte in macro.utf8 {
            let plain =
                (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                || byte == 45 || byte == 95 || (byte == 46 && !name.isEmpty)
            name += plain ? String(UnicodeScalar(byte)) : PrintfText.format("%%%02X", byte)
        }
        return folder.appendingPathComponent("locks").appendingPathComponent(name + ".lock")
    }

    /// Takes `macro`'s lock, waiting up to `wait` seconds for another run to let it go.
    ///
    /// `waiting` is called once when the lock is held by another process (to say so on stderr).
    /// Waits with `Task.sleep`, so a cancelled task (Ctrl-C) stops waiting.
    ///
    /// - Throws: `StoreError` (`.locked`) after `wait` seconds, naming the macro and what to do;
    ///   `.io` when the lock file cannot be made; `CancellationError` when cancelled.
    public static func acquire(
        macro: String, folder: URL, wait: Double, waiting: @Sendable () -> Void = {}
    ) async throws -> MacroLock {
        let file = Self.file(for: macro, in: folder)
        try StateDatabase.makeFolder(file.deletingLastPathComponent())
        let descriptor = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError.io("cannot open the state lock \(file.path): \(String(cString: strerror(errno)))")
        }
        let lock = MacroLock(descriptor: descriptor)
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int64(max(0, wait) * 1000))
        var told = false
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw StoreError.io("cannot lock \(file.path): \(String(cString: strerror(errno)))")
            }
            if !told {
                waiting()
                told = true
            }
            guard clock.now < end else {
                throw StoreError.locked(
                    "another run of \(macro) holds its state and did not finish within \(SecondsText.shown(wait)) s; "
                        + "wait for it to end (or raise --timeout) and run again")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return lock
    }
}

/// Seconds as messages show them (`60`, `2.5`).
enum SecondsText {
    static func shown(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : PrintfText.format("%.1f", seconds)
    }
}
