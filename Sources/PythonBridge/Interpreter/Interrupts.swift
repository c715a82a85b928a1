import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bumped whenever something may want to interrupt Python: a Ctrl-C or a
/// macro deadline.
///
/// Native waits watch it (see `withoutGIL`).
private let interruptGeneration = Atomic<Int>(0)

/// The C-level handlers (Python's) that the chained handlers call after bumping
/// the counter, indexed by signal number; nil where none is chained.
///
/// Only ever written on the main thread before the chained handler is
/// installed.
nonisolated(unsafe) private let previousHandlers: UnsafeMutablePointer<(@convention(c) (Int32) -> Void)?> = {
    let table = UnsafeMutablePointer<(@convention(c) (Int32) -> Void)?>.allocate(capacity: Interrupts.signalLimit)
    table.initialize(repeating: nil, count: Interrupts.signalLimit)
    return table
}()

/// Bumps the counter, then runs the handler it was chained in front of.
private func chainedHandler(_ signal: Int32) {
    interruptGeneration.add(1, ordering: .releasing)
    guard signal > 0, signal < Interrupts.signalLimit, let previous = previousHandlers[Int(signal)] else { return }
    previous(signal)
}

/// How Ctrl-C and macro deadlines reach Python code and native waits.
///
/// Python's SIGINT handler only trips a flag that the eval loop checks, which a
/// native wait with the GIL released never sees. A chained handler bumps a
/// counter first, so `withoutGIL` notices, takes the GIL and lets Python raise.
public enum Interrupts {
    /// Signal numbers below this can be chained.
    static let signalLimit = 65

    /// A counter that changes on every interrupt; compare two readings.
    public static var generation: Int { interruptGeneration.load(ordering: .acquiring) }

    /// Marks that an interrupt is on its way (safe from any thread).
    public static func bump() {
        interruptGeneration.add(1, ordering: .releasing)
    }

    /// Chains a handler in front of Python's SIGINT handler.
    ///
    /// Call once, after the interpreter is initialised, on the main thread.
    ///
    /// A SIGINT ignored when apimacro started (`nohup`, a background job of a
    /// script) stays ignored: Python leaves it so, and nothing is chained.
    static func install() {
        // A parent may hand us a signal mask that blocks these (test runners and
        // some process supervisors do); Ctrl-C and macro deadlines need them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGALRM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        chain(SIGINT)
    }

    /// Puts a handler in front of the C handler now installed for `signal` (one
    /// Python installed) that bumps the counter first, so native waits notice it.
    ///
    /// Returns false, changing nothing, when the disposition is not a plain
    /// function: `SIG_IGN` stays ignored, `SIG_DFL` keeps its default action, a
    /// three-argument (`SA_SIGINFO`) handler is left alone. Main thread only.
    @discardableResult
    public static func chain(_ signal: Int32) -> Bool {
        guard signal > 0, signal < signalLimit else { return false }
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0, current.sa_flags & SA_SIGINFO == 0 else { return false }
        #if canImport(Glibc)
            guard let handler = current.__sigaction_handler.sa_handler else { return false }
            // SIG_IGN is 1 and SIG_ERR is -1: dispositions, not functions to call.
            let address = unsafeBitCast(handler, to: Int.self)
            guard address != 1, address != -1 else { return false }
            let ours: @convention(c) (Int32) -> Void = { chainedHandler($0) }
            // Already chained (a second call): nothing to do.
            if unsafeBitCast(ours, to: Int.self) == address { return true }
            previousHandlers[Int(signal)] = handler
            var chained = sigaction()
            chained.__sigaction_handler.sa_handler = ours
            chained.sa_flags = current.sa_flags
            chained.sa_mask = current.sa_mask
            return sigaction(signal, &chained, nil) == 0
        #else
            return false
        #endif
    }

    /// Whether this is the thread that initialised Python (the only one where
    /// Python's `signal.signal` works).
    public static var onMainThread: Bool {
        guard let thread = mainThread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
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
