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
        var found: [String?] = [nil, nil, nil, nil, nil]
        for field in headers.fields {
            let slot: Int
            switch field.name.utf8.count {
            case 16: slot = 3
            case 17: slot = Headers.sameName(field.name, RateLimitInfo.names[0]) ? 0 : 2
            case 20: slot = 4
            case 21: slot = 1
            default: continue
            }
            if found[slot] == nil, Headers.sameName(field.name, RateLimitInfo.names[slot]) { found[slot] = field.value }
        }
        limit = found[0].flatMap { Int($0) }
        remaining = found[1].flatMap { Int($0) }
        reset = found[2].flatMap { Int($0) }
        used = found[3].flatMap { Int($0) }
        resource = found[4]
        if limit == nil, remaining == nil, reset == nil { return nil }
    }

    /// The fields read, in the order of `init(headers:)`'s slots.
    private static let names = [
        "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-used", "x-ratelimit-resource",
    ]
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
