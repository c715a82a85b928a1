import Synchronization

/// The outcome of work run without the GIL, handed from the task to the waiting thread.
///
/// `finish` is called once. The payload is written before the flag is set (release) and read
/// only after the flag is seen (acquire), so the waiter's check after each batch of jobs is one
/// atomic load: a `Mutex` around the generic `Result` cost two generic-metadata lookups per
/// check (about 6 k instructions a call, callgrind, release).
final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let done = Atomic<Bool>(false)
    /// Written once, by `finish`, before `done`; read only once `done` is seen.
    private nonisolated(unsafe) var stored: Result<T, any Error>?

    func finish(_ result: Result<T, any Error>) {
        stored = result
        done.store(true, ordering: .releasing)
    }

    /// Whether `finish` has run.
    var isFinished: Bool { done.load(ordering: .acquiring) }

    /// The outcome, or nil before `finish`.
    var result: Result<T, any Error>? { isFinished ? stored : nil }
}
