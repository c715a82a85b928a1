import Clients
import WebAPI

/// A problem with how apimacro was asked to run a macro (not an error raised
/// by the macro itself): the CLI prints its message on one line and exits 2.
public struct MacroError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension MacroError {
    /// The message and exit code of an error apimacro itself reports (outside a macro's own
    /// traceback): an `APIError` (a missing or refused credential and a malformed request are
    /// usage errors, 2; a failed request 1) or a `MacroError` (2); nil for any other.
    ///
    /// The command line's `ErrorReport` asks this first, so the table lives beside the types it
    /// knows.
    public static func report(_ error: any Error) -> (message: String, exitCode: Int32)? {
        if let apiError = error as? APIError {
            let usage = apiError.kind == .auth || apiError.kind == .invalidRequest
            return (apiError.message, usage ? MacroRunner.ExitCode.usage : MacroRunner.ExitCode.failure)
        }
        if let macroError = error as? MacroError {
            return (macroError.description, MacroRunner.ExitCode.usage)
        }
        return nil
    }
}
