/// A thread that waits on its own call and may run the call's transfer itself: the Python
/// thread that made the call, with the GIL released, running the call's task on a
/// caller-thread executor.
///
/// `CurlTransport` asks its `caller` hook for one; when there is one, the transfer runs
/// inline on this thread (no hop to another thread and back), otherwise on the
/// transport's transfer thread, never blocking Swift's cooperative pool.
public protocol TransferCaller {
    /// Asked about every 20 ms while a transfer runs on this thread (and whenever a socket
    /// wakes it): true stops the transfer at once (a Ctrl-C, a `--timeout`, a macro deadline).
    func shouldStop() -> Bool
}
