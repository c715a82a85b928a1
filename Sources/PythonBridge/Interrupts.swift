import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bumped whenever something may want to interrupt Python: a Ctrl-C or a
/// macro deadline. Native waits watch it (see `withoutGIL`).
private let interruptGeneration = Atomic<Int>(0)

/// Python's own C-level SIGINT handler, which `Interrupts.install()` chains to.
nonisolated(unsafe) private var previousSIGINTHandler: (@convention(c) (Int32) -> Void)?

/// How Ctrl-C and macro deadlines reach Python code and native waits.
///
/// Python's SIGINT handler only trips a flag that the eval loop checks, which a
/// native wait with the GIL released never sees. A chained handler bumps a
/// counter first, so `withoutGIL` notices, takes the GIL and lets Python raise.
public enum Interrupts {
    /// A counter that changes on every interrupt; compare two readings.
    public static var generation: Int { interruptGeneration.load(ordering: .acquiring) }

    /// Marks that an interrupt is on its way (safe from any thread).
    public static func bump() {
        interruptGeneration.add(1, ordering: .releasing)
    }

    /// Chains a handler in front of Python's SIGINT handler. Call once, after
    /// the interpreter is initialised, on the main thread.
    static func install() {
        // A parent may hand us a signal mask that blocks these (test runners and
        // some process supervisors do); Ctrl-C and macro deadlines need them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGALRM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        var current = sigaction()
        guard sigaction(SIGINT, nil, &current) == 0 else { return }
        #if canImport(Glibc)
            previousSIGINTHandler = current.__sigaction_handler.sa_handler
        #endif
        var chained = sigaction()
        #if canImport(Glibc)
            chained.__sigaction_handler.sa_handler = { signal in
                interruptGeneration.add(1, ordering: .releasing)
                previousSIGINTHandler?(signal)
            }
        #endif
        chained.sa_flags = current.sa_flags
        chained.sa_mask = current.sa_mask
        sigaction(SIGINT, &chained, nil)
    }

    /// The thread that initialised Python; Python runs signal handlers there.
    nonisolated(unsafe) static var mainThread: pthread_t?

    /// Delivers `signal` to the main thread (so a blocking `time.sleep` there
    /// wakes up and runs Python's handler) after bumping the counter.
    public static func signalMainThread(_ signal: Int32) {
        bump()
        if let thread = mainThread { pthread_kill(thread, signal) }
    }
}
