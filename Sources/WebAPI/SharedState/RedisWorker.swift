import Dispatch
import Foundation
import Synchronization

/// One Redis connection and a thread of its own that does all of its socket I/O: the connect,
/// the handshake and every command.
///
/// Those block for up to the timeout on a dead, stalled or dripping server. On this thread
/// they never hold a thread of Swift's cooperative pool (nor the executor of a Python thread
/// waiting for its call, which runs the call's other jobs): the caller is suspended until the
/// outcome comes back. The thread ends when the worker is released, after the jobs given to it.
///
/// Used by one caller at a time, like its connection: `SharedState` checks workers out of its pool.
final class RedisWorker: Sendable {
    private let thread: WorkerThread

    /// Starts the thread; `connect` then opens the connection on it.
    init() {
        thread = WorkerThread()
        let started = Thread { [thread] in thread.run() }
        started.name = "apimacro-redis"
        started.stackSize = 512 * 1024
        started.start()
    }

    deinit {
        thread.close()
    }

    /// Whether the connection failed (or never opened): the worker is not used again.
    var isBroken: Bool { thread.broken.load(ordering: .acquiring) }

    /// Connects and says who we are (`RedisConnection.init`), on the worker's thread.
    func connect(_ address: SharedStateAddress, timeout: Double) async -> Result<Void, RedisFailure> {
        await perform { [thread] in thread.open(address, timeout: timeout) }
    }

    /// `connect`, the calling thread blocked until it is done (for callers that cannot suspend).
    func connectWaiting(_ address: SharedStateAddress, timeout: Double) -> Result<Void, RedisFailure> {
        performWaiting { [thread] in thread.open(address, timeout: timeout) }
    }

    /// Runs `body` on the connection, on the worker's thread.
    func run<T: Sendable>(_ body: @escaping @Sendable (RedisConnection) throws(RedisFailure) -> T) async -> Result<
        T, RedisFailure
    > {
        await perform { [thread] in thread.apply(body) }
    }

    /// Runs `body` on the calling thread, for a body that never waits (a write of what the
    /// socket takes at once): a hop to the worker's thread and back would cost more than it.
    ///
    /// Only the caller that checked the worker out calls it, when none of its jobs is queued:
    /// the connection is still used by one thread at a time.
    func runAtOnce<T>(_ body: (RedisConnection) throws(RedisFailure) -> T) -> Result<T, RedisFailure> {
        thread.apply(body)
    }

    /// `run`, the calling thread blocked until it is done (for callers that cannot suspend).
    func runWaiting<T: Sendable>(_ body: @escaping @Sendable (RedisConnection) throws(RedisFailure) -> T) -> Result<
        T, RedisFailure
    > {
        performWaiting { [thread] in thread.apply(body) }
    }

    private func perform<T: Sendable>(_ job: @escaping @Sendable () -> Result<T, RedisFailure>) async -> Result<
        T, RedisFailure
    > {
        await withCheckedContinuation { continuation in
            thread.submit { continuation.resume(returning: job()) }
        }
    }

    private func performWaiting<T: Sendable>(_ job: @escaping @Sendable () -> Result<T, RedisFailure>) -> Result<
        T, RedisFailure
    > {
        let outcome = Outcome<T>()
        thread.submit {
            outcome.value.withLock { $0 = job() }
            outcome.done.signal()
        }
        outcome.done.wait()
        return outcome.value.withLock { $0 } ?? .failure(.unreachable("the Redis thread gave no outcome"))
    }

    /// What a job gave a caller that waits on its thread.
    private final class Outcome<T: Sendable>: Sendable {
        let value = Mutex<Result<T, RedisFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
    }
}

/// The worker's thread: runs the jobs given to it, in order, until closed.
private final class WorkerThread: @unchecked Sendable {
    private struct Jobs {
        var queue: [@Sendable () -> Void] = []
        var closed = false
    }

    private let jobs = Mutex(Jobs())
    /// Signalled once per job given and once by `close`.
    private let wake = DispatchSemaphore(value: 0)
    let broken = Atomic<Bool>(false)
    /// Touched by this thread (`open` and `apply` run in its jobs; `run` clears it at the end),
    /// and through `runAtOnce` by the caller that checked the worker out, between jobs.
    private var connection: RedisConnection?

    func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.queue.append(job) }
        wake.signal()
    }

    /// Ends the thread once the jobs already given are done.
    func close() {
        jobs.withLock { $0.closed = true }
        wake.signal()
    }

    /// The thread's body.
    func run() {
        while true {
            wake.wait()
            let next = jobs.withLock { state -> (job: (@Sendable () -> Void)?, end: Bool) in
                if !state.queue.isEmpty { return (state.queue.removeFirst(), false) }
                return (nil, state.closed)
            }
            if let job = next.job {
                job()
            } else if next.end {
                connection = nil
                return
            }
        }
    }

    func open(_ address: SharedStateAddress, timeout: Double) -> Result<Void, RedisFailure> {
        do {
            connection = try RedisConnection(address: address, timeout: timeout)
            return .success(())
        } catch {
            broken.store(true, ordering: .releasing)
            return .failure(error)
        }
    }

    func apply<T>(_ body: (RedisConnection) throws(RedisFailure) -> T) -> Result<T, RedisFailure> {
        guard let connection else { return .failure(.unreachable("the connection was lost")) }
        defer { if connection.isBroken { broken.store(true, ordering: .releasing) } }
        do {
            return .success(try body(connection))
        } catch {
            return .failure(error)
        }
    }
}
