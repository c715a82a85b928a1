import CPython

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `body` with the GIL held: every entry into Python goes through here.
///
/// Re-entrant: a thread that already holds the GIL may call it again.
public func withGIL<T>(_ body: () throws -> T) rethrows -> T {
    let state = PyGILState_Ensure()
    defer { PyGILState_Release(state) }
    return try body()
}

/// Runs `body` on this thread with the GIL released, without a task (call with the GIL held):
/// for work that waits for nothing, or at most a bounded moment (a cache hit's read), where
/// `withoutGIL`'s task and executor would cost more than the work.
///
/// As `withoutGIL`, a Ctrl-C or macro deadline already pending raises (`PythonErrorSet`) before
/// `body` runs, and a forked child gets `ForkedChildError`; nothing is checked while it runs.
/// The body must not touch a `PyRef`.
public func withoutGILAtOnce<T>(_ body: () throws -> T) throws -> T {
    if ForkedChildError.isForkedChild { throw ForkedChildError() }
    if PyErr_CheckSignals() != 0 { throw PythonErrorSet() }
    let state = PyEval_SaveThread()
    defer { PyEval_RestoreThread(state) }
    return try body()
}

/// Runs blocking or asynchronous Swift work with the GIL released, so other
/// Python threads keep running, and waits for it (call with the GIL held).
///
/// The work runs as a task on a `CallerThreadExecutor`: this thread runs its jobs itself,
/// so a call that never suspends costs no thread switch, and a transfer can run right here.
/// The body is `@Sendable`, so it cannot touch a `PyRef`. While waiting, a
/// Ctrl-C or a macro deadline (see `Interrupts`) is checked on entry and about every 20 ms
/// on Python's main thread (Python's pending signals at least every 100 ms, for interrupts
/// that bypass `Interrupts`; other threads wake only for their events):
/// when Python's signal handlers raise (`KeyboardInterrupt`, the macro
/// timeout), the work is cancelled and `PythonErrorSet` is thrown with that
/// exception set. A signal that raises nothing lets the wait go on. In a child that `fork()`
/// made of the process, it throws `ForkedChildError` and runs nothing.
public func withoutGIL<T: Sendable>(
    _ body: @escaping @Sendable () async throws -> T
) throws -> T {
    if ForkedChildError.isForkedChild { throw ForkedChildError() }
    // Read the counter, then ask Python: a signal that came in before the read (say between
    // the eval loop's last check and this call) has tripped Python's flag already, and one
    // that comes later changes the counter.
    let executor = CallerThreadExecutor(generation: Interrupts.generation)
    if PyErr_CheckSignals() != 0 { throw PythonErrorSet() }
    let box = ResultBox()
    executor.task = Task(executorPreference: executor) {
        do { box.finish(value: try await body()) } catch { box.finish(error: error) }
    }
    executor.threadState = PyEval_SaveThread()
    let outer = pthread_getspecific(callerKey)
    pthread_setspecific(callerKey, Unmanaged.passUnretained(executor).toOpaque())
    var graceEnd: ContinuousClock.Instant?
    while true {
        executor.runJobs()
        if box.isFinished { break }
        if executor.raised {
            // The task was cancelled: give it up to 2 s to wind down (its jobs run only here).
            let end = graceEnd ?? .now + .seconds(2)
            graceEnd = end
            if ContinuousClock.now >= end { break }
        }
        // Python's main thread looks for a Ctrl-C or a deadline every 20 ms (a signal handler
        // only bumps a counter); any other thread has nothing to look for (Python runs no
        // handler there) and waits for its events alone: a job, or its waiter's sockets.
        executor.waitForJob(milliseconds: executor.checksSignals ? 20 : CallerThreadExecutor.eventWait)
        _ = executor.shouldStop()
    }
    pthread_setspecific(callerKey, outer)
    executor.close()
    PyEval_RestoreThread(executor.threadState)
    if executor.raised { throw PythonErrorSet() }
    return try box.value(as: T.self)
}
