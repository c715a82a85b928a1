import CPython
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The executor of one `withoutGIL` call: its jobs are run by the Python thread that waits
/// for the call (with the GIL released), not by Swift's cooperative pool.
///
/// The call's task (`Task(executorPreference:)`) and every nonisolated async function it
/// awaits, the pipeline's stages included, run on that thread: no hop to another thread
/// and back. A transport that sees `current` installs its `waiter` and runs its transfers
/// on this thread, which waits on their sockets between jobs.
public final class CallerThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The jobs to run, what the thread waits on, and whether the call is over.
    private struct Queue {
        var jobs: [UnownedJob] = []
        var waiter: (any CallerThreadWaiter)?
        /// The waiting thread has left (`close`): late jobs go to the global executor.
        var closed = false
    }

    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    /// The waiting thread (the executor is made on it).
    private let thread = pthread_self()
    /// Python runs signal handlers on its main thread only: elsewhere `PyErr_CheckSignals`
    /// does nothing, and the GIL is not taken for it.
    let checksSignals = Interrupts.mainThread == nil || Interrupts.onMainThread
    /// How long a thread that does not check signals waits for its events at a time: a
    /// minute, only a bound (a job and the waiter's sockets wake it; nothing else can end
    /// its wait).
    ///
    /// Such a thread waking every 20 ms cost CPU for nothing while a call was slow.
    static let eventWait = 60_000

    // Touched only by the waiting thread (in `withoutGIL` and in the jobs it runs).
    var threadState: UnsafeMutablePointer<PyThreadState>?
    var task: Task<Void, Never>?
    private var seen: Int
    private var lastSignalCheck = ContinuousClock.now
    /// Python raised from a signal handler (Ctrl-C, the macro deadline): the call ends.
    private(set) var raised = false

    init(generation: Int) {
        seen = generation
    }

    /// The executor whose waiting thread is this one, while it runs the call's jobs.
    public static var current: CallerThreadExecutor? {
        pthread_getspecific(callerKey).map { Unmanaged<CallerThreadExecutor>.fromOpaque($0).takeUnretainedValue() }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (accepted, waiter) = queue.withLock { queue -> (Bool, (any CallerThreadWaiter)?) in
            guard !queue.closed else { return (false, nil) }
            queue.jobs.append(job)
            return (true, queue.waiter)
        }
        guard accepted else {
            // The waiting thread is gone (a call given up after Ctrl-C's grace, a task that
            // outlived its call): the job runs on the global executor instead of never.
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
            return
        }
        if let waiter {
            // A job queued by the waiting thread itself is run before it waits again.
            if pthread_equal(thread, pthread_self()) == 0 { waiter.wake() }
        } else {
            wake.signal()
        }
    }

    /// What this thread waits on while the call is suspended: the installed one, or `make()`'s,
    /// now installed; nil when another kind is installed already.
    ///
    /// Call on the waiting thread, from a job of this executor.
    public func waiter<W: CallerThreadWaiter>(make: () -> W) -> W? {
        queue.withLock { queue in
            if let installed = queue.waiter { return installed as? W }
            let made = make()
            queue.waiter = made
            return made
        }
    }

    /// Runs the queued jobs, and those they queue, until none is left.
    func runJobs() {
        let executor = asUnownedTaskExecutor()
        while let job = queue.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
            job.runSynchronously(on: executor)
        }
    }

    /// Waits up to `milliseconds` for a job (a resumption from another thread, a timer), or
    /// for the waiter's events.
    func waitForJob(milliseconds: Int) {
        if let waiter = queue.withLock({ $0.waiter }) {
            waiter.wait(milliseconds: milliseconds)
        } else {
            _ = wake.wait(timeout: .now() + .milliseconds(milliseconds))
        }
    }

    /// The waiting thread leaves: jobs still queued, and any that come later, run on the
    /// global executor; the waiter ends what it still has in flight.
    func close() {
        let (left, waiter) = queue.withLock { queue in
            defer {
                queue.jobs.removeAll()
                queue.waiter = nil
                queue.closed = true
            }
            return (queue.jobs, queue.waiter)
        }
        for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        waiter?.abandon()
    }

    /// Whether the call must stop now: a Ctrl-C or a macro deadline that Python raised for.
    ///
    /// Cheap unless an interrupt came (`Interrupts.generation` changed) or 100 ms passed
    /// since Python's pending signals were last looked at; then it takes the GIL for
    /// `PyErr_CheckSignals` (which runs Python's handlers). Off Python's main thread, where
    /// no handler runs, it never takes the GIL. Call it on the waiting thread only, from a
    /// job of this executor.
    func shouldStop() -> Bool {
        if raised { return true }
        guard checksSignals else { return false }
        let generation = Interrupts.generation
        let now = ContinuousClock.now
        guard generation != seen || now - lastSignalCheck >= .milliseconds(100) else { return false }
        seen = generation
        lastSignalCheck = now
        PyEval_RestoreThread(threadState)
        let failed = PyErr_CheckSignals() != 0
        threadState = PyEval_SaveThread()
        if failed {
            // Python raised: stop the work, keep the exception for the caller.
            raised = true
            task?.cancel()
        }
        return failed
    }
}

/// The thread-local slot of `CallerThreadExecutor.current`.
let callerKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
