import Synchronization

/// The outcome of work run without the GIL, handed from the task to the waiting thread.
///
/// `finish` is called once. The payload is written before the flag is set (release) and read
/// only after the flag is seen (acquire), so the waiter's check after each batch of jobs is one
/// atomic load: a `Mutex` around the generic `Result` cost two generic-metadata lookups per
/// check (about 6 k instructions a call, callgrind, release).
///
/// Not generic: `withoutGIL` is not specialized for its callers' types (they are in other
/// modules), and a `ResultBox<T>` holding a `Result<T, any Error>?` looked its metadata up in
/// the runtime's cache ~11 times a call (~3.6 k instructions); the value travels as
/// `any Sendable` and `withoutGIL` casts it back to its `T` once.
///
/// `@unchecked Sendable`: `value` and `error` are written once, by `finish`, before `done` is
/// set with release ordering, and read only after `done` is seen with acquire ordering.
final class ResultBox: @unchecked Sendable {
    private let done = Atomic<Bool>(false)
    /// Written once, by `finish`, before `done`; read only once `done` is seen.
    private nonisolated(unsafe) var storedValue: (any Sendable)?
    private nonisolated(unsafe) var storedError: (any Error)?

    /// The work returned `value`.
    func finish(value: any Sendable) {
        storedValue = value
        done.store(true, ordering: .releasing)
    }

    /// The work threw `error`.
    func finish(error: any Error) {
        storedError = error
        done.store(true, ordering: .releasing)
    }

    /// Whether `finish` has run.
    var isFinished: Bool { done.load(ordering: .acquiring) }

    /// The work's value as `T` (the type it returns), or the error it threw.
    ///
    /// Called once `isFinished`; before that (a wait given up) it throws `PythonErrorSet`, as
    /// `withoutGIL` did then.
    func value<T: Sendable>(as _: T.Type) throws -> T {
        guard isFinished else { throw PythonErrorSet() }
        if let storedError { throw storedError }
        guard let value = storedValue as? T else { throw PythonErrorSet() }
        return value
    }
}
