import Platform
import Spawning
import WebAPI

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
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        let process: Subprocess
        do {
            process = try Subprocess.spawn(
                executable, arguments, environment: environment, stdout: .descriptor(writeEnd),
                defaultSignals: [SIGINT, SIGTERM, SIGPIPE], newProcessGroup: true)
        } catch {
            _ = close(readEnd)
            _ = close(writeEnd)
            return .notStarted(error.description)
        }
        _ = close(writeEnd)
        defer { _ = close(readEnd) }
        let deadline = ContinuousClock.now + .milliseconds(Int(min(max(timeout, 0), 86_400) * 1000))
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var ended = false
        while !ended {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { break }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            let ready = poll(&poller, 1, Int32(min(milliseconds, 1000)) + 1)
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
        guard ended, let termination = process.wait(until: deadline) else {
            // Past the bound (or a child still holding stdout): the whole group goes.
            process.kill(SIGKILL, group: true)
            _ = process.wait()
            process.killLeftovers()
            return .timedOut
        }
        // Anything it left behind in its group goes too.
        process.killLeftovers()
        guard termination == .exited(0) else {
            switch termination {
            case .exited(let code): return .failed("it exited with status \(code)")
            case .signaled(let signal): return .failed("it was ended by signal \(signal)")
            }
        }
        let line = String(decoding: output.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            .trimmingScalars { TextScalars.isWhitespace($0) || $0 == "\r" }
        guard !line.isEmpty else { return .failed("it printed no token") }
        guard line.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            return .failed("it printed something that is not a token")
        }
        return .token(line)
    }
}
