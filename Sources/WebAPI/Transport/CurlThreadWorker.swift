import CCurl
import Platform
import Synchronization

/// The `curl_multi` of one caller thread and its easy handles, reused by every call that
/// thread makes: transfers run on the thread that waits for them, with no hop.
///
/// The caller (a Python thread in `withoutGIL`) hosts a `CurlCallDriver` per call: each
/// call's task suspends on its transfer and the thread waits on this multi through the
/// driver, so `apimacro.map`'s calls in flight are that many transfers on this one multi,
/// their stages run on this thread. Kept in a thread-local slot, released when the thread
/// ends.
final class CurlThreadWorker: @unchecked Sendable {
    /// One transfer on the multi, and the task waiting for it.
    final class Transfer: Sendable {
        let easy: CurlEasy
        let driver: CurlCallDriver
        let cancelled = Atomic<Bool>(false)
        /// Set (on this thread) before the task suspends, taken when the transfer ends.
        nonisolated(unsafe) var continuation: CheckedContinuation<CURLcode?, Never>?

        init(easy: CurlEasy, driver: CurlCallDriver) {
            self.easy = easy
            self.driver = driver
        }
    }

    let library: CurlLibrary
    private let multi: UnsafeMutableRawPointer
    /// Easy handles between transfers; a task resumed elsewhere (after its call was given
    /// up) hands its handle back from another thread, hence the lock.
    private let idle = Mutex<[CurlEasy]>([])
    // Touched on this worker's thread only.
    private var running: [UnsafeMutableRawPointer: Transfer] = [:]
    /// Other sockets the thread waits on with the transfers' (a Redis reply on its way), and
    /// the tasks waiting for them.
    private var sockets: [SocketWait] = []

    /// A task waiting until `descriptor` is readable or `deadline` has passed.
    private struct SocketWait {
        let descriptor: Int32
        let deadline: ContinuousClock.Instant
        let driver: CurlCallDriver
        let continuation: CheckedContinuation<Bool, Never>
    }

    private init(_ library: CurlLibrary) throws {
        guard let multi = library.api.pointee.multi_init() else {
            throw APIError(.network, "cannot create a libcurl multi handle (curl_multi_init failed)")
        }
        self.library = library
        self.multi = multi
    }

    deinit {
        for transfer in running.values { _ = library.api.pointee.multi_remove_handle(multi, transfer.easy.handle) }
        _ = library.api.pointee.multi_cleanup(multi)
    }

    /// This thread's worker, made on first use; nil when it cannot be made (the caller then
    /// uses the transfer thread).
    static func forThisThread(_ library: CurlLibrary) -> CurlThreadWorker? {
        if let stored = pthread_getspecific(workerKey) {
            return Unmanaged<CurlThreadWorker>.fromOpaque(stored).takeUnretainedValue()
        }
        guard let made = try? CurlThreadWorker(library) else { return nil }
        pthread_setspecific(workerKey, Unmanaged.passRetained(made).toOpaque())
        return made
    }

    /// Runs the transfer on this thread; nil when it cannot (the caller hosts no driver, or its
    /// driver belongs to another thread's worker): the caller then uses the transfer thread.
    func send(_ exchange: Exchange, origin: Origin, transport: CurlTransport, caller: any TransferCaller)
        async throws -> Response?
    {
        guard let driver = caller.driver(make: { CurlCallDriver(self) }), driver.worker === self else { return nil }
        return try await suspend(exchange, origin: origin, transport: transport, driver: driver)
    }

    /// Adds the transfer to the multi and suspends the task until the driver's waits end it.
    private func suspend(_ exchange: Exchange, origin: Origin, transport: CurlTransport, driver: CurlCallDriver)
        async throws -> Response
    {
        let easy = try idle.withLock { $0.popLast() } ?? CurlEasy(library)
        defer { idle.withLock { $0.append(easy) } }
        try transport.prepare(easy, exchange, origin: origin)
        try add(easy, exchange)
        let transfer = Transfer(easy: easy, driver: driver)
        running[easy.handle] = transfer
        let code = await withTaskCancellationHandler {
            await withCheckedContinuation { transfer.continuation = $0 }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .releasing)
            _ = library.api.pointee.multi_wakeup(multi)
        }
        guard let code else { throw CurlTransport.cancelled(exchange) }
        return try easy.finish(code, exchange)
    }

    private func add(_ easy: CurlEasy, _ exchange: Exchange) throws {
        let added = library.api.pointee.multi_add_handle(multi, easy.handle)
        guard added == CURLM_OK else {
            throw APIError(
                .network,
                "\(exchange.method) \(exchange.url): libcurl could not start the transfer (CURLMcode \(added.rawValue))",
                url: exchange.url)
        }
    }

    /// Drives the multi: ends cancelled transfers, moves the others on, and waits up to
    /// `milliseconds` for their sockets and the other sockets waited on (or a wake-up) when
    /// none ended.
    ///
    /// On this thread only.
    func drive(milliseconds: Int) {
        if collect() > 0 { return }
        if sockets.isEmpty {
            _ = library.api.pointee.multi_poll(multi, nil, 0, Int32(clamping: milliseconds), nil)
        } else {
            pollWithSockets(milliseconds: milliseconds)
        }
        _ = collect()
    }

    /// Suspends the task until `descriptor` is readable or `deadline` has passed, the thread
    /// waiting on it with its transfers' sockets (no other thread is involved).
    ///
    /// False when the call of `driver` was given up first (its thread no longer waits here).
    /// On this thread only, from a task of `driver`'s call.
    func readable(_ descriptor: Int32, until deadline: ContinuousClock.Instant, driver: CurlCallDriver) async -> Bool {
        await withCheckedContinuation { continuation in
            sockets.append(
                SocketWait(descriptor: descriptor, deadline: deadline, driver: driver, continuation: continuation))
        }
    }

    /// `multi_poll` with the other sockets as extra descriptors, at most until the first of
    /// their deadlines; resumes the tasks whose socket is readable or whose deadline passed.
    private func pollWithSockets(milliseconds: Int) {
        var waits = sockets.map { curl_waitfd(fd: $0.descriptor, events: Int16(CURL_WAIT_POLLIN), revents: 0) }
        let soonest = sockets.map(\.deadline).min() ?? .now
        let (seconds, attoseconds) = max(soonest - .now, .zero).components
        // Rounded up: woken before the deadline, the wait would only be made again.
        let untilDeadline = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let timeout = Int32(clamping: min(Int64(milliseconds), untilDeadline))
        _ = waits.withUnsafeMutableBufferPointer { buffer in
            library.api.pointee.multi_poll(multi, buffer.baseAddress, UInt32(buffer.count), timeout, nil)
        }
        let now = ContinuousClock.now
        var waiting: [SocketWait] = []
        for (wait, polled) in zip(sockets, waits) {
            if polled.revents != 0 || now >= wait.deadline {
                wait.continuation.resume(returning: true)
            } else {
                waiting.append(wait)
            }
        }
        sockets = waiting
    }

    /// Wakes a `drive` now waiting; any thread.
    func wake() {
        _ = library.api.pointee.multi_wakeup(multi)
    }

    /// Ends, as cancelled, every transfer of `driver` still running.
    func abandon(_ driver: CurlCallDriver) {
        for (handle, transfer) in running where transfer.driver === driver { end(handle, nil) }
        let (given, kept) = (sockets.filter { $0.driver === driver }, sockets.filter { $0.driver !== driver })
        sockets = kept
        for wait in given { wait.continuation.resume(returning: false) }
    }

    /// Ends cancelled transfers and those libcurl finished; how many ended.
    private func collect() -> Int {
        guard !running.isEmpty else { return 0 }
        var ended = 0
        for (handle, transfer) in running where transfer.cancelled.load(ordering: .acquiring) {
            end(handle, nil)
            ended += 1
        }
        library.performAndCollect(multi) { handle, code in
            end(handle, code)
            ended += 1
        }
        return ended
    }

    /// Takes the transfer off the multi and resumes its task with `code` (nil: cancelled).
    private func end(_ handle: UnsafeMutableRawPointer, _ code: CURLcode?) {
        _ = library.api.pointee.multi_remove_handle(multi, handle)
        guard let transfer = running.removeValue(forKey: handle) else { return }
        let continuation = transfer.continuation
        transfer.continuation = nil
        continuation?.resume(returning: code)
    }
}

/// The thread-local slot of `CurlThreadWorker`; the destructor releases a thread's worker.
private let workerKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { stored in
        guard let stored else { return }
        Unmanaged<CurlThreadWorker>.fromOpaque(stored).release()
    }
    return key
}()
