import CCurl
import Foundation

/// The easy handle (and a one-handle multi to drive it) of one caller thread, reused by
/// every call that thread makes: the transfer runs on the thread that waits for it, with
/// no hop.
///
/// Kept in a thread-local slot, released when the thread ends.
final class CurlThreadWorker {
    private let easy: CurlEasy
    private let multi: UnsafeMutableRawPointer
    /// A transfer is running on this thread (a signal handler that sends a request from
    /// inside `shouldStop` gets the transfer thread instead).
    private var busy = false

    private init(_ library: CurlLibrary) throws {
        guard let multi = library.api.pointee.multi_init() else {
            throw APIError(.network, "cannot create a libcurl multi handle (curl_multi_init failed)")
        }
        self.multi = multi
        easy = try CurlEasy(library)
    }

    deinit {
        _ = easy.library.api.pointee.multi_cleanup(multi)
    }

    /// This thread's worker, made on first use; nil when one is busy on this thread already
    /// or cannot be made (the caller then uses the transfer thread).
    static func forThisThread(_ library: CurlLibrary) -> CurlThreadWorker? {
        if let stored = pthread_getspecific(workerKey) {
            let worker = Unmanaged<CurlThreadWorker>.fromOpaque(stored).takeUnretainedValue()
            return worker.busy ? nil : worker
        }
        guard let made = try? CurlThreadWorker(library) else { return nil }
        pthread_setspecific(workerKey, Unmanaged.passRetained(made).toOpaque())
        return made
    }

    /// Runs the transfer on this thread, asking `caller` about every 20 ms whether to stop.
    func send(_ exchange: Exchange, origin: Origin, transport: CurlTransport, caller: any TransferCaller) throws
        -> Response
    {
        busy = true
        defer { busy = false }
        try transport.prepare(easy, exchange, origin: origin)
        let api = easy.library.api
        let added = api.pointee.multi_add_handle(multi, easy.handle)
        guard added == CURLM_OK else {
            throw APIError(
                .network,
                "\(exchange.method) \(exchange.url): libcurl could not start the transfer (CURLMcode \(added.rawValue))",
                url: exchange.url)
        }
        defer { _ = api.pointee.multi_remove_handle(multi, easy.handle) }
        var running: Int32 = 0
        while true {
            _ = api.pointee.multi_perform(multi, &running)
            var queued: Int32 = 0
            var done: UnsafeMutableRawPointer?
            var code = CURLE_OK
            while let message = api.pointee.multi_info_read(multi, &queued) {
                if ccurl_message_done(message, &done, &code) != 0 { return try easy.finish(code, exchange) }
            }
            if caller.shouldStop() || Task.isCancelled { throw CurlTransport.cancelled(exchange) }
            _ = api.pointee.multi_poll(multi, nil, 0, 20, nil)
        }
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
