/// What a `CallerThreadExecutor`'s thread waits on while its call is suspended, in place of
/// its semaphore: a transport's sockets, so the transfers the call's tasks start (all of
/// `apimacro.map`'s) run on that thread, with the GIL released.
public protocol CallerThreadWaiter: AnyObject, Sendable {
    /// Waits up to `milliseconds` for its own events or a `wake()`, and handles what came
    /// (resuming the tasks whose work ended). Called on the executor's thread only.
    func wait(milliseconds: Int)
    /// Makes a `wait` now in progress, or the next one, return at once. Any thread.
    func wake()
    /// The call is over: ends what is still in flight for it (its tasks resume as cancelled,
    /// on the global executor). Called on the executor's thread only, once.
    func abandon()
}
