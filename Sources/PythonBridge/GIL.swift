import CPython

/// Runs `body` with the GIL held: every entry into Python goes through here.
///
/// Re-entrant: a thread that already holds the GIL may call it again.
public func withGIL<T>(_ body: () throws -> T) rethrows -> T {
    let state = PyGILState_Ensure()
    defer { PyGILState_Release(state) }
    return try body()
}

/// Runs blocking or asynchronous Swift work with the GIL released, so other
/// Python threads keep running, and waits for it (call with the GIL held).
///
/// The body is `@Sendable`, so it cannot touch a `PyRef`. While waiting, a
/// Ctrl-C or a macro deadline (see `Interrupts`) is checked on entry and about every 20 ms
/// (Python's pending signals at least every 100 ms, for interrupts that bypass `Interrupts`):
/// when Python's signal handlers raise (`KeyboardInterrupt`, the macro
/// timeout), the work is cancelled and `PythonErrorSet` is thrown with that
/// exception set. A signal that raises nothing lets the wait go on.
public func withoutGIL<T: Sendable>(
    _ body: @escaping @Sendable () async throws -> T
) throws -> T {
    // Read the counter, then ask Python: a signal that came in before the read (say between
    // the eval loop's last check and this call) has tripped Python's flag already, and one
    // that comes later changes the counter.
    var seen = Interrupts.generation
    if PyErr_CheckSignals() != 0 { throw PythonErrorSet() }
    let box = ResultBox<T>()
    let task = Task.detached {
        do { box.finish(.success(try await body())) } catch { box.finish(.failure(error)) }
    }
    var state = PyEval_SaveThread()
    var quiet = 0
    while !box.wait(milliseconds: 20) {
        let now = Interrupts.generation
        // An interrupt that bypasses the counter (`_thread.interrupt_main()`) is seen within 100 ms.
        quiet += 1
        guard now != seen || quiet % 5 == 0 else { continue }
        seen = now
        PyEval_RestoreThread(state)
        if PyErr_CheckSignals() != 0 {
            // Python raised (Ctrl-C or the deadline): stop the work, keep the exception.
            task.cancel()
            state = PyEval_SaveThread()
            _ = box.wait(milliseconds: 2_000)
            PyEval_RestoreThread(state)
            throw PythonErrorSet()
        }
        state = PyEval_SaveThread()
    }
    PyEval_RestoreThread(state)
    guard let result = box.result else { throw PythonErrorSet() }
    return try result.get()
}
