#if canImport(Glibc)
    import Glibc
#endif

/// Exit codes as a batch sees them (SPEC §1).
public enum BatchExit {
    /// What `apimacro run` exits with when the macro raised or ran past its `--timeout`.
    static let failure: Int32 = 1

    /// The batch's own exit code: 128 + the signal when SIGTERM or SIGHUP stopped it
    /// (143, 129), 130 after Ctrl-C, else 0 when every job succeeded and 1 otherwise.
    public static func code(for results: [BatchResult]) -> Int32 {
        if let signal = BatchRunner.terminationSignal { return 128 + signal }
        if BatchRunner.wasInterrupted { return 128 + SIGINT }
        return results.allSatisfy { $0.status == .ok } ? 0 : failure
    }
}
