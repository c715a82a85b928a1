import Dispatch
import Foundation
import Synchronization
import WebAPI

#if canImport(Glibc)
    import Glibc
#endif

/// A caller thread as production has one (a Python thread in `withoutGIL`): it runs a call's
/// task itself, as its executor, and waits on the transport's `CurlCallDriver` between the
/// task's jobs, so the transfer runs on this thread's `curl_multi`.
///
/// Give the transport `caller: caller.hook`; `run` starts the thread and the call.
final class TestCallerThread: TaskExecutor, TransferCaller, @unchecked Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var driver: CurlCallDriver?
        var thread: pthread_t?
        /// The thread has ended: late jobs go to the global executor.
        var closed = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// The call's task has finished: the thread ends.
    private let done = Atomic<Bool>(false)
    /// How many times the thread waited on the driver (the transfer was driven here).
    let driverWaits = Atomic<Int>(0)

    /// The transport's `caller` hook: this caller on its own thread, nil elsewhere.
    var hook: @Sendable () -> (any TransferCaller)? {
        { [self] in
            let thread = state.withLock { $0.thread }
            guard let thread, pthread_equal(thread, pthread_self()) != 0 else { return nil }
            return self
        }
    }

    /// Whether a driver was installed (a transfer ran on this thread, not the transfer thread).
    var hostedDriver: Bool { hosted.load(ordering: .acquiring) }
    private let hosted = Atomic<Bool>(false)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (accepted, driver) = state.withLock { state -> (Bool, CurlCallDriver?) in
            guard !state.closed else { return (false, nil) }
            state.jobs.append(job)
            return (true, state.driver)
        }
        guard accepted else {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
            return
        }
        if let driver { driver.wake() } else { wake.signal() }
    }

    func driver(make: () -> CurlCallDriver) -> CurlCallDriver? {
        state.withLock { state in
            if let installed = state.driver { return installed }
            let made = make()
            state.driver = made
            hosted.store(true, ordering: .releasing)
            return made
        }
    }

    /// Starts the thread and runs `body` as a task on it; the task's handle (cancel it to stop
    /// the call).
    ///
    /// The thread ends, abandoning the driver, once the task has finished. Once per caller.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Task<T, any Error> {
        let task = Task(executorPreference: self) { try await body() }
        Task { [self] in
            _ = await task.result
            done.store(true, ordering: .releasing)
            // Wakes the thread's wait, whichever it is now.
            let driver = state.withLock { $0.driver }
            if let driver { driver.wake() } else { wake.signal() }
        }
        let thread = Thread { [self] in
            state.withLock { $0.thread = pthread_self() }
            let executor = asUnownedTaskExecutor()
            while !done.load(ordering: .acquiring) {
                while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
                    job.runSynchronously(on: executor)
                }
                if done.load(ordering: .acquiring) { break }
                if let driver = state.withLock({ $0.driver }) {
                    driverWaits.add(1, ordering: .relaxed)
                    driver.wait(milliseconds: 20)
                } else {
                    _ = wake.wait(timeout: .now() + .milliseconds(20))
                }
            }
            let (left, driver) = state.withLock { state in
                defer {
                    state.jobs.removeAll()
                    state.driver = nil
                    state.thread = nil
                    state.closed = true
                }
                return (state.jobs, state.driver)
            }
            for job in left { job.runSynchronously(on: executor) }
            driver?.abandon()
        }
        thread.name = "test-caller"
        thread.start()
        return task
    }
}
