/// Remembers the rate-limit headers of every response that passes, errors included (a 403
/// rate-limit answer, a 500), before the stages above turn it into an error: SPEC's
/// `github.rate_limit` is "as last seen in response headers".
public struct RateLimitMemoryStage: Stage {
    /// Where the last rate limit is kept, shared with the client (and its sibling clients) that read it.
    public let memory: RateLimitMemory

    public init(memory: RateLimitMemory) { self.memory = memory }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        remember(try await next(exchange), exchange)
    }

    public var atOnce: AtOnce.Role { .passes }

    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? {
        try next(exchange).map { remember($0, exchange) }
    }

    private func remember(_ response: Response, _ exchange: Exchange) -> Response {
        if let info = RateLimitInfo(headers: response.headers) {
            // A rate-limit answer itself is the rate-limit stage's to wait on or raise; what a
            // resource has left is read from the answers that went through.
            if RateLimitPolicy.isRateLimit(response) {
                memory.record(info)
            } else {
                memory.record(info, url: exchange.url)
            }
        }
        return response
    }
}
