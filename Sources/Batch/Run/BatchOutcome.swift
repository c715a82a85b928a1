/// How a batch ended, which the command line turns into a message and an exit code with its
/// one table (`ExitReport`, in MacroRuntime, which Batch does not import).
public enum BatchOutcome: Sendable, Equatable {
    /// Every job succeeded.
    case succeeded
    /// At least one job did not succeed.
    case failed
    /// Ctrl-C stopped it.
    case interrupted
    /// SIGTERM or SIGHUP stopped it, or SIGPIPE when its stdout's reader went away
    /// (`BatchRunner.stopForClosedOutput`).
    case stopped(signal: Int32)

    /// The outcome of the last batch, whose jobs ended as `results`.
    public init(_ results: [BatchResult]) {
        if let signal = BatchRunner.terminationSignal {
            self = .stopped(signal: signal)
        } else if BatchRunner.wasInterrupted {
            self = .interrupted
        } else {
            self = results.allSatisfy { $0.status == .ok } ? .succeeded : .failed
        }
    }
}
