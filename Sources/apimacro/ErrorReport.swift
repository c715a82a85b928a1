import ArgumentParser
import Batch
import Foundation
import MacroRuntime
import WebAPI

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

    /// apimacro's own errors: the message and exit code for an `APIError` (a missing or refused
    /// credential and a malformed request are usage errors, 2; a failed request 1), a
    /// `MacroError` or a `BatchError` (usage and configuration problems, 2); nil for any other.
    static func report(_ error: any Error) -> (message: String, exitCode: Int32)? {
        if let apiError = error as? APIError {
            let usage = apiError.kind == .auth || apiError.kind == .invalidRequest
            return (apiError.message, usage ? MacroRunner.ExitCode.usage : MacroRunner.ExitCode.failure)
        }
        if let macroError = error as? MacroError {
            return (macroError.description, MacroRunner.ExitCode.usage)
        }
        if let batchError = error as? BatchError {
            return (batchError.description, MacroRunner.ExitCode.usage)
        }
        return nil
    }

    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
