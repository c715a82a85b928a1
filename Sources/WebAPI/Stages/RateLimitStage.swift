public import Platform

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
    /// The API's message in a rate-limit answer (default: a JSON body's `message`).
    let message: @Sendable (Response) -> String?
    /// The facts of the answer the error carries (the Graph API's `code`, …).
    let details: @Sendable (Response) -> [APIError.Detail]
    /// Seconds until calls are allowed again when the headers this stage reads do not say
    /// (the Graph API's usage headers).
    let retryAfter: @Sendable (Response) -> Double?

    public init(
        policy: RateLimitPolicy, api: String?, memory: RateLimitMemory? = nil,
        sleep: @escaping @Sendable (Double) async throws -> Void = RetryPolicy.taskSleep,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        message: @escaping @Sendable (Response) -> String? = ClientConfiguration.jsonMessage,
        details: @escaping @Sendable (Response) -> [APIError.Detail] = { _ in [] },
        retryAfter: @escaping @Sendable (Response) -> Double? = { _ in nil }
    ) {
        self.policy = policy
        self.api = api
        self.memory = memory
        self.sleep = sleep
        self.now = now
        self.message = message
        self.details = details
        self.retryAfter = retryAfter
    }

    /// Waits for the reset of the resource `exchange` counts against when it is known to be
    /// spent, or raises `RateLimited` without sending when that is longer than `maxWait`.
    nonisolated(nonsending) func waitForSpentResource(_ exchange: Exchange) async throws {
        let moment = now()
        guard let memory, let spent = memory.spent(before: exchange.url, now: moment) else { return }
        let seconds = RateLimitPolicy.wait(untilReset: Double(spent.reset), now: moment)
        guard seconds <= policy.maxWait else {
            throw spentError(exchange, resource: spent.resource, reset: spent.reset, seconds: seconds)
        }
        try await sleep(seconds)
    }

    /// The error for a request not sent while `resource` is spent for longer than `maxWait`
    /// (made here, not inlined in an async frame).
    @inline(never)
    private func spentError(_ exchange: Exchange, resource: String, reset: Int, seconds: Double) -> APIError {
        APIError(
            .rateLimited,
            "\(exchange.method) \(exchange.url): the \(resource) rate limit is spent until "
                + "\(GovernorStage.clock(Int64(reset))), in \(Seconds.whole(seconds)) s; APIMACRO_MAX_WAIT is "
                + "\(SecondsText.format(policy.maxWait)) s (nothing was sent)",
            url: exchange.url, api: api, resetAt: reset, retryAfter: seconds)
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let span = ContinuousClock.now - start
        return ((Double(span.components.seconds) * 1000 + Double(span.components.attoseconds) / 1e15) * 1000)
            .rounded() / 1000
    }

    /// How many times one request may wait before giving up.
    static let maxWaits = 3

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        var exchange = exchange
        var began = ContinuousClock.now
        try await waitForSpentResource(exchange)
        // Each attempt carries the wait before it, for the HAR's timings (`HARRecordStage`).
        exchange.heldAbove = Self.milliseconds(since: began)
        var waits = 0
        while true {
            let response = try await next(exchange)
            let mayResend = exchange.isIdempotent || policy.isSecondary(response)
            switch policy.decide(response, now: now(), canRetry: mayResend && waits < Self.maxWaits) {
            case .proceed:
                return response
            case .wait(let seconds):
                waits += 1
                began = ContinuousClock.now
                try await sleep(seconds)
                exchange.heldAbove = Self.milliseconds(since: began)
            case .fail(let headerWait, let headerReset, let secondary):
                throw failure(
                    exchange, response, headerWait: headerWait, headerReset: headerReset, secondary: secondary)
            }
        }
    }

    /// `handle` for an answer the stages below give at once: nil when a resource is known to
    /// be spent (`handle` waits for it, or raises); a stored answer that asks for a wait goes the
    /// asynchronous way (`AtOnce.Unfinished`; a cache answers at once only with a 2xx, which
    /// never does).
    public var atOnce: AtOnce.Role { .passes }

    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? {
        if let memory, memory.spent(before: exchange.url, now: now()) != nil { return nil }
        // No wait before it (`heldAbove` stays 0: only the HAR recorder reads it, which answers nothing at once).
        guard let response = try next(exchange) else { return nil }
        let mayResend = exchange.isIdempotent || policy.isSecondary(response)
        switch policy.decide(response, now: now(), canRetry: mayResend) {
        case .proceed:
            return response
        case .wait:
            throw AtOnce.Unfinished()
        case .fail(let headerWait, let headerReset, let secondary):
            throw failure(exchange, response, headerWait: headerWait, headerReset: headerReset, secondary: secondary)
        }
    }

    /// The error for a rate-limit answer not waited out.
    @inline(never)
    private func failure(
        _ exchange: Exchange, _ response: Response, headerWait: Double?, headerReset: Int?, secondary: Bool
    ) -> APIError {
        var text = "\(exchange.method) \(response.url) → \(response.status) rate limited"
        if let reason = message(response) { text += ": \(reason)" }
        let retryAfter =
            headerWait ?? self.retryAfter(response).map { min(max(0, $0), RateLimitPolicy.longestWait) }
        if let retryAfter {
            text +=
                " (retry after \(Seconds.whole(retryAfter)) s; APIMACRO_MAX_WAIT is \(SecondsText.format(policy.maxWait)) s)"
        }
        var error = APIError(
            .rateLimited, text, status: response.status, url: response.url, api: api, body: response.text,
            resetAt: headerReset ?? retryAfter.map { Int(now() + $0) }, retryAfter: retryAfter)
        error.details = details(response)
        error.isSecondary = secondary
        return error
    }
}
