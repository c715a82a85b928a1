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

    /// The pace as milliseconds between sends (0: none).
    var paceMilliseconds: Int {
        guard let maxRate, maxRate > 0 else { return 0 }
        return max(1, Seconds.milliseconds(1 / maxRate))
    }
}
