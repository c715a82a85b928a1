import Synchronization

/// Remembers the rate-limit headers of every response that passes, errors included (a 403
/// rate-limit answer, a 500), before the stages above turn it into an error: SPEC's
/// `github.rate_limit` is "as last seen in response headers".
public struct RateLimitMemoryStage: Stage {
    /// The last rate-limit headers seen, shared with the client that reads them.
    public final class Memory: Sendable {
        private let last = Mutex<RateLimitInfo?>(nil)

        public init() {}

        public var value: RateLimitInfo? { last.withLock { $0 } }

        func remember(_ headers: Headers) {
            guard let info = RateLimitInfo(headers: headers) else { return }
            last.withLock { $0 = info }
        }
    }

    public let memory: Memory

    public init(memory: Memory) { self.memory = memory }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let response = try await next(exchange)
        memory.remember(response.headers)
        return response
    }
}
