/// A thread that waits on its own call and runs the call's transfers itself: the Python
/// thread that made the call, with the GIL released, running the call's tasks on a
/// caller-thread executor.
///
/// `CurlTransport` asks its `caller` hook for one. The caller hosts a `CurlCallDriver` and
/// waits on it while its tasks are suspended: every transfer its tasks start
/// (`apimacro.map`'s 32 in flight) runs on its thread through one `curl_multi`, with no hop.
/// With no caller, transfers go to the transport's transfer thread, never blocking Swift's
/// cooperative pool.
public protocol TransferCaller {
    /// The driver this thread waits on while its call's tasks are suspended: the one
    /// installed, or `make()`'s, now installed; nil when the caller cannot host one (the
    /// transfer then goes to the transport's transfer thread).
    ///
    /// - Parameter make: builds the driver when none is installed yet.
    /// - Returns: the installed driver, or nil.
    func driver(make: () -> CurlCallDriver) -> CurlCallDriver?
}
