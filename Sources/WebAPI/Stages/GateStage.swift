/// A client's own check before one of its requests is sent (`ClientConfiguration.gate`):
/// Bitly's plan and platform limits refuse a request the month's (or the hour's) quota has
/// no room for, before it leaves.
///
/// `admit` may look things up first (with the client itself: a lookup must then let its own
/// requests through) and throws the `APIError` that keeps the request from being sent.
public protocol RequestGate: Sendable {
    /// Throws to keep `exchange` from being sent; returns to let it go.
    func admit(_ exchange: Exchange) async throws
}

/// Asks the client's `RequestGate` before each call goes on.
///
/// It sits below the cache and the replay (an answer served from either sends nothing) and
/// above the retries and the cap on requests in flight: a call waiting on the gate's lookups
/// holds no place in flight, which the lookups themselves may need.
struct GateStage: Stage {
    let gate: any RequestGate

    nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        try await gate.admit(exchange)
        return try await next(exchange)
    }
}
