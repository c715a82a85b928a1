import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The network transport: AsyncHTTPClient with one keep-alive connection pool
/// per process. Redirects are left to `RedirectStage`; bodies are
/// decompressed; the deadline covers the whole exchange, body included.
public final class HTTPTransport: Transport {
    private let client: HTTPClient
    /// `User-Agent` sent with every request (GitHub rejects requests without one).
    public let userAgent: String
    /// The largest body accepted. Default 256 MiB.
    public let maximumBodySize: Int

    /// - Parameters:
    ///   - userAgent: `apimacro/VERSION`.
    ///   - connectionsPerHost: pool size per host; 64 lets `map(..., concurrency=32)` run at full width.
    public init(userAgent: String, connectionsPerHost: Int = 64, maximumBodySize: Int = 256 << 20) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10)),
            decompression: .enabled(limit: .ratio(200))
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
        var request = HTTPClientRequest(url: exchange.url)
        request.method = HTTPMethod(rawValue: exchange.method)
        for (name, value) in exchange.headers { request.headers.add(name: name, value: value) }
        if request.headers["User-Agent"].isEmpty { request.headers.add(name: "User-Agent", value: userAgent) }
        if request.headers["Accept-Encoding"].isEmpty { request.headers.add(name: "Accept-Encoding", value: "gzip, deflate") }
        if !exchange.body.isEmpty || ["POST", "PUT", "PATCH"].contains(exchange.method) {
            request.body = .bytes(ByteBuffer(bytes: exchange.body))
        }
        let seconds = exchange.timeout
        let deadline = NIODeadline.now() + .nanoseconds(Int64(seconds * 1e9))
        do {
            // AsyncHTTPClient's deadline covers the head and the body stream alike.
            let response = try await client.execute(request, deadline: deadline)
            let body = try await response.body.collect(upTo: maximumBodySize)
            let headers = Headers(response.headers.map { ($0.name, $0.value) })
            return Response(status: Int(response.status.code), headers: headers, body: Array(buffer: body), url: exchange.url)
        } catch {
            throw HTTPTransport.translate(error, exchange: exchange)
        }
    }

    /// Maps transport errors onto `APIError`: timeouts, cancellation, and
    /// everything else that left no HTTP response as a network error.
    static func translate(_ error: any Error, exchange: Exchange) -> APIError {
        if let apiError = error as? APIError { return apiError }
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

    static func timeout(_ exchange: Exchange) -> APIError {
        APIError(
            .timeout, "\(exchange.method) \(exchange.url): no complete response within \(formatSeconds(exchange.timeout)) s",
            url: exchange.url)
    }

    static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
