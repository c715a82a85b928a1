import Dispatch
import Synchronization

#if canImport(Glibc)
    public import Glibc
#endif

/// A child process, started with `posix_spawn` and waited for by an event, never by polling:
/// a thread of its own blocks in `waitpid` and signals when the child ends, so `wait(until:)`
/// sleeps on a semaphore until the end or the deadline, and `ended()` suspends an async task
/// without holding a thread of Swift's cooperative pool.
///
/// The one way apimacro starts a program (`gh auth token`, the `--jq` child, `batch`'s
/// `apimacro run` children): stdin, stdout and stderr each `/dev/null` or a descriptor of this
/// process, every other descriptor closed in the child, chosen signals at their default
/// disposition and none blocked (whatever this process inherited), optionally a process group
/// of its own so that the whole group can be killed.
public final class Subprocess: Sendable {
    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it (SIGSEGV, SIGKILL, ...).
        case signaled(Int32)
    }

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// This descriptor of this process (it stays open here).
        case descriptor(Int32)
    }

    /// Why a program could not be started.
    public struct SpawnError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The process id (also its process group's id, with `newProcessGroup`).
    public let pid: pid_t
    /// Whether the child leads a process group of its own.
    public let ownsGroup: Bool
    private let state = Mutex<State>(State())
    private let finished = DispatchSemaphore(value: 0)

    private struct State {
        var termination: Termination?
        var waiters: [CheckedContinuation<Termination, Never>] = []
        var observers: [@Sendable () -> Void] = []
    }

    private init(pid: pid_t, ownsGroup: Bool) {
        self.pid = pid
        self.ownsGroup = ownsGroup
    }

    /// Starts `executable` (a path) with `arguments` (argv[1...]) and exactly `environment`.
    ///
    /// - Parameters:
    ///   - executable: the program's path.
    ///   - arguments: its arguments after argv[0] (which is `executable`).
    ///   - environment: its whole environment.
    ///   - stdin: where its standard input comes from.
    ///   - stdout: where its standard output goes.
    ///   - stderr: where its standard error goes.
    ///   - defaultSignals: signals the child starts with at their default disposition.
    ///   - newProcessGroup: the child leads a process group of its own (`kill(group: true)`).
    /// - Returns: the running child, already watched by its reaper.
    /// - Throws: `SpawnError` naming the program and the reason.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String],
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null,
        defaultSignals: [Int32] = [SIGINT, SIGTERM, SIGPIPE], newProcessGroup: Bool = false
    ) throws(SpawnError) -> Subprocess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = (argv + [nil]).withUnsafeBufferPointer { arguments -> Int32 in
            (envp + [nil]).withUnsafeBufferPointer { variables in
                guard let argv = arguments.baseAddress, let envp = variables.baseAddress else { return EINVAL }
                return posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            }
        }
        guard status == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        let process = Subprocess(pid: pid, ownsGroup: newProcessGroup)
        do {
            try process.startReaper()
        } catch {
            _ = Glibc.kill(newProcessGroup ? -pid : pid, SIGKILL)
            var ignored: Int32 = 0
            while waitpid(pid, &ignored, 0) < 0 && errno == EINTR {}
            throw SpawnError(description: "cannot wait for \(executable): \(error)")
        }
        return process
    }

    /// How the child ended, or nil while it runs.
    public var termination: Termination? { state.withLock { $0.termination } }

    /// Waits until the child ends or `deadline` passes (nil: no deadline).
    ///
    /// Returns how it ended, or nil at the deadline. Blocks the calling thread (never call it on the cooperative pool: use
    /// `ended()` there).
    public func wait(until deadline: ContinuousClock.Instant? = nil) -> Termination? {
        if let termination { return termination }
        if let deadline {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return termination }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            guard finished.wait(timeout: .now() + min(seconds, 1e9)) == .success else { return termination }
        } else {
            finished.wait()
        }
        finished.signal()  // Others may wait too.
        return termination
    }

    /// Suspends until the child ends (holding no thread).
    public func ended() async -> Termination {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Termination? in
                if let termination = state.termination { return termination }
                state.waiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Calls `observer` (on the reaper's thread) when the child ends, or now if it has.
    public func onEnd(_ observer: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.termination != nil { return true }
            state.observers.append(observer)
            return false
        }
        if now { observer() }
    }

    /// Sends `signal` to the child, or to its whole process group (`group`, when it leads one).
    ///
    /// Does nothing once it has been reaped (its id may belong to another process by then).
    public func kill(_ signal: Int32, group: Bool = false) {
        state.withLock { state in
            guard state.termination == nil else { return }
            if group, ownsGroup { _ = Glibc.kill(-pid, signal) }
            _ = Glibc.kill(pid, signal)
        }
    }

    /// Kills a group this child led after the child itself was reaped (what it left running).
    public func killLeftovers() {
        guard ownsGroup else { return }
        _ = Glibc.kill(-pid, SIGKILL)
    }

    /// The thread that blocks in `waitpid` until the child ends, then tells every waiter.
    private func startReaper() throws(NativeThread.StartError) {
        try NativeThread.start(name: "apimacro-reaper", stackSize: 64 << 10) { [self] in
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
            let signal = status & 0x7f
            let ending: Termination =
                result < 0 ? .signaled(0) : (signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal))
            let (waiters, observers) = state.withLock { state in
                state.termination = ending
                defer {
                    state.waiters = []
                    state.observers = []
                }
                return (state.waiters, state.observers)
            }
            finished.signal()
            for waiter in waiters { waiter.resume(returning: ending) }
            for observer in observers { observer() }
        }
    }
}
