import Dispatch
import Synchronization

/// The outcome of work run without the GIL, handed from the task to the waiter.
final class ResultBox<T: Sendable>: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let stored = Mutex<Result<T, any Error>?>(nil)

    func finish(_ result: Result<T, any Error>) {
        stored.withLock { $0 = result }
        semaphore.signal()
    }

    /// Waits up to `milliseconds`; true once the result is in.
    func wait(milliseconds: Int) -> Bool {
        if stored.withLock({ $0 != nil }) { return true }
        if semaphore.wait(timeout: .now() + .milliseconds(milliseconds)) == .success {
            semaphore.signal()  // later waits see it at once
            return true
        }
        return false
    }

    var result: Result<T, any Error>? { stored.withLock { $0 } }
}
