import Clients
public import PythonBridge
import Synchronization
import WebAPI

/// The network transport, built on the first request that reaches the wire:
/// a macro that sends nothing (or is answered by the cache or a replay file)
/// never loads libcurl nor starts its transfer thread.
final class LazyNetwork: Transport {
    private let make: @Sendable () -> CurlTransport
    private let built = Mutex<CurlTransport?>(nil)

    init(_ make: @escaping @Sendable () -> CurlTransport) {
        self.make = make
    }

    /// The transport, built now if this is the first use.
    var transport: CurlTransport {
        built.withLock { stored in
            if let stored { return stored }
            let made = make()
            stored = made
            return made
        }
    }

    /// Whether the transport has been built (tests, and shutting down only what exists).
    var isBuilt: Bool { built.withLock { $0 != nil } }

    func send(_ exchange: Exchange) async throws -> Response {
        try await transport.send(exchange)
    }
}

/// The Python thread that waits on a call (`withoutGIL`), as the transport sees it: a
/// transfer started from that call's task runs on that thread, which waits on the call's
/// `CurlCallDriver` itself (its `CallerThreadWaiter`), and stops when a Ctrl-C or a deadline
/// makes Python raise (the task is cancelled).
struct PythonTransferCaller: TransferCaller {
    let executor: CallerThreadExecutor

    /// The waiting Python thread, when the current code runs on one.
    static let current: @Sendable () -> (any TransferCaller)? = {
        CallerThreadExecutor.current.map { PythonTransferCaller(executor: $0) }
    }

    func driver(make: () -> CurlCallDriver) -> CurlCallDriver? {
        executor.waiter(make: make)
    }
}

/// The transport's driver is what the Python thread waits on, with no wrapper between them
/// (WebAPI and PythonBridge do not know each other; its methods are the protocol's).
extension CurlCallDriver: CallerThreadWaiter {}
