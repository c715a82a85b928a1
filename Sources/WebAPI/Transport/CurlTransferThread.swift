import CCurl
import Platform
import Spawning
import Synchronization

/// The transport's own thread for calls that do not run on a caller thread: it drives
/// every such transfer at once through one `curl_multi` (so `apimacro.map`'s 32 calls in
/// flight are 32 transfers on this thread) and resumes each waiting task when its transfer
/// ends.
///
/// Nothing blocks Swift's cooperative pool; cancelling a task removes its transfer at once
/// (`curl_multi_wakeup`).
final class CurlTransferThread: @unchecked Sendable {
    /// A transfer handed to the thread, and how to tell its task the outcome.
    private struct Job {
        let easy: CurlEasy
        let ticket: Ticket
        let continuation: CheckedContinuation<CURLcode?, Never>
    }

    /// Set when the waiting task is cancelled.
    private final class Ticket: Sendable {
        let cancelled = Atomic<Bool>(false)
    }

    private struct State {
        var incoming: [Job] = []
        var stopping = false
    }

    private let library: CurlLibrary
    /// The multi handle: touched only by the thread (curl_multi_wakeup excepted).
    private let multi: UnsafeMutableRawPointer
    private let state = Mutex(State())
    /// Easy handles between transfers (keep-alive: their connections stay in the share).
    private let idle = Mutex<[CurlEasy]>([])

    init(_ library: CurlLibrary) throws {
        guard let multi = library.api.pointee.multi_init() else {
            throw APIError(.network, "cannot create a libcurl multi handle (curl_multi_init failed)")
        }
        self.library = library
        self.multi = multi
        do {
            try NativeThread.start(name: "apimacro-curl") { [self] in run() }
        } catch {
            throw APIError(.network, "cannot start libcurl's transfer thread (\(error))")
        }
    }

    /// Ends the thread: transfers running or waiting end as cancelled.
    func stop() {
        state.withLock { $0.stopping = true }
        _ = library.api.pointee.multi_wakeup(multi)
    }

    func send(_ exchange: Exchange, origin: Origin, transport: CurlTransport) async throws -> Response {
        let easy = try idle.withLock { $0.popLast() } ?? CurlEasy(library)
        try transport.prepare(easy, exchange, origin: origin)
        let ticket = Ticket()
        let code = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CURLcode?, Never>) in
                let accepted = state.withLock { state in
                    guard !state.stopping else { return false }
                    state.incoming.append(Job(easy: easy, ticket: ticket, continuation: continuation))
                    return true
                }
                if accepted {
                    _ = library.api.pointee.multi_wakeup(multi)
                } else {
                    continuation.resume(returning: nil)
                }
            }
        } onCancel: {
            ticket.cancelled.store(true, ordering: .releasing)
            _ = library.api.pointee.multi_wakeup(multi)
        }
        defer { idle.withLock { $0.append(easy) } }
        guard let code else { throw CurlTransport.cancelled(exchange) }
        return try easy.finish(code, exchange)
    }

    private func run() {
        let api = library.api
        var active: [UnsafeMutableRawPointer: Job] = [:]
        func end(_ handle: UnsafeMutableRawPointer, _ code: CURLcode?) {
            _ = api.pointee.multi_remove_handle(multi, handle)
            active.removeValue(forKey: handle)?.continuation.resume(returning: code)
        }
        while true {
            let (incoming, stopping) = state.withLock { state in
                defer { state.incoming.removeAll() }
                return (state.incoming, state.stopping)
            }
            for job in incoming {
                if stopping || job.ticket.cancelled.load(ordering: .acquiring) {
                    job.continuation.resume(returning: nil)
                } else if api.pointee.multi_add_handle(multi, job.easy.handle) == CURLM_OK {
                    active[job.easy.handle] = job
                } else {
                    job.continuation.resume(returning: CURLE_FAILED_INIT)  // a network error, not a hang
                }
            }
            for (handle, job) in active where stopping || job.ticket.cancelled.load(ordering: .acquiring) {
                end(handle, nil)
            }
            if stopping { break }
            library.performAndCollect(multi) { handle, code in end(handle, code) }
            _ = api.pointee.multi_poll(multi, nil, 0, 1_000, nil)
        }
    }

    deinit {
        // Here, not at the end of `run`: a late `stop()` or cancellation may still wake the multi.
        _ = library.api.pointee.multi_cleanup(multi)
    }
}
