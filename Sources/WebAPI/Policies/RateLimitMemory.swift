import Synchronization

/// The rate limit as last seen in response headers, shared by the clients of
/// one API that count against it (GitHub's REST and GraphQL endpoints), so
/// "last seen" means the last response of either; and, for each resource an API names
/// (`x-ratelimit-resource`: GitHub's `core`, `search`, `graphql`), what is left of it and which
/// routes (first path segments) count against it, so a request to a spent resource waits for
/// its reset before it is sent (`RateLimitStage`).
public final class RateLimitMemory: Sendable {
    private let last = Mutex<RateLimitInfo?>(nil)
    private let buckets = Mutex(Buckets())

    private struct Buckets {
        var routes: [String: String] = [:]
        var left: [String: (remaining: Int, reset: Int)] = [:]
        /// How many resources of `left` are spent (remaining ≤ 0): while none is, no request waits,
        /// and `spent` has no route to work out.
        var spentCount = 0
        /// The last URL's route (`ResourceRoute.segment`): a loop of calls to one URL works it out once.
        var lastURL = ""
        var lastRoute = ""
        /// The last update (route, resource, remaining, reset): the same one again changes nothing.
        var lastUpdate: (route: String, resource: String, remaining: Int, reset: Int)?

        mutating func route(of url: String) -> String {
            if url != lastURL {
                lastRoute = ResourceRoute.segment(of: url)
                lastURL = url
            }
            return lastRoute
        }
    }

    public init() {}

    /// The last rate limit seen, or nil before the first response that carried one.
    public var value: RateLimitInfo? { last.withLock { $0 } }

    /// Remembers `info` as the latest.
    public func record(_ info: RateLimitInfo) { last.withLock { $0 = info } }

    /// Remembers `info` as the latest, and what it says of its resource for requests like the
    /// one to `url` (only when it names its resource and both remaining and reset).
    public func record(_ info: RateLimitInfo, url: String) {
        record(info)
        guard let resource = info.resource, !resource.isEmpty, let remaining = info.remaining, let reset = info.reset
        else { return }
        buckets.withLock { buckets in
            let route = buckets.route(of: url)
            if let last = buckets.lastUpdate, last.route == route, last.resource == resource,
                last.remaining == remaining, last.reset == reset
            {
                return
            }
            buckets.lastUpdate = (route, resource, remaining, reset)
            // A bounded map: a server naming a new resource per answer cannot grow it without end.
            if buckets.routes.count < 256 || buckets.routes[route] != nil { buckets.routes[route] = resource }
            let old = buckets.left[resource]
            if buckets.left.count < 64 || old != nil {
                buckets.left[resource] = (remaining, reset)
                if let old, old.remaining <= 0 { buckets.spentCount -= 1 }
                if remaining <= 0 { buckets.spentCount += 1 }
            }
        }
    }

    /// The resource of requests like the one to `url` when its last answer said it is spent
    /// until a reset after `now` (epoch seconds): its name and the reset; nil otherwise.
    ///
    /// A reset more than a day away is not believed (an epoch in milliseconds, a hostile
    /// header), as the shared governor does not: it would hold every request until then.
    public func spent(before url: String, now: Double) -> (resource: String, reset: Int)? {
        buckets.withLock { buckets in
            guard buckets.spentCount > 0, let resource = buckets.routes[buckets.route(of: url)],
                let left = buckets.left[resource], left.remaining <= 0,
                Double(left.reset) > now, Double(left.reset) <= now + 86_400
            else { return nil }
            return (resource, left.reset)
        }
    }
}
