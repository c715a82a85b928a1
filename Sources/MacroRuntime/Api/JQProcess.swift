import Dispatch
import Platform
import Spawning
import Synchronization
import WebAPI

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
            StandardStreams.error(TerminalText.shown(messages, on: STDERR_FILENO))
        }
        guard ending != .exited(JQChild.Status.success.rawValue) else { return }
        try failure(ending, messages: messages, deadline: deadline, timeout: timeout)
    }

    /// jq's compile messages on one line: "syntax error, unexpected $end … line 1: .[[", without
    /// its "jq: error: " prefixes and its count of errors.
    static func compileMessage(_ messages: String) -> String {
        let lines = messages.split(separator: "\n").map { line -> String in
            var text = line.trimmingWhitespace()
            for prefix in ["jq: error: ", "jq: "] where text.hasPrefix(prefix) {
                text = String(text.dropFirst(prefix.count))
            }
            return text
        }.filter { !$0.isEmpty && $0.wholeMatch(of: /\d+ compile errors?/) == nil }
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
        let process: Subprocess
        do {
            // No variable but one: the Swift runtime's crash report, which a filter that dies of
            // jq's own abort() would print for seconds, is off.
            process = try Subprocess.spawn(
                executable, [JQChild.argument, mode, program] + options.arguments,
                environment: ["SWIFT_BACKTRACE": "enable=no"], stdin: .descriptor(input[0]),
                stdout: .descriptor(results[1]), stderr: .descriptor(errors[1]), defaultSignals: [SIGINT, SIGPIPE])
        } catch {
            for descriptor in input + errors + results { close(descriptor) }
            throw ExitReport.failure("--jq: \(error.description)")
        }
        close(input[0])
        close(errors[1])
        close(results[1])
        let printer = ResultPrinter(redactor: redactor())
        let printed = DispatchSemaphore(value: 0)
        let collected = Mutex<[UInt8]>([])
        let messagesRead = DispatchSemaphore(value: 0)
        do {
            try NativeThread.start(name: "apimacro-jq-out") { [readEnd = results[0]] in
                printer.copy(from: readEnd)
                printed.signal()
            }
            try NativeThread.start(name: "apimacro-jq-in") { [writeEnd = input[1]] in
                for text in inputs {
                    guard DescriptorIO.writeAll(writeEnd, text), DescriptorIO.writeAll(writeEnd, [0x0A]) else { break }
                }
                close(writeEnd)
            }
            try NativeThread.start(name: "apimacro-jq-err") { [readEnd = errors[0]] in
                let kept = DescriptorIO.readAll(readEnd, limit: 1 << 16)
                close(readEnd)
                collected.withLock { $0 = kept }
                messagesRead.signal()
            }
        } catch {
            // The child goes; a thread already started sees its pipe end and finishes.
            process.kill(SIGKILL)
            _ = process.wait()
            throw ExitReport.failure("--jq: \(error.description)")
        }
        let ending: Ending
        switch process.wait(until: ContinuousClock.now + Seconds.duration(deadline)) {
        case .exited(let code)?: ending = .exited(code)
        case .signaled(let signal)?: ending = .signaled(signal)
        case nil:
            process.kill(SIGKILL)
            _ = process.wait()
            ending = .timedOut
        }
        // Its messages are whole once every copy of the pipe's writing end is closed; its
        // results are printed once the printer read them all, unless it ran out of time (then a
        // reader of stdout that takes nothing must not keep this process waiting).
        messagesRead.wait()
        if ending != .timedOut { printed.wait() }
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

    private var errnoText: String { String(cString: strerror(errno)) }
}
