/// A thread that waits on its own call and may run the call's transfers itself: the Python
/// thread that made the call, with the GIL released, running the call's tasks on a
/// caller-thread executor.
///
/// `CurlTransport` asks its `caller` hook for one. A caller that hosts a `TransferDriver`
/// waits on the transport's sockets while its tasks are suspended: every transfer its tasks
/// start (`apimacro.map`'s 32 in flight) runs on its thread through one `curl_multi`, with
/// no hop. A caller that hosts none runs one transfer inline, blocking, asking `shouldStop`.
/// With no caller, transfers go to the transport's transfer thread, never blocking Swift's
/// cooperative pool.
public protocol TransferCaller {
    /// Asked about every 20 ms while an inline transfer runs on this thread (and whenever a
    /// socket wakes it): true stops the transfer at once (a Ctrl-C, a `--timeout`, a macro
    /// deadline).
    func shouldStop() -> Bool

    /// The driver this thread waits on while its call's tasks are suspended: the one
    /// installed, or `make()`'s, now installed; nil when the caller cannot host one (the
    /// transfer then runs inline) or hosts another kind.
    ///
    /// - Parameter make: builds the driver when none is installed yet.
    /// - Returns: the installed driver, or nil.
    func driver<Driver: TransferDriver>(make: () -> Driver) -> Driver?
}

extension TransferCaller {
    /// Hosts no driver: transfers run inline.
    ///
    /// - Parameter make: not called.
    /// - Returns: nil.
    public func driver<Driver: TransferDriver>(make: () -> Driver) -> Driver? { nil }
}

/// What a caller thread waits on while its call's tasks are suspended: the transport's
/// sockets, driven from that thread.
public protocol TransferDriver: AnyObject, Sendable {
    /// Waits up to `milliseconds` for socket activity or a `wake()`, and resumes the tasks
    /// whose transfers ended. On the caller's thread only.
    func wait(milliseconds: Int)
    /// Makes a `wait` now in progress, or the next one, return at once. Any thread.
    func wake()
    /// The call is over: its transfers still running end as cancelled. On the caller's thread, once.
    func abandon()
}
