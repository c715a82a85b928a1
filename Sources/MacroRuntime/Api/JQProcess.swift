import Foundation
import Synchronization
import WebAPI

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a jq program in a child process (`JQChild`), bounded: the child has an empty
/// environment (jq's `env` and `$ENV` see no token), no core file, at most
/// `memoryLimit` bytes, and is killed at its deadline.
///
/// The child's results come back through a pipe and are printed line by line, redacted after
/// jq decoded them (a token the server sent with a letter escaped, `\u0067hp_…`, is a token
/// again once jq prints it); its messages come back through another pipe (at most 64 KiB kept)
/// and are printed redacted, their control characters escaped on a terminal.
struct JQProcess: Sendable {
    /// The jq program, as the user wrote it.
    let program: String
    /// Redacts the child's results and messages: asked when they are printed, so that it knows
    /// every credential the command learned by then (a GitHub App's installation token, gh's).
    let redactor: @Sendable () -> Redactor
    /// The most memory the child may allocate, in bytes (`APIMACRO_JQ_MEMORY`).
    var memoryLimit = JQChild.defaultMemoryLimit

    /// The longest a filter may run when the command sets no `--timeout`: 60 s.
    static let defaultDeadline = 60.0

    /// How a run of the child ended.
    enum Ending: Equatable {
        /// The child exited with this status (`JQChild.Status`, or a program's `halt_error` code).
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)
        /// It ran past its deadline and was killed.
        case timedOut
    }

    /// Compiles the program in a child: a usage error with jq's message when it does not.
    func check() throws {
        let (ending, messages) = try run(mode: "check", inputs: [], options: .init(), deadline: Self.defaultDeadline)
        guard ending != .exited(JQChild.Status.success.rawValue) else { return }
        if ending == .exited(JQChild.Status.compileError.rawValue) {
            throw ExitReport.usage("--jq: " + Self.compileMessage(messages))
        }
        try failure(ending, messages: messages, deadline: Self.defaultDeadline)
    }

    /// Runs the program on `inputs` (JSON texts) and writes its results on stdout.
    ///
    /// - Throws: `ExitReport` for a program that failed, ran too long or ran out of memory.
    ///
    /// `deadline` is the time it has left: what remains of the command's `--timeout`
    /// (`timeout`), else `defaultDeadline`.
    func filter(_ inputs: [[UInt8]], options: JQChild.Options, deadline: Double, timeout: Double? = nil) throws {
        let (ending, messages) = try run(mode: "run", inputs: inputs, options: options, deadline: deadline)
        if !messages.isEmpty, ending != .exited(JQChild.Status.invalidInput.rawValue) {
            // jq's `error` and `stderr` messages quote the answer: shown, not obeyed.
            FileHandle.standardError.write(Data(TerminalText.shown(messages, on: STDERR_FILENO).utf8))
        }
        guard ending != .exited(JQChild.Status.success.rawValue) else { return }
        try failure(ending, messages: messages, deadline: deadline, timeout: timeout)
    }

    /// jq's compile messages on one line: "syntax error, unexpected $end … line 1: .[[", without
    /// its "jq: error: " prefixes and its count of errors.
    static func compileMessage(_ messages: String) -> String {
        let lines = messages.split(separator: "\n").map { line -> String in
            var text = line.trimmingCharacters(in: .whitespaces)
            for prefix in ["jq: error: ", "jq: "] where text.hasPrefix(prefix) {
                text = String(text.dropFirst(prefix.count))
            }
            return text
        }.filter { !$0.isEmpty && $0.range(of: #"^\d+ compile errors?$"#, options: .regularExpression) == nil }
        return lines.isEmpty ? "the filter does not compile" : lines.joined(separator: " ")
    }

    /// The error for a child that did not succeed.
    func failure(_ ending: Ending, messages: String, deadline: Double, timeout: Double? = nil) throws
        -> Never
    {
        switch ending {
        case .timedOut:
            if let timeout {
                throw ExitReport.failure(
                    "api ran longer than its --timeout of \(SecondsText.format(timeout)) s (the --jq filter was stopped)"
                )
            }
            throw ExitReport.failure(
                "--jq: the filter ran longer than \(SecondsText.format(deadline)) s and was stopped "
                    + "(--timeout SECONDS gives it longer)")
        case .signaled(SIGPIPE):
            throw ExitReport.closedOutput
        case .signaled(let signal):
            throw ExitReport.failure("--jq: jq crashed running the filter (\(Self.signalName(signal)))")
        case .exited(let code):
            switch JQChild.Status(rawValue: code) {
            case .outOfMemory:
                throw ExitReport.failure(
                    "--jq: the filter ran out of memory (it may use \(memoryLimit >> 20) MiB; "
                        + "APIMACRO_JQ_MEMORY sets another limit)")
            case .runtimeError:
                throw ExitReport.failure("--jq: the filter failed (jq's message is above)")
            case .invalidInput, .noLibrary, .usage, .compileError:
                let line = messages.split(separator: "\n").first.map(String.init) ?? "the filter failed"
                throw ExitReport.failure(line.hasPrefix("apimacro: ") ? String(line.dropFirst(10)) : line)
            case .success, nil:
                throw ExitReport.status(code)
            }
        }
    }

    /// "SIGSEGV", "SIGABRT", …, else "signal N".
    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGKILL: "SIGKILL"
        case SIGFPE: "SIGFPE"
        case SIGILL: "SIGILL"
        default: "signal \(signal)"
        }
    }

    /// Starts the child, feeds it `inputs`, waits for it (killing it at `deadline` seconds) and
    /// returns how it ended and what it wrote on stderr (redacted).
    private func run(mode: String, inputs: [[UInt8]], options: JQChild.Options, deadline: Double) throws -> (
        Ending, String
    ) {
        var options = options
        options.memoryLimit = memoryLimit
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var input: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        var results: [Int32] = [-1, -1]
        guard Self.pipe(&input) else { throw ExitReport.failure("--jq: cannot make a pipe: \(errnoText)") }
        guard Self.pipe(&errors) else {
            close(input[0])
            close(input[1])
            throw ExitReport.failure("--jq: cannot make a pipe: \(errnoText)")
        }
        guard Self.pipe(&results) else {
            for descriptor in input + errors { close(descriptor) }
            throw ExitReport.failure("--jq: cannot make a pipe: \(errnoText)")
        }
        // A child that stopped reading must not end this process with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let pid: pid_t
        do {
            pid = try spawn(
                executable, [JQChild.argument, mode, program] + options.arguments, stdin: input[0],
                stdout: results[1], stderr: errors[1])
        } catch {
            for descriptor in input + errors + results { close(descriptor) }
            throw error
        }
        close(input[0])
        close(errors[1])
        close(results[1])
        let printer = ResultPrinter(redactor: redactor())
        let printing = Thread { [readEnd = results[0]] in printer.copy(from: readEnd) }
        printing.start()
        let writer = Thread { [writeEnd = input[1]] in
            for text in inputs {
                guard Self.writeAll(writeEnd, text), Self.writeAll(writeEnd, [0x0A]) else { break }
            }
            close(writeEnd)
        }
        writer.start()
        let collected = Mutex<[UInt8]>([])
        let finished = Mutex(false)
        let reader = Thread { [readEnd = errors[0]] in
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(readEnd, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                collected.withLock { kept in
                    if kept.count < 1 << 16 { kept += chunk[0..<min(count, (1 << 16) - kept.count)] }
                }
            }
            close(readEnd)
            finished.withLock { $0 = true }
        }
        reader.start()
        let ending = Self.wait(for: pid, deadline: deadline)
        // Its messages are whole once every copy of the pipe's writing end is closed; its
        // results are printed once the printer read them all, unless it ran out of time (then a
        // reader of stdout that takes nothing must not keep this process waiting).
        while !finished.withLock({ $0 }) || (ending != .timedOut && !printer.isFinished) { usleep(1000) }
        if printer.outputClosed { throw ExitReport.closedOutput }
        if let failure = printer.failure { throw ExitReport.failure("cannot write the answer: \(failure)") }
        let text = String(decoding: collected.withLock { $0 }, as: UTF8.self)
        return (ending, printer.redactor.redact(text))
    }

    /// A pipe whose ends are closed in any process this one starts (the child gets its copies
    /// through `posix_spawn`'s `dup2`).
    private static func pipe(_ ends: inout [Int32]) -> Bool {
        guard Glibc.pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Waits for `pid` to end, killing it after `deadline` seconds.
    private static func wait(for pid: pid_t, deadline: Double) -> Ending {
        let end = ContinuousClock.now + Seconds.duration(deadline)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 && errno != EINTR { return .signaled(0) }
            if ContinuousClock.now >= end {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return .timedOut
            }
            usleep(5000)
        }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// Writes all of `bytes` to `descriptor`; false when it cannot (the child has gone).
    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Starts `executable` with `arguments`, no environment of the user's, stdin, stdout and stderr
    /// on the given descriptors; SIGINT and SIGPIPE at their defaults.
    private func spawn(_ executable: String, _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32)
        throws -> pid_t
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
        }
        // No variable but one: the Swift runtime's crash report, which a filter that dies of
        // jq's own abort() would print for seconds, is off.
        let envp: [UnsafeMutablePointer<CChar>?] = [strdup("SWIFT_BACKTRACE=enable=no"), nil]
        defer { free(envp[0]) }
        var pid: pid_t = 0
        let status = argv.withUnsafeBufferPointer { arguments -> Int32 in
            envp.withUnsafeBufferPointer { variables in
                guard let argv = arguments.baseAddress, let envp = variables.baseAddress else { return EINVAL }
                return posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            }
        }
        guard status == 0 else {
            throw ExitReport.failure("--jq: cannot start \(executable): \(String(cString: strerror(status)))")
        }
        return pid
    }

    private var errnoText: String { String(cString: strerror(errno)) }
}
