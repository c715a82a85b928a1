import Platform

/// The rate-limit state an API reported in its last response headers
/// (`x-ratelimit-limit`, `-remaining`, `-reset`, `-used`, `-resource`).
public struct RateLimitInfo: Sendable, Equatable {
    public var limit: Int?
    public var remaining: Int?
    /// Epoch seconds when the window resets.
    public var reset: Int?
    public var used: Int?
    public var resource: String?

    /// Reads the headers; nil when the response carries none.
    public init?(headers: Headers) {
        // One pass over the fields (five lookups walked them five times): a name's length picks
        // the one field it may be (two share 17 bytes), compared once; the first of each counts.
        // Five locals, not an array (no allocation per answer).
        var (limit, remaining, reset, used, resource): (String?, String?, String?, String?, String?)
        for field in headers.fields {
            switch field.name.utf8.count {
            case 16:
                if used == nil, Headers.sameName(field.name, "x-ratelimit-used") { used = field.value }
            case 17:
                if limit == nil, Headers.sameName(field.name, "x-ratelimit-limit") {
                    limit = field.value
                } else if reset == nil, Headers.sameName(field.name, "x-ratelimit-reset") {
                    reset = field.value
                }
            case 20:
                if resource == nil, Headers.sameName(field.name, "x-ratelimit-resource") { resource = field.value }
            case 21:
                if remaining == nil, Headers.sameName(field.name, "x-ratelimit-remaining") { remaining = field.value }
            default: continue
            }
        }
        self.limit = limit.flatMap { Int($0) }
        self.remaining = remaining.flatMap { Int($0) }
        self.reset = reset.flatMap { Int($0) }
        self.used = used.flatMap { Int($0) }
        self.resource = resource
        if self.limit == nil, self.remaining == nil, self.reset == nil { return nil }
    }
}

/// Decides what to do with a rate-limited response: wait and try again, or
/// give up with `RateLimited`.
///
/// Pure: no I/O, the clock is passed in.
public struct RateLimitPolicy: Sendable {
    /// The longest wait accepted (`APIMACRO_MAX_WAIT`, default 60 s).
    public var maxWait: Double
    /// The API's secondary limits, whose answers are rate limits too (GitHub's 403 or 429
    /// "You have exceeded a secondary rate limit"); nil when the client declares none.
    public var secondary: SecondaryLimits?

    public init(maxWait: Double, secondary: SecondaryLimits? = nil) {
        self.maxWait = maxWait
        self.secondary = secondary
    }

    /// Whether `response` says one of the API's secondary limits was exceeded: the API
    /// refused the request without acting on it, so even a write may be sent again.
    public func isSecondary(_ response: Response) -> Bool {
        secondary?.recognizes(response) ?? false
    }

    /// What a response means for the request that got it.
    public enum Decision: Sendable, Equatable {
        /// Not a rate limit.
        case proceed
        /// Wait this many seconds, then send again.
        case wait(Double)
        /// Too long to wait (or not retryable): raise with these facts (`secondary`: one of
        /// the API's secondary limits).
        case fail(retryAfter: Double?, resetAt: Int?, secondary: Bool = false)
    }

    /// Whether `response` is a rate limit: 429, or 403 with
    /// `x-ratelimit-remaining: 0` or `retry-after`.
    public static func isRateLimit(_ response: Response) -> Bool {
        if response.status == 429 { return true }
        guard response.status == 403 else { return false }
        return response.headers["x-ratelimit-remaining"] == "0" || response.headers["retry-after"] != nil
    }

    /// The decision for `response` at time `now` (epoch seconds).
    ///
    /// A secondary limit (`secondary`) without `Retry-After` waits the API's advice
    /// (`SecondaryLimits.defaultWait`: GitHub's minute) unless its headers say the primary
    /// budget is spent too.
    public func decide(_ response: Response, now: Double, canRetry: Bool) -> Decision {
        let isSecondary = isSecondary(response)
        guard isSecondary || RateLimitPolicy.isRateLimit(response) else { return .proceed }
        let resetAt = response.headers["x-ratelimit-reset"].flatMap { Int($0) }
        var wait: Double?
        if let retryAfter = response.headers["retry-after"].flatMap({
            RateLimitPolicy.seconds(retryAfter: $0, now: now)
        }) {
            wait = retryAfter
        } else if let secondary, isSecondary, response.headers["x-ratelimit-remaining"] != "0" {
            wait = secondary.defaultWait
        } else if let resetAt {
            wait = RateLimitPolicy.wait(untilReset: Double(resetAt), now: now)
        }
        guard canRetry, let seconds = wait, seconds <= maxWait else {
            return .fail(retryAfter: wait, resetAt: resetAt, secondary: isSecondary)
        }
        return .wait(seconds)
    }

    /// How long to wait, at `now`, for a window that resets at `reset` (both epoch seconds):
    /// the rule of the local rate-limit stage and of the governor shared through Redis.
    ///
    /// The reset is in whole seconds; one more second avoids arriving just before it. At most
    /// 366 days: a reset centuries away (a hostile header, or a reply naming one) must not trap
    /// where the wait becomes a whole number of seconds.
    public static func wait(untilReset reset: Double, now: Double) -> Double {
        min(max(0, reset - now) + 1, longestWait)
    }

    /// The longest wait a server's headers can ask for, 366 days: longer ones (`1e300`, an
    /// epoch in milliseconds) are that, so every wait is a whole number of seconds that fits an `Int`.
    public static let longestWait: Double = 86_400 * 366

    /// `Retry-After` as seconds: a number, or an HTTP date (`HTTPDate`: RFC 9110's three forms,
    /// strictly); at most `longestWait` (a hostile `1e300` or `inf` would trap where the wait
    /// becomes whole seconds).
    static func seconds(retryAfter value: String, now: Double) -> Double? {
        let trimmed = value.trimmingWhitespace()
        if let seconds = Double(trimmed), seconds >= 0 {
            return min(seconds, longestWait)
        }
        guard let date = HTTPDate.parse(trimmed, now: now) else { return nil }
        return min(max(0, date - now), longestWait)
    }
}
