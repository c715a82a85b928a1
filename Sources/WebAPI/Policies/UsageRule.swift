/// How an API that reports the share of its quota used, rather than what remains, says so:
/// Meta's Graph APIs send `X-App-Usage` and `X-Business-Use-Case-Usage` (percentages, and the
/// minutes until access returns) and name their rate limits by an error code in the body
/// rather than by 429.
///
/// A client with one (`ClientConfiguration.usage`) gets a `UsageStage`: it remembers the
/// usage of every answer, waits (within `APIMACRO_MAX_WAIT`) before sending while the quota is
/// used up, or refuses without sending, and waits out a rate-limit answer before asking again.
public struct UsageRule: Sendable {
    /// The usage an answer's headers report, or nil when they carry none (or nothing readable).
    public let read: @Sendable (Headers) -> Usage?
    /// Whether an answer is a rate limit by the API's own rule (an error code in its body).
    public let isThrottled: @Sendable (Response) -> Bool

    /// A rule reading usage with `read` and rate-limit answers with `isThrottled`.
    public init(
        read: @escaping @Sendable (Headers) -> Usage?, isThrottled: @escaping @Sendable (Response) -> Bool
    ) {
        self.read = read
        self.isThrottled = isThrottled
    }
}

/// The usage one answer reported.
public struct Usage: Sendable, Equatable {
    /// Each figure by its name in the API (`call_count`, `total_time`, `total_cputime`:
    /// percentages; `estimated_time_to_regain_access`: minutes), as a client shows them.
    public var figures: [String: Double]
    /// The highest share of any quota used, in percent: 100 or more is used up.
    public var percent: Double
    /// Seconds until calls are allowed again, when the API says (0: at once).
    public var regainAfter: Double?

    /// A usage of `percent`, allowed again after `regainAfter` seconds.
    public init(figures: [String: Double], percent: Double, regainAfter: Double?) {
        self.figures = figures
        self.percent = percent
        self.regainAfter = regainAfter
    }

    /// Whether a quota is used up.
    public var isSaturated: Bool { percent >= 100 }
}
