import CCurl
import Platform
import Synchronization

/// The network transport: libcurl (loaded on first use, see `CurlLibrary`), one keep-alive
/// connection cache for the process.
///
/// Redirects are left to `RedirectStage`; bodies are decompressed (gzip, deflate, br,
/// zstd) within a 200× ratio and a size cap; the deadline covers the whole exchange, body
/// included; only http and https are ever spoken.
///
/// A call made from a caller thread (the `caller` hook returns one: the Python thread that
/// waits on it) runs its transfer right there, on that thread's `curl_multi` and reused easy
/// handles (`CurlThreadWorker`): the call's task suspends on its transfer and the thread,
/// waiting with the GIL released, drives every transfer its tasks started (all of
/// `apimacro.map`'s calls in flight), stopping them within about 20 ms of a Ctrl-C or a
/// deadline. Any other call (tests, the CLI's own requests) goes to the transport's transfer
/// thread, which drives every such transfer at once through its own `curl_multi`, so the
/// cooperative pool never blocks; cancelling the task stops its transfer.
public final class CurlTransport: Transport {
    /// `User-Agent` sent with every request that has none (GitHub rejects requests without one).
    public let userAgent: String
    /// The largest body accepted.
    ///
    /// Default 256 MiB.
    public let maximumBodySize: Int
    /// Proxies and certificate authorities, applied to every request.
    public let network: NetworkSettings
    /// The longest a non-idempotent request's connection may have been idle to be reused
    /// (`CURLOPT_MAXAGE_CONN`, seconds).
    ///
    /// Default 2: servers close idle connections after 5 s (Apache, Node) to 75 s (nginx), so
    /// one idle for less than that is not being closed as the request leaves.
    public let nonIdempotentConnectionAge: Int
    /// The most a compressed body may inflate (decompressed size / compressed size).
    static let decompressionRatio = 200
    private let caller: (@Sendable () -> (any TransferCaller)?)?
    private let transfers = Mutex<CurlTransferThread?>(nil)
    private let stopped = Atomic<Bool>(false)

    /// - Parameters:
    ///   - userAgent: `apimacro/VERSION`.
    ///   - maximumBodySize: the largest body accepted (a larger one is a never-retried NetworkError).
    ///   - network: proxies and CA bundle, resolved once by Settings.
    ///   - caller: the thread that waits on the call now, if it may run the transfer itself.
    ///   - nonIdempotentConnectionAge: how long (seconds) a connection may have been idle for a
    ///     POST or another non-idempotent request to reuse it; default 2.
    public init(
        userAgent: String, maximumBodySize: Int = 256 << 20, network: NetworkSettings = .direct,
        caller: (@Sendable () -> (any TransferCaller)?)? = nil, nonIdempotentConnectionAge: Int = 2
    ) {
        self.nonIdempotentConnectionAge = nonIdempotentConnectionAge
        self.userAgent = userAgent
        self.maximumBodySize = maximumBodySize
        self.network = network
        self.caller = caller
    }

    /// Ends the transfer thread (its transfers end as cancelled); call once before the
    /// process ends.
    ///
    /// Calls made afterwards are refused.
    public func shutdown() async throws {
        stopped.store(true, ordering: .releasing)
        transfers.withLock { $0 }?.stop()
    }

    public func send(_ exchange: Exchange) async throws -> Response {
        // The last line of defence: nothing but http(s) ever reaches libcurl (which also
        // speaks file://, ftp://, smtp://…; CURLOPT_PROTOCOLS_STR refuses them as well).
        guard let scheme = SchemeRule.scheme(of: exchange.url), SchemeRule.allowedSchemes.contains(scheme),
            let origin = exchange.origin
        else { throw Self.notHTTP(exchange) }
        guard !stopped.load(ordering: .acquiring) else { throw Self.cancelled(exchange) }
        try Task.checkCancellation()
        let library = try CurlLibrary.shared()
        if let caller = caller?(), let worker = CurlThreadWorker.forThisThread(library),
            let response = try await worker.send(exchange, origin: origin, transport: self, caller: caller)
        {
            return response
        }
        return try await transferThread(library).send(exchange, origin: origin, transport: self)
    }

    private func transferThread(_ library: CurlLibrary) throws -> CurlTransferThread {
        try transfers.withLock { thread in
            if let thread { return thread }
            let made = try CurlTransferThread(library)
            thread = made
            return made
        }
    }

    func prepare(_ easy: CurlEasy, _ exchange: Exchange, origin: Origin) throws {
        try easy.prepare(
            exchange, userAgent: userAgent, limit: maximumBodySize, network: network, origin: origin,
            nonIdempotentAge: nonIdempotentConnectionAge)
    }

    // The errors are made in functions of their own, not inlined: what they hold lives on the
    // thread's stack, not in the async frames of `send` and the transfer's task.
    @inline(never)
    private static func notHTTP(_ exchange: Exchange) -> APIError {
        APIError(
            .network,
            "\(exchange.method) \(exchange.url): refused, only http and https URLs are sent; nothing was sent",
            url: exchange.url)
    }

    @inline(never)
    static func timeout(_ exchange: Exchange) -> APIError {
        APIError(
            .timeout,
            "\(exchange.method) \(exchange.url): no complete response within \(SecondsText.format(exchange.timeout)) s",
            url: exchange.url)
    }

    @inline(never)
    static func cancelled(_ exchange: Exchange) -> APIError {
        APIError(.cancelled, "\(exchange.method) \(exchange.url): cancelled", url: exchange.url)
    }
}
