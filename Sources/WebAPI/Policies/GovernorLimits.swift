/// The shared limiter's settings: `APIMACRO_MAX_RATE` and `APIMACRO_MAX_CONCURRENCY`.
public struct GovernorLimits: Sendable, Equatable {
    /// Requests per second per host and credential, across all processes; nil for no pace.
    public var maxRate: Double?
    /// Requests in flight per host and credential, across all processes; nil for no cap.
    public var maxConcurrency: Int?

    public init(maxRate: Double? = nil, maxConcurrency: Int? = nil) {
        self.maxRate = maxRate
        self.maxConcurrency = maxConcurrency
    }

    /// The pace as microseconds between sends (0: none): whole milliseconds would make a rate
    /// above 1,000 a second 1,000, and 600 a second 500.
    var paceMicroseconds: Int {
        guard let maxRate, maxRate > 0 else { return 0 }
        return max(1, Seconds.microseconds(1 / maxRate))
    }
}
