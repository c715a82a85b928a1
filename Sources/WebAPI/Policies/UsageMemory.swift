import Synchronization

/// The usage an API reported last (`UsageRule`), and whether a client must wait before its
/// next send: shared by the client's pipeline (`UsageStage`) and what shows it to a macro
/// (`instagram.rate_limit`).
public final class UsageMemory: Sendable {
    private struct State {
        var last: Usage?
        /// When a used-up quota was reported (epoch seconds), until it has been waited out.
        var saturatedAt: Double?
    }

    private let state = Mutex(State())

    public init() {}

    /// The usage last reported, or nil before the first answer that carried one.
    public var last: Usage? { state.withLock { $0.last } }

    /// Remembers `usage`, reported at `now` (epoch seconds).
    public func record(_ usage: Usage, now: Double) {
        state.withLock { state in
            state.last = usage
            state.saturatedAt = usage.isSaturated ? now : nil
        }
    }

    /// How long to wait at `now` before the next send: nil when the quota is not used up, or
    /// the API gave no time (the server decides), or the time has passed.
    public func wait(now: Double) -> Double? {
        state.withLock { state in
            guard let since = state.saturatedAt, let regain = state.last?.regainAfter else { return nil }
            let left = regain - max(0, now - since)
            return left > 0 ? min(left, RateLimitPolicy.longestWait) : nil
        }
    }

    /// The wait is over (it was slept): send without waiting again until an answer says otherwise.
    public func waited() {
        state.withLock { $0.saturatedAt = nil }
    }
}
