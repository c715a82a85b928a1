/// Keeps at most `limit.limit` of a client's requests in flight: a request waits (suspended)
/// for a place before it goes on to the network, and gives it back when its answer is in.
///
/// It sits below the retries (a retry's backoff holds no place) and above the credentials and
/// the transport; answers from the cache or a replay file never reach it. Only clients whose
/// configuration sets `maxConcurrentRequests` have it (the shortener's Bitly backend: Bitly
/// allows five concurrent connections per address and sends no rate-limit headers to pace by).
public struct ConcurrencyLimitStage: Stage {
    /// The places, shared by every request of the client.
    public let limit: ConcurrencyLimit

    /// A stage that lets `limit.limit` requests through at once.
    public init(limit: ConcurrencyLimit) {
        self.limit = limit
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        try await limit.withPlace { try await next(exchange) }
    }
}
