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
/// and back. A transport that sees `current` may run its transfer inline, asking
/// `shouldStop()` as it waits on its sockets.
public final class CallerThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = Mutex<[UnownedJob]>([])
    private let wake = DispatchSemaphore(value: 0)

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
        queue.withLock { $0.append(job) }
        wake.signal()
    }

    /// Runs the queued jobs, and those they queue, until none is left.
    func runJobs() {
        let executor = asUnownedTaskExecutor()
        while let job = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            job.runSynchronously(on: executor)
        }
    }

    /// Waits up to `milliseconds` for a job (a resumption from another thread, a timer).
    func waitForJob(milliseconds: Int) {
        _ = wake.wait(timeout: .now() + .milliseconds(milliseconds))
    }

    /// Whether the call must stop now: a Ctrl-C or a macro deadline that Python raised for.
    ///
    /// Cheap unless an interrupt came (`Interrupts.generation` changed) or 100 ms passed
    /// since Python's pending signals were last looked at; then it takes the GIL for
    /// `PyErr_CheckSignals` (which runs Python's handlers). Call it on the waiting thread
    /// only, from a job of this executor.
    public func shouldStop() -> Bool {
        if raised { return true }
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
