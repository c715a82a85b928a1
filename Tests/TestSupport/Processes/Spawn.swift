public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process started with `posix_spawn`, for the tests and the test server.
///
/// Not Foundation's `Process`: in Swift 6.3's Foundation, `Process.run()` copies a whole
/// 256-byte `d_name` out of each `/proc/self/fd` entry (`findMaximumOpenFromProcSelfFD`) and
/// reads past glibc's buffer when an entry sits at its end (swift-corelibs-foundation#5472):
/// the test process died with SIGSEGV in `memcpy` about one full run in five. The product
/// itself spawns its batch children with `posix_spawn` already (`Batch/ChildProcess`).
public final class Spawned: @unchecked Sendable {
    /// Where a child's standard stream goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file (opened for reading on stdin, truncated for writing on stdout and stderr).
        case file(String)
        /// A descriptor of this process (for example a pipe's end), duplicated into the child.
        case descriptor(Int32)
    }

    public let processIdentifier: pid_t
    private let ended = Mutex<(status: Int32, signalled: Bool)?>(nil)
    private let waiters = Mutex<[CheckedContinuation<(status: Int32, signalled: Bool), Never>]>([])
    /// Signalled when the child ends, for `waitUntilExit` (which must not need the cooperative pool).
    private let endedCondition = NSCondition()

    /// Starts `executable` with `arguments` and exactly `environment`.
    /// - Parameters:
    ///   - executable: the program's path.
    ///   - arguments: its arguments (without the program name).
    ///   - environment: its whole environment.
    ///   - directory: the working directory (nil: this process's).
    ///   - stdin: where its standard input comes from.
    ///   - stdout: where its standard output goes.
    ///   - stderr: where its standard error goes.
    ///   - defaultSignals: signals the child starts with the default disposition for, even if
    ///     this process ignores them (a test runner started from a script may ignore SIGINT).
    /// - Throws: `SpawnError` naming the executable when it cannot be started.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null, defaultSignals: [Int32] = []
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o600)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        // Nothing else of this process (sockets, pipes of other tests) leaks into the child.
        _ = spawnAddCloseFrom(&actions, 3)
        if let directory { _ = spawnAddChdir(&actions, directory) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        processIdentifier = pid
        let child = pid
        // One thread per child waits for it (waitpid on this pid only: nobody else's child is reaped).
        let thread = Thread { [self] in
            var raw: Int32 = 0
            while waitpid(child, &raw, 0) < 0 && errno == EINTR {}
            let signalled = (raw & 0x7F) != 0 && (raw & 0x7F) != 0x7F
            let result = (status: signalled ? raw & 0x7F : (raw >> 8) & 0xFF, signalled: signalled)
            endedCondition.lock()
            ended.withLock { $0 = result }
            endedCondition.broadcast()
            endedCondition.unlock()
            for waiter in waiters.withLock({ list in
                defer { list = [] }
                return list
            }) { waiter.resume(returning: result) }
        }
        thread.start()
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { ended.withLock { $0 == nil } }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) { kill(processIdentifier, signal) }

    /// The exit status (or the signal that ended it, with `signalled`), once it has ended.
    public func exit() async -> (status: Int32, signalled: Bool) {
        await withCheckedContinuation { continuation in
            let done: (status: Int32, signalled: Bool)? = ended.withLock { result in
                if result == nil { waiters.withLock { $0.append(continuation) } }
                return result
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Blocks this thread until the child ends (a plain wait on a condition: no task, so it is
    /// safe even on the cooperative pool, though it holds that thread meanwhile).
    @discardableResult
    public func waitUntilExit() -> (status: Int32, signalled: Bool) {
        endedCondition.lock()
        defer { endedCondition.unlock() }
        while true {
            if let result = ended.withLock({ $0 }) { return result }
            endedCondition.wait()
        }
    }
}

// glibc 2.34+ has these (Debian 12: 2.36), but Swift's Glibc module hides the _np names.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnAddCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
@_silgen_name("posix_spawn_file_actions_addchdir_np")
private func spawnAddChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>)
    -> Int32

/// A child that could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public let description: String
}
