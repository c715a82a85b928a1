/// One call's hold on its caller thread's `CurlThreadWorker`: what that thread waits on
/// while the call's tasks are suspended on their transfers.
///
/// Made when the call's first transfer starts and installed on the caller (see
/// `TransferCaller.driver`); the caller waits on it directly (MacroRuntime makes it the
/// Python thread's `CallerThreadWaiter`, with no wrapper), and abandons it when the call ends.
public final class CurlCallDriver: Sendable {
    let worker: CurlThreadWorker

    init(_ worker: CurlThreadWorker) {
        self.worker = worker
    }

    /// Waits up to `milliseconds` for the transfers' sockets or a `wake()`, and resumes the
    /// tasks whose transfers ended.
    ///
    /// On the caller's thread only.
    public func wait(milliseconds: Int) { worker.drive(milliseconds: milliseconds) }

    /// Makes a `wait` now in progress, or the next one, return at once.
    ///
    /// Any thread.
    public func wake() { worker.wake() }

    /// Suspends the task until `descriptor` is readable or `deadline` has passed, this
    /// thread waiting on it with the call's transfers (see `SharedState.evaluate`).
    ///
    /// False when the call was given up first. On the caller's thread, from a task of this call.
    func readable(_ descriptor: Int32, until deadline: ContinuousClock.Instant) async -> Bool {
        await worker.readable(descriptor, until: deadline, driver: self)
    }

    /// The call is over: its transfers still running end as cancelled.
    ///
    /// On the caller's thread, once.
    public func abandon() { worker.abandon(self) }
}
