import Synchronization

/// The rate limit as last seen in response headers, shared by the clients of
/// one API that count against it (GitHub's REST and GraphQL endpoints), so
/// "last seen" means the last response of either.
public final class RateLimitMemory: Sendable {
    private let last = Mutex<RateLimitInfo?>(nil)

    public init() {}

    /// The last rate limit seen, or nil before the first response that carried one.
    public var value: RateLimitInfo? { last.withLock { $0 } }

    /// Remembers `info` as the latest.
    public func record(_ info: RateLimitInfo) { last.withLock { $0 = info } }
}
