import Clients

/// apimacro's own errors as the command line reports them: one line and an exit code.
public enum CommandFailure {
    /// The message and exit code for an `APIError` or a `MacroError` (usage and configuration
    /// problems exit 2, failed requests 1), or nil for any other error.
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
