import Dispatch
import Platform
import Spawning
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
    /// Why the thread did not start (`connect` then fails with it); nil once it runs.
    private let startFailure: String?

    /// Starts the thread; `connect` then opens the connection on it.
    init() {
        thread = WorkerThread()
        do {
            try NativeThread.start(name: "apimacro-redis", stackSize: 512 * 1024) { [thread] in thread.run() }
            startFailure = nil
        } catch {
            startFailure = "\(error)"
            thread.broken.store(true, ordering: .releasing)
        }
    }

    deinit {
        thread.close()
    }

    /// Whether the connection failed (or never opened): the worker is not used again.
    var isBroken: Bool { thread.broken.load(ordering: .acquiring) }

    /// Connects and says who we are (`RedisConnection.init`), on the worker's thread.
    func connect(_ address: SharedStateAddress, timeout: Double) async -> Result<Void, RedisFailure> {
        if let startFailure { return .failure(.unreachable(startFailure)) }
        return await perform { [thread] in thread.open(address, timeout: timeout) }
    }

    /// `connect`, the calling thread blocked until it is done (for callers that cannot suspend).
    func connectWaiting(_ address: SharedStateAddress, timeout: Double) -> Result<Void, RedisFailure> {
        if let startFailure { return .failure(.unreachable(startFailure)) }
        return performWaiting { [thread] in thread.open(address, timeout: timeout) }
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

    /// Keeps a command back on the connection (`RedisConnection.hold`), from the calling
    /// thread: it goes out with the next command written on this connection, else from the
    /// worker's thread within `limit`, else when the process exits (`exit` runs
    /// `RedisWorker.writeAllHeld`).
    ///
    /// A process killed outright loses it, as it would a command it had not written yet.
    func hold(_ arguments: [[UInt8]], script: RedisScript?, tail: [[UInt8]], within limit: Duration) -> Result<
        Void, RedisFailure
    > {
        let result = thread.apply { connection throws(RedisFailure) in
            try connection.hold(arguments, script: script, tail: tail)
        }
        if case .success = result { thread.writeHeld(within: limit) }
        return result
    }

    /// Whether the connection holds commands back (`hold`).
    var isHolding: Bool {
        (try? thread.apply { connection throws(RedisFailure) in connection.isHolding }.get()) ?? false
    }

    /// Writes what every worker holds, without waiting (at exit).
    ///
    /// Not in a child a macro forked (`os.fork`): the connections are its parent's, whose
    /// replies would no longer line up with its commands.
    static func writeAllHeld() {
        guard getpid() == WorkerThread.processID else { return }
        for thread in WorkerThread.holding.withLock({ Array($0.values) }) { thread.writeHeldNow() }
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
        /// When to look at the held commands: written then if held `holdLimit` ago.
        var writeHeldBy: DispatchTime?
        var holdLimit = Duration.zero
    }

    /// Workers that held a command, by identity: `RedisWorker.writeAllHeld` writes theirs at exit.
    static let holding = Mutex<[ObjectIdentifier: WorkerThread]>([:])
    /// Registers `RedisWorker.writeAllHeld` with `atexit`, once.
    private static let exitHook: Void = {
        _ = processID
        atexit { RedisWorker.writeAllHeld() }
    }()
    /// The process that registered the hook.
    static let processID = getpid()
    /// One user of the connection at a time: its jobs (on this thread) and `runAtOnce` (on the
    /// caller's, never during a job of its own) by the protocol of the pool; the write of held
    /// commands on this thread (which takes it only if free) by this lock.
    private let using = Mutex<Void>(())

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

    /// Has the held commands written by `limit` after the oldest was held, unless something
    /// writes them first: the thread is woken only when it has no time set (in a loop of
    /// requests, once: then it looks again at each time it set, not once a command).
    func writeHeld(within limit: Duration) {
        let first = jobs.withLock { state -> Bool in
            state.holdLimit = limit
            guard state.writeHeldBy == nil else { return false }
            state.writeHeldBy = DispatchTime.now() + WorkerThread.nanoseconds(limit)
            return true
        }
        if first {
            _ = WorkerThread.exitHook
            WorkerThread.holding.withLock { $0[ObjectIdentifier(self)] = self }
            wake.signal()
        }
    }

    /// Writes the held commands now, without waiting, unless the connection is in use (its
    /// user's next write takes them).
    func writeHeldNow() {
        _ = using.withLockIfAvailable { _ in try? connection?.writeHeld() }
    }

    /// The thread's body.
    func run() {
        while true {
            if let due = jobs.withLock({ $0.writeHeldBy }) {
                if wake.wait(timeout: due) == .timedOut {
                    writeHeldIfDue()
                    continue
                }
            } else {
                wake.wait()
            }
            let next = jobs.withLock { state -> (job: (@Sendable () -> Void)?, end: Bool) in
                if !state.queue.isEmpty { return (state.queue.removeFirst(), false) }
                return (nil, state.closed)
            }
            if let job = next.job {
                job()
            } else if next.end {
                _ = using.withLock { _ in try? connection?.writeHeld() }
                WorkerThread.holding.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
                connection = nil
                return
            }
        }
    }

    /// At the time set by `writeHeld`: the held commands written if the oldest was held the
    /// limit ago; else (later ones held since) looked at again when it will have been; while
    /// the connection is in use, a little later.
    private func writeHeldIfDue() {
        let limit = jobs.withLock { $0.holdLimit }
        // Decided and set while the connection is this thread's: a command held meanwhile on
        // another thread either comes before (and is seen here) or finds the time set here.
        let looked = using.withLockIfAvailable { _ -> Bool in
            var next: DispatchTime?
            if let connection, let since = connection.heldSince {
                let age = ContinuousClock.now - since
                if age < limit {
                    next = DispatchTime.now() + WorkerThread.nanoseconds(limit - age)
                } else {
                    try? connection.writeHeld()
                    if connection.isHolding { next = DispatchTime.now() + .milliseconds(1) }
                }
            }
            jobs.withLock { $0.writeHeldBy = next }
            if next == nil { WorkerThread.holding.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) } }
            return true
        }
        // In use: its user's next write takes them; looked at again in a millisecond.
        if looked == nil { jobs.withLock { $0.writeHeldBy = DispatchTime.now() + .milliseconds(1) } }
    }

    /// `duration` as Dispatch's nanoseconds, bounded to a day.
    private static func nanoseconds(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(min(max(seconds, 0), 86_400) * 1_000_000_000 + max(attoseconds, 0) / 1_000_000_000))
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
        using.withLock { _ -> Result<T, RedisFailure> in
            guard let connection else { return .failure(.unreachable("the connection was lost")) }
            defer { if connection.isBroken { broken.store(true, ordering: .releasing) } }
            do throws(RedisFailure) {
                return .success(try body(connection))
            } catch {
                return .failure(error)
            }
        }
    }
}
