import ArgumentParser
import Batch
public import MacroRuntime
import Platform

/// Where the command line turns any error into what the user sees and an exit code, through
/// the one table, `ExitReport` (SPEC §1: usage errors are one line and exit 2; help and
/// version exit 0); swift-argument-parser's own errors (help, the version, a bad flag) are read
/// with its `MessageInfo` (`fullMessage`, `exitCode`).
enum ErrorReport {
    static func exitCode(for error: any Error, command: Apimacro.Type) -> Int32 {
        let ending = report(error, command: command)
        if let message = ending.message {
            if ending.printsOnStandardOutput {
                print(message)
            } else {
                let palette = ColorChoice.forErrors(
                    arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment
                ).palette(for: STDERR_FILENO)
                // A server's text in the message (an error body's message) is shown, not obeyed.
                let shown = ExitReport.shownOnStandardError(message)
                StandardStreams.error(palette.error(shown) + "\n")
            }
        }
        return ending.exitCode
    }

    /// How the command ends after `error`: an `ExitCode` a command threw passes through;
    /// apimacro's own errors (`ExitReport.init(_:)`); else swift-argument-parser's reading.
    static func report(_ error: any Error, command: Apimacro.Type) -> ExitReport {
        if let exit = error as? ExitCode { return .status(exit.rawValue) }
        if let own = ExitReport(error) { return own }
        let status = command.exitCode(for: error)
        let message = command.fullMessage(for: error)
        if status == .success { return .help(message) }
        if status.rawValue == ExitCode.validationFailure.rawValue || error is ValidationError {
            let line = message.split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            let trimmed = lowercasingFirstWord(line.hasPrefix("Error: ") ? String(line.dropFirst(7)) : line)
            return .usage("\(trimmed) (see '\(helpCommand(in: message))')")
        }
        return .status(status.rawValue == 0 ? 1 : status.rawValue, message)
    }
}

extension ErrorReport {
    /// swift-argument-parser's "Unknown option '--x'" as apimacro's own errors read, "unknown
    /// option '--x'": a first word that is a capital and lower case letters is lowered (an
    /// acronym or a flag is left alone).
    static func lowercasingFirstWord(_ line: String) -> String {
        let first = line.prefix { $0.isLetter }
        guard first.count > 1, first.first?.isUppercase == true, first.dropFirst().allSatisfy(\.isLowercase) else {
            return line
        }
        return first.lowercased() + line.dropFirst(first.count)
    }

    /// The help to point to: the failing command's own (`apimacro run --help`), as
    /// swift-argument-parser names it in its message ("See 'apimacro run --help' for more
    /// information."), else the top level's.
    static func helpCommand(in message: String) -> String {
        guard let start = message.firstRange(of: "See '"),
            let end = message[start.upperBound...].firstRange(of: "' for more information")
        else { return "apimacro --help" }
        let named = message[start.upperBound..<end.lowerBound]
        return named.hasPrefix("apimacro") ? String(named) : "apimacro --help"
    }
}

/// A jobs file that cannot be read, a bad `--shard`: a usage error, as `MacroError` is.
extension BatchError: UsageError {}

extension ExitReport {
    /// How `apimacro batch` ends: 0 when every job succeeded, else 1; 130 after Ctrl-C; 128 +
    /// the signal after SIGTERM, SIGHUP, or SIGPIPE when stdout's reader went away (141).
    init(_ outcome: BatchOutcome) {
        switch outcome {
        case .succeeded: self = .success
        case .failed: self = .failure()
        case .interrupted: self = .interrupted()
        case .stopped(let signal): self = .stopped(signal: signal)
        }
    }
}
