import Foundation

/// Waits out a rate limit (429, or 403 with `x-ratelimit-remaining: 0` or
/// `retry-after`) when the wait is at most `maxWait` seconds, then sends
/// again; otherwise raises `RateLimited` with the reset time.
///
/// Before a request is sent, a resource its last answer said is spent (`RateLimitMemory`:
/// GitHub's `search` bucket of 30 a minute, its `core` one) is waited on the same way, so the
/// request does not go only to be refused.
///
/// A POST is not sent again, except after an answer that says one of the API's secondary
/// limits was exceeded (`RateLimitPolicy.isSecondary`: the API refused it without acting on it).
public struct RateLimitStage: Stage {
    public let policy: RateLimitPolicy
    public let api: String?
    /// What the last answers said of each resource; nil when the client keeps no memory.
    let memory: RateLimitMemory?
    let sleep: @Sendable (Double) async throws -> Void
    let now: @Sendable () -> Double

    public init(
        policy: RateLimitPolicy, api: String?, memory: RateLimitMemory? = nil,
        sleep: @escaping @Sendable (Double) async throws -> Void = RetryStage.taskSleep,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.policy = policy
        self.api = api
        self.memory = memory
        self.sleep = sleep
        self.now = now
    }

    /// Waits for the reset of the resource `exchange` counts against when it is known to be
    /// spent, or raises `RateLimited` without sending when that is longer than `maxWait`.
    func waitForSpentResource(_ exchange: Exchange) async throws {
        let moment = now()
        guard let memory, let spent = memory.spent(before: exchange.url, now: moment) else { return }
        let seconds = RateLimitPolicy.wait(untilReset: Double(spent.reset), now: moment)
        guard seconds <= policy.maxWait else {
            throw APIError(
                .rateLimited,
                "\(exchange.method) \(exchange.url): the \(spent.resource) rate limit is spent until "
                    + "\(GovernorStage.clock(Int64(spent.reset))), in \(Seconds.whole(seconds)) s; APIMACRO_MAX_WAIT is "
                    + "\(SecondsText.format(policy.maxWait)) s (nothing was sent)",
                url: exchange.url, api: api, resetAt: spent.reset, retryAfter: seconds)
        }
        try await sleep(seconds)
    }

    /// How many times one request may wait before giving up.
    static let maxWaits = 3

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        try await waitForSpentResource(exchange)
        var waits = 0
        while true {
            let response = try await next(exchange)
            let mayResend = exchange.isIdempotent || policy.isSecondary(response)
            switch policy.decide(response, now: now(), canRetry: mayResend && waits < Self.maxWaits) {
            case .proceed:
                return response
            case .wait(let seconds):
                waits += 1
                try await sleep(seconds)
            case .fail(let retryAfter, let resetAt, let secondary):
                var message = "\(exchange.method) \(response.url) → \(response.status) rate limited"
                if let text = JSONPath.string(in: response.body, path: ["message"]) { message += ": \(text)" }
                if let retryAfter {
                    message +=
                        " (retry after \(Seconds.whole(retryAfter)) s; APIMACRO_MAX_WAIT is \(SecondsText.format(policy.maxWait)) s)"
                }
                var error = APIError(
                    .rateLimited, message, status: response.status, url: response.url, api: api, body: response.text,
                    resetAt: resetAt, retryAfter: retryAfter)
                error.isSecondary = secondary
                throw error
            }
        }
    }
}
