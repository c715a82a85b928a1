import Platform

/// Retries idempotent requests on connection errors, 502, 503 and 504 (and an error answer the
/// client's API calls transient) with backoff and jitter.
///
/// Never retries a POST (its body may have been sent), a timeout (a slow server
/// would only be asked again), a body over the size limit or a decompression
/// bomb (`APIError.isRetryable`), or a cancellation. Each attempt is bounded by
/// the exchange's timeout (body included), so one request takes at most
/// `timeout × (maxRetries + 1)` plus the backoff
/// (`RetryPolicy.maximumTotalDelay`).
public struct RetryStage: Stage {
    public let policy: RetryPolicy
    /// Waits between attempts (tests pass a recorder).
    let sleep: @Sendable (Double) async throws -> Void
    /// Whether an answer with another status says it is worth sending again (the Graph API's
    /// `is_transient`).
    let isTransient: @Sendable (Response) -> Bool

    public init(
        policy: RetryPolicy, sleep: @escaping @Sendable (Double) async throws -> Void = RetryPolicy.taskSleep,
        isTransient: @escaping @Sendable (Response) -> Bool = { _ in false }
    ) {
        self.policy = policy
        self.sleep = sleep
        self.isTransient = isTransient
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        var attempt = 0
        // The attempt's number travels with it: the `-v` line of a failed one says which it was.
        var exchange = exchange
        exchange.attemptLimit = exchange.isIdempotent ? policy.maxRetries + 1 : 1
        while true {
            exchange.attempt = attempt + 1
            do {
                let response = try await next(exchange)
                guard exchange.isIdempotent,
                    RetryPolicy.retryableStatuses.contains(response.status)
                        || (!response.isSuccess && isTransient(response))
                else {
                    return response
                }
                attempt += 1
                guard let delay = policy.delay(attempt: attempt, random: { Double.random(in: 0..<1) }) else {
                    return response
                }
                try await sleep(delay)
            } catch let error as APIError where error.kind == .network && error.isRetryable && exchange.isIdempotent {
                attempt += 1
                guard let delay = policy.delay(attempt: attempt, random: { Double.random(in: 0..<1) }) else {
                    throw error
                }
                try await sleep(delay)
            }
        }
    }
}
