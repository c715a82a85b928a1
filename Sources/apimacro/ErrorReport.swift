import ArgumentParser
import Batch
import Foundation
import MacroRuntime

/// The single place where errors become what the user sees (SPEC §1: usage
/// errors are one line and exit 2; help and version exit 0).
enum ErrorReport {
    static func exitCode(for error: any Error, command: Apimacro.Type) -> Int32 {
        if let exit = error as? ExitCode { return exit.rawValue }
        if let failure = report(error) {
            printError("apimacro: \(failure.message)")
            return failure.exitCode
        }
        let status = command.exitCode(for: error)
        let message = command.fullMessage(for: error)
        if status == .success {
            print(message)
            return 0
        }
        if status.rawValue == ExitCode.validationFailure.rawValue || error is ValidationError {
            let line = message.split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            let trimmed = line.hasPrefix("Error: ") ? String(line.dropFirst(7)) : line
            printError("apimacro: \(trimmed) (see 'apimacro --help')")
            return MacroRunner.ExitCode.usage
        }
        printError("apimacro: \(message)")
        return status.rawValue == 0 ? 1 : status.rawValue
    }

    /// apimacro's own errors: `MacroError.report` (an `APIError` or a `MacroError`), or a
    /// `BatchError` (usage and configuration problems, 2); nil for any other.
    static func report(_ error: any Error) -> (message: String, exitCode: Int32)? {
        if let batchError = error as? BatchError {
            return (batchError.description, MacroRunner.ExitCode.usage)
        }
        return MacroError.report(error)
    }

    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
