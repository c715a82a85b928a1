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

    /// The call is over: its transfers still running end as cancelled.
    ///
    /// On the caller's thread, once.
    public func abandon() { worker.abandon(self) }
}
