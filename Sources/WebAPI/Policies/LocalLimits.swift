/// Limits a client keeps in this process, with no shared state: sends a second and requests in
/// flight, each with where it was set (for `-v` and messages).
public struct LocalLimits: Sendable, Equatable {
    /// Sends a second, start to start; nil for no pace.
    public var rate: Double?
    /// Requests in flight at once; nil for no cap.
    public var concurrency: Int?
    /// Where `rate` was set ("plugin.toml [limits] rate").
    public var rateSource: String
    /// Where `concurrency` was set.
    public var concurrencySource: String

    public init(rate: Double?, concurrency: Int?, rateSource: String, concurrencySource: String) {
        self.rate = rate
        self.concurrency = concurrency
        self.rateSource = rateSource
        self.concurrencySource = concurrencySource
    }

    /// Whether it limits anything.
    public var isEmpty: Bool { rate == nil && concurrency == nil }

    /// These limits, with what they leave unset taken from `fallback`.
    public func filling(from fallback: LocalLimits?) -> LocalLimits {
        guard let fallback else { return self }
        return LocalLimits(
            rate: rate ?? fallback.rate, concurrency: concurrency ?? fallback.concurrency,
            rateSource: rate == nil ? fallback.rateSource : rateSource,
            concurrencySource: concurrency == nil ? fallback.concurrencySource : concurrencySource)
    }
}
