import Foundation

/// Waits out a rate limit (429, or 403 with `x-ratelimit-remaining: 0` or
/// `retry-after`) when the wait is at most `maxWait` seconds, then sends
/// again; otherwise raises `RateLimited` with the reset time.
///
/// A POST is not sent again.
public struct RateLimitStage: Stage {
    public let policy: RateLimitPolicy
    public let api: String?
    let sleep: @Sendable (Double) async throws -> Void
    let now: @Sendable () -> Double

    public init(
        policy: RateLimitPolicy, api: String?,
        sleep: @escaping @Sendable (Double) async throws -> Void = RetryStage.taskSleep,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.policy = policy
        self.api = api
        self.sleep = sleep
        self.now = now
    }

    /// How many times one request may wait before giving up.
    static let maxWaits = 3

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        var waits = 0
        while true {
            let response = try await next(exchange)
            switch policy.decide(response, now: now(), canRetry: exchange.isIdempotent && waits < Self.maxWaits) {
            case .proceed:
                return response
            case .wait(let seconds):
                waits += 1
                try await sleep(seconds)
            case .fail(let retryAfter, let resetAt):
                var message = "\(exchange.method) \(response.url) → \(response.status) rate limited"
                if let text = JSONPath.string(in: response.body, path: ["message"]) { message += ": \(text)" }
                if let retryAfter {
                    message +=
                        " (retry after \(Seconds.whole(retryAfter)) s; APIMACRO_MAX_WAIT is \(SecondsText.format(policy.maxWait)) s)"
                }
                throw APIError(
                    .rateLimited, message, status: response.status, url: response.url, api: api, body: response.text,
                    resetAt: resetAt, retryAfter: retryAfter)
            }
        }
    }
}
