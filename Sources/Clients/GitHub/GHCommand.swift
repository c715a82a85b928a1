import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `gh auth token --hostname HOST`, bounded: its own process group, stdin from
/// `/dev/null`, stderr to `/dev/null` (nothing of it reaches the macro's output), at most
/// 64 KiB of stdout read, and after `timeout` seconds the whole group is killed and nothing
/// it printed is used.
///
/// The wait blocks the calling thread; `GitHubDeferredCredential` calls it on a thread of its own.
enum GHCommand {
    /// What one run gave.
    enum Outcome: Equatable {
        /// The first line of stdout, exit status 0.
        case token(String)
        /// It ran and said no (exit status, or an empty or unusable first line).
        case failed(String)
        /// It did not end within the bound; it was killed.
        case timedOut
        /// It could not be started.
        case notStarted(String)
    }

    /// The most stdout read.
    static let outputLimit = 64 * 1024

    /// Runs `executable` with `arguments` in `environment` for at most `timeout` seconds.
    static func run(executable: String, arguments: [String], environment: [String: String], timeout: Double)
        -> Outcome
    {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return .notStarted(String(cString: strerror(errno))) }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let status = (argv + [nil]).withUnsafeBufferPointer { arguments -> Int32 in
            (envp + [nil]).withUnsafeBufferPointer { variables in
                guard let argv = arguments.baseAddress, let envp = variables.baseAddress else { return EINVAL }
                return posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            }
        }
        _ = close(writeEnd)
        defer { _ = close(readEnd) }
        guard status == 0 else { return .notStarted(String(cString: strerror(status))) }
        let deadline = Date().addingTimeInterval(timeout)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var ended = false
        while !ended {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { break }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 1) * 1000) + 1)
            if ready < 0, errno != EINTR { break }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                ended = true
            } else if output.count < outputLimit {
                output.append(contentsOf: chunk[0..<min(count, outputLimit - output.count)])
            }
        }
        // stdout closed: the program has ended or is about to; wait for it within the bound.
        var exitStatus: Int32 = 0
        var reaped = false
        while ended, !reaped, deadline.timeIntervalSinceNow > 0 {
            let result = waitpid(pid, &exitStatus, WNOHANG)
            if result == pid {
                reaped = true
            } else if result < 0, errno != EINTR {
                break
            } else {
                usleep(5000)
            }
        }
        guard reaped else {
            // Past the bound (or a child still holding stdout): the whole group goes.
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            while waitpid(pid, &exitStatus, 0) < 0, errno == EINTR {}
            return .timedOut
        }
        // Anything it left behind in its group goes too.
        kill(-pid, SIGKILL)
        let exited = exitStatus & 0x7f == 0
        let code = (exitStatus >> 8) & 0xff
        guard exited, code == 0 else {
            return .failed(exited ? "it exited with status \(code)" : "it was ended by signal \(exitStatus & 0x7f)")
        }
        let line = String(decoding: output.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            .trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
        guard !line.isEmpty else { return .failed("it printed no token") }
        guard line.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            return .failed("it printed something that is not a token")
        }
        return .token(line)
    }
}
