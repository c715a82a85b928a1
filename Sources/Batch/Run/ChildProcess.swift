import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One `batch` child: a process started with `posix_spawn` in a process group
/// of its own, stdin from `/dev/null`, stdout and stderr each into a file (no
/// pipe, so a chatty child never blocks and its output stays whole) that the
/// batch made owner-only before the child started (`BatchWorkFolder`).
struct ChildProcess {
    /// How a child ended.
    enum Termination: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it (SIGSEGV, SIGKILL, ...).
        case signaled(Int32)
    }

    /// Why a child could not be started.
    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    /// The process id, also the id of its process group.
    let pid: pid_t

    /// Starts `executable` with `arguments` (argv[1...]) and `environment`, its stdout and
    /// stderr on the descriptors `stdout` and `stderr` of this process (which stay open here).
    ///
    /// SIGINT, SIGTERM, SIGALRM and SIGPIPE start with their default disposition
    /// and no signal is blocked, whatever the parent inherited.
    static func spawn(
        executable: String, arguments: [String], environment: [String: String], stdout: Int32, stderr: Int32
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGALRM, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        let flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
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
        return ChildProcess(pid: pid)
    }

    /// How the child ended, or nil while it runs (does not block).
    func poll() -> Termination? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid else { return nil }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// Sends `signal` to the child's whole process group (its own children too).
    func send(_ signal: Int32) {
        kill(-pid, signal)
    }
}
