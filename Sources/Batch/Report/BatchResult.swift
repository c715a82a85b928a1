import Platform

/// How one macro of a `batch` ended, with what it printed and did.
public struct BatchResult: Sendable {
    /// How a macro of a batch ended.
    public enum Status: Sendable, Equatable {
        /// Exit status 0.
        case ok
        /// A non-zero exit status: the macro raised or called `sys.exit(n)`.
        case failed
        /// It ran past `--timeout` (stopped by its own deadline, or killed).
        case timeout
        /// A signal ended it (a segfault, an abort, a kill from outside).
        case crashed(signal: Int32)
        /// Ctrl-C, or `--fail-fast` stopped it after another macro failed.
        case interrupted
        /// Never started: `--fail-fast` or Ctrl-C stopped the batch first.
        case notRun

        /// The word the summary shows: "ok", "failed", "timeout", "crashed (SIGSEGV)", ...
        public var label: String {
            switch self {
            case .ok: "ok"
            case .failed: "failed"
            case .timeout: "timeout"
            case .crashed(let signal): "crashed (\(ChildSignal.name(signal)))"
            case .interrupted: "interrupted"
            case .notRun: "not run"
            }
        }
    }

    /// The name shown in the summary, unique within the batch (file names derive from it).
    public let name: String
    /// What the user gave: a path or a name on the macro path.
    public let macro: String
    /// How it ended.
    public var status: Status
    /// Its exit status; nil when a signal ended it or it never ran.
    public var exitCode: Int32?
    /// Wall-clock seconds from start to end (0 when it never ran).
    public var seconds: Double
    /// Its request and cache-hit counts; nil when it could not report them (crashed, killed, never ran).
    public var stats: MacroStats?
    /// Everything it wrote to stdout, in order.
    public var stdout: String
    /// Everything it wrote to stderr, in order.
    public var stderr: String
    /// What the batch could not do with its output (an `--output-dir` file written elsewhere),
    /// one line each, printed on stderr whatever else is printed.
    public var warnings: [String] = []
    /// Its exchanges, from the HAR it recorded, for `--report` (empty unless the batch collects them).
    public var exchanges: [Report.Exchange] = []

    /// A result with every field given.
    public init(
        name: String, macro: String, status: Status, exitCode: Int32?, seconds: Double, stats: MacroStats?,
        stdout: String, stderr: String
    ) {
        self.name = name
        self.macro = macro
        self.status = status
        self.exitCode = exitCode
        self.seconds = seconds
        self.stats = stats
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Names of the signals a child may die of.
enum ChildSignal {
    static func name(_ signal: Int32) -> String {
        let known: [Int32: String] = [
            SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGILL: "SIGILL",
            SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGTRAP: "SIGTRAP", SIGPIPE: "SIGPIPE",
        ]
        return known[signal] ?? "signal \(signal)"
    }
}
