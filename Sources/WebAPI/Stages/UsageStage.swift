public import Platform

/// The rate-limit rule of an API that reports its usage (`UsageRule`, Meta's Graph APIs):
/// remembers the usage of every answer; while a quota is used up, waits the time the API gave
/// before sending, when that is at most `maxWait`, else raises `RateLimited` without sending;
/// and waits out a rate-limit answer the same way before asking again (idempotent requests,
/// at most `maxWaits` times).
///
/// It sits right above the credentials, below the retries: every send, retries included, is
/// checked. A rate-limit answer it does not wait out goes up to `StatusStage`, which raises
/// `RateLimited` with the time the API gave.
public struct UsageStage: Stage {
    public let rule: UsageRule
    public let memory: UsageMemory
    /// The longest wait accepted (`APIMACRO_MAX_WAIT`).
    public let maxWait: Double
    public let api: String?
    let sleep: @Sendable (Double) async throws -> Void
    let now: @Sendable () -> Double

    /// How many times one request may wait before giving up.
    static let maxWaits = 3

    public init(
        rule: UsageRule, memory: UsageMemory, maxWait: Double, api: String?,
        sleep: @escaping @Sendable (Double) async throws -> Void = RetryPolicy.taskSleep,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.rule = rule
        self.memory = memory
        self.maxWait = maxWait
        self.api = api
        self.sleep = sleep
        self.now = now
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        var waits = 0
        while true {
            if let wait = memory.wait(now: now()) {
                guard wait <= maxWait, waits < Self.maxWaits else {
                    throw refusal(exchange, wait: wait)
                }
                waits += 1
                try await sleep(wait)
                memory.waited()
            }
            let response = try await next(exchange)
            if let usage = rule.read(response.headers) { memory.record(usage, now: now()) }
            guard rule.isThrottled(response), exchange.isIdempotent, waits < Self.maxWaits,
                let wait = memory.wait(now: now()), wait <= maxWait
            else { return response }
        }
    }

    /// `RateLimited` for a request not sent: the quota is used up for longer than `maxWait`.
    func refusal(_ exchange: Exchange, wait: Double) -> APIError {
        let percent = memory.last.map { Seconds.whole(min($0.percent, 1e6)) } ?? 100
        let message =
            "\(exchange.method) \(exchange.url) not sent: \(api ?? "the API") reported \(percent)% of its quota used, "
            + "and calls are allowed again in about \(Seconds.whole(wait)) s "
            + "(APIMACRO_MAX_WAIT is \(SecondsText.format(maxWait)) s)"
        return APIError(
            .rateLimited, message, url: exchange.url, api: api, resetAt: Int(now() + wait), retryAfter: wait)
    }
}
