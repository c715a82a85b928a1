import Platform

/// Exponential backoff with full jitter for retrying idempotent requests on
/// connection errors, 502, 503 and 504.
///
/// Pure: the random source is passed in.
public struct RetryPolicy: Sendable {
    /// At most this many retries (SPEC: 3).
    public var maxRetries: Int
    /// The first backoff ceiling in seconds; it doubles each retry.
    public var baseDelay: Double
    /// The largest backoff ceiling.
    public var maxDelay: Double

    public init(maxRetries: Int = 3, baseDelay: Double = 0.2, maxDelay: Double = 5) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Statuses worth another try.
    public static let retryableStatuses: Set<Int> = [502, 503, 504]

    /// The longest the waits between attempts can add up to: the sum of every retry's
    /// ceiling (0.2 + 0.4 + 0.8 = 1.4 s for the default 3 retries).
    public var maximumTotalDelay: Double {
        guard maxRetries > 0 else { return 0 }
        return (1...maxRetries).reduce(0) { $0 + min(maxDelay, baseDelay * pow(2, Double($1 - 1))) }
    }

    /// The delay before retry number `attempt` (1-based), or nil when retries are used up.
    ///
    /// `random` returns a value in 0..<1.
    public func delay(attempt: Int, random: () -> Double) -> Double? {
        guard attempt <= maxRetries else { return nil }
        let ceiling = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return ceiling * random()
    }

    /// How a stage waits by default: between attempts, for a rate limit's reset or for a pace.
    ///
    /// `Task.sleep`, cancelled with its task; tests pass a recorder instead.
    public static let taskSleep: @Sendable (Double) async throws -> Void = { seconds in
        try await Task.sleep(for: Seconds.duration(seconds))
    }
}
