import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The network transport: AsyncHTTPClient with one keep-alive connection pool
/// per process.
///
/// Redirects are left to `RedirectStage`; bodies are decompressed; the deadline
/// covers the whole exchange, body included.
public final class HTTPTransport: Transport {
    private let client: HTTPClient
    /// `User-Agent` sent with every request (GitHub rejects requests without one).
    public let userAgent: String
    /// The largest body accepted.
    ///
    /// Default 256 MiB.
    public let maximumBodySize: Int
    /// The most a compressed body may inflate (decompressed size / compressed size).
    static let decompressionRatio = 200

    /// - Parameters:
    ///   - userAgent: `apimacro/VERSION`.
    ///   - connectionsPerHost: pool size per host; 64 lets `map(..., concurrency=32)` run at full width.
    ///   - maximumBodySize: the largest body accepted; default 256 MiB.
    public init(userAgent: String, connectionsPerHost: Int = 64, maximumBodySize: Int = 256 << 20) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10)),
            decompression: .enabled(limit: .ratio(HTTPTransport.decompressionRatio))
        )
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
        configuration.connectionPool.idleTimeout = .seconds(60)
        // A refused connection fails at once; RetryStage decides about retries (with backoff),
        // instead of the pool silently retrying until the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.userAgent = userAgent
        self.maximumBodySize = maximumBodySize
    }

    /// Closes the connection pool; call once before the process ends.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    public func send(_ exchange: Exchange) async throws -> Response {
        // The last line of defence: AsyncHTTPClient also speaks `http+unix://` and
        // `https+unix://` (a local socket); nothing but http(s) ever reaches it.
        guard let scheme = SchemeRule.scheme(of: exchange.url), SchemeRule.allowedSchemes.contains(scheme) else {
            throw APIError(
                .network,
                "\(exchange.method) \(exchange.url): refused, only http and https URLs are sent; nothing was sent",
                url: exchange.url)
        }
        var request = HTTPClientRequest(url: exchange.url)
        request.method = HTTPMethod(rawValue: exchange.method)
        for (name, value) in exchange.headers { request.headers.add(name: name, value: value) }
        if request.headers["User-Agent"].isEmpty { request.headers.add(name: "User-Agent", value: userAgent) }
        if request.headers["Accept-Encoding"].isEmpty {
            request.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        }
        if !exchange.body.isEmpty || ["POST", "PUT", "PATCH"].contains(exchange.method) {
            request.body = .bytes(ByteBuffer(bytes: exchange.body))
        }
        let seconds = max(0, exchange.timeout)
        let deadline = NIODeadline.now() + .nanoseconds(Int64(min(seconds, 1e9) * 1e9))
        let (client, limit, prepared) = (self.client, maximumBodySize, request)
        do {
            // AsyncHTTPClient's deadline ends only the wait for the response head; a body
            // that stalls or trickles would run on. The race below ends the whole exchange,
            // body included, at the deadline: the losing task is cancelled, which closes
            // the connection.
            let answer = try await HTTPTransport.within(seconds: seconds) { () async throws -> Response in
                let response = try await client.execute(prepared, deadline: deadline)
                let body = try await response.body.collect(upTo: limit)
                let headers = Headers(response.headers.map { ($0.name, $0.value) })
                return Response(
                    status: Int(response.status.code), headers: headers, body: Array(buffer: body), url: exchange.url)
            }
            guard let answer else { throw HTTPTransport.timeout(exchange) }
            return answer
        } catch {
            throw HTTPTransport.translate(error, exchange: exchange, limit: limit)
        }
    }

    /// The result of `work`, or nil when `seconds` pass first (then `work` is cancelled
    /// and awaited: it must end promptly on cancellation, as AsyncHTTPClient's requests do).
    static func within<T: Sendable>(seconds: Double, _ work: @escaping @Sendable () async throws -> T) async throws
        -> T?
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: .nanoseconds(Int64(min(seconds, 1e9) * 1e9)))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Maps transport errors onto `APIError`: timeouts, cancellation, and
    /// everything else that left no HTTP response as a network error.
    static func translate(_ error: any Error, exchange: Exchange, limit: Int = 256 << 20) -> APIError {
        if let apiError = error as? APIError { return apiError }
        if let tooLarge = sizeLimitError(error, exchange: exchange, limit: limit) { return tooLarge }
        if error is CancellationError || Task.isCancelled {
            return APIError(.cancelled, "\(exchange.method) \(exchange.url): cancelled", url: exchange.url)
        }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .cancelled, .requestStreamCancelled:
                return APIError(.cancelled, "\(exchange.method) \(exchange.url): cancelled", url: exchange.url)
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout:
                return timeout(exchange)
            default:
                break
            }
        }
        if let channelError = error as? ChannelError, case .connectTimeout = channelError { return timeout(exchange) }
        let reason = String(describing: error)
        return APIError(.network, "\(exchange.method) \(exchange.url): no response (\(reason))", url: exchange.url)
    }

    /// A body over the size limit, or one that inflates past the decompression ratio (a gzip
    /// bomb): a `NetworkError` that is never retried (the same server would send it again).
    static func sizeLimitError(_ error: any Error, exchange: Exchange, limit: Int) -> APIError? {
        let reason: String
        if error is NIOTooManyBytesError {
            reason = "the body is larger than \(limit >> 20) MiB"
        } else if String(reflecting: error).hasSuffix("DecompressionError.limit") {
            // NIOHTTPCompression's error, matched by name: WebAPI does not import that module.
            reason = "the compressed body inflates more than \(decompressionRatio) times (a decompression bomb)"
        } else {
            return nil
        }
        var tooLarge = APIError(.network, "\(exchange.method) \(exchange.url): refused, \(reason)", url: exchange.url)
        tooLarge.isRetryable = false
        return tooLarge
    }

    static func timeout(_ exchange: Exchange) -> APIError {
        APIError(
            .timeout,
            "\(exchange.method) \(exchange.url): no complete response within \(formatSeconds(exchange.timeout)) s",
            url: exchange.url)
    }

    static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
