import Platform
import WebAPI

/// How an apimacro command ends: the line it prints and its exit code (SPEC §1), for every
/// kind of ending in one table, as swift-argument-parser's `MessageInfo` does for its errors.
///
/// The command line (`ErrorReport`, which also reads swift-argument-parser's own errors),
/// `apimacro run` and the REPL's `:run` (`MacroRunner`), the REPL (`MacroRepl`) and `batch`
/// (the command line maps a `BatchOutcome` onto it) all end through it; nothing else picks an
/// exit code. Each prints `message` where it writes (the command line on stderr, a macro's run
/// through Python's `sys.stderr`, redacted).
public enum ExitReport: Sendable, Equatable {
    /// Done: 0, nothing said.
    case success
    /// Help or the version, asked for: 0, the text on stdout.
    case help(String)
    /// A status the code that ran chose (`sys.exit(n)`, `return n` from `main()`, the REPL's
    /// own status), or swift-argument-parser's for its other errors: as given.
    case status(Int32, String? = nil)
    /// A failed request, a macro that raised (after its traceback) or ran past its `--timeout`,
    /// a `--record` file that could not be written, a batch with a failed job: 1.
    case failure(String? = nil)
    /// A usage or configuration problem, before anything runs: 2, one line.
    case usage(String)
    /// Ctrl-C: 130, naming what was interrupted (a macro run).
    case interrupted(String? = nil)
    /// SIGTERM or SIGHUP asked the process to end: 128 + the signal, naming what was stopped.
    case stopped(signal: Int32, String? = nil)
    /// stdout's reader went away (`apimacro run m | head -2`): 141 (128 + SIGPIPE), what a shell
    /// reports for `gh` or `jq` in that place, so `set -o pipefail` sees the same; nothing said.
    case closedOutput

    /// The table: each ending's line (nil: nothing to say) and exit code.
    var entry: (message: String?, exitCode: Int32) {
        switch self {
        case .success: (nil, 0)
        case .help(let text): (text, 0)
        case .status(let code, let message): (message.map { "apimacro: \($0)" }, code)
        case .failure(let message): (message.map { "apimacro: \($0)" }, 1)
        case .usage(let message): ("apimacro: \(message)", 2)
        case .interrupted(let name): (name.map { "apimacro: \($0) interrupted" }, 128 + SIGINT)
        case .stopped(let signal, let name):
            (name.map { "apimacro: \($0) stopped by \(ExitReport.signalName(signal))" }, 128 + signal)
        case .closedOutput: (nil, 128 + SIGPIPE)
        }
    }

    /// The line to print, or nil for a quiet end.
    public var message: String? { entry.message }

    /// The process's exit status.
    public var exitCode: Int32 { entry.exitCode }

    /// Whether `message` goes to stdout (help and the version) rather than stderr.
    public var printsOnStandardOutput: Bool {
        if case .help = self { return true }
        return false
    }

    /// The ending of an error apimacro itself reports (outside a macro's own traceback), or nil
    /// for one it does not know (the command line then asks swift-argument-parser).
    ///
    /// - an `APIError`: a missing or refused credential and a malformed request are usage
    ///   errors (2), any other failed request a failure (1);
    /// - a `UsageError` (`MacroError`, and `BatchError` through the command line): 2;
    /// - an error of Foundation's or the system's (a file that could not be read or written):
    ///   1, in the system's words (`SystemErrorText`), never as Foundation's domain and code.
    public init?(_ error: any Error) {
        switch error {
        case let report as ExitReport:
            self = report
        case let error as APIError:
            let usage = error.kind == .auth || error.kind == .invalidRequest
            self = usage ? .usage(error.message) : .failure(error.message)
        case let error as any UsageError:
            self.init(error)
        default:
            // What Foundation and the system throw (a file that cannot be read, written or made).
            guard error is CocoaError || error is POSIXError else { return nil }
            self = .failure(SystemErrorText.describe(error))
        }
    }

    /// A usage error's ending: its one line, exit 2.
    public init(_ error: any UsageError) {
        self = .usage(error.description)
    }

    /// "SIGTERM", "SIGHUP", else "signal N".
    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}

/// Work that knows how it ends (`apimacro api`'s) throws the ending itself.
extension ExitReport: Error {}

/// A problem with how apimacro was asked to do something, found before it runs: one line,
/// exit 2 (`ExitReport.usage`).
public protocol UsageError: Error, CustomStringConvertible {}

extension ExitReport {
    /// `message` as it may be shown on stderr: with its control characters escaped when stderr is
    /// a terminal (the one terminal rule, `TerminalText`), for the command line's last line.
    public static func shownOnStandardError(_ message: String) -> String {
        TerminalText.shown(message, on: STDERR_FILENO)
    }
}
