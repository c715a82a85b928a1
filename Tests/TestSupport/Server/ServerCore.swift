import Foundation
import Synchronization

/// Everything the listeners share: routes, the request log, fault queues and rate-limit counters.
final class ServerCore: Sendable {
    static let rateLimit = 5000

    let router: Router
    /// `x-ratelimit-reset` of normal responses: server start + 3600 s.
    let resetEpoch: Int
    private let state = Mutex(State())
    /// Connections accepted so far, on both listeners.
    private let accepted = Atomic<Int>(0)
    /// Connections closed so far (by either side), on both listeners.
    private let closed = Atomic<Int>(0)

    private struct State {
        var requests: [RecordedRequest] = []
        var queuedFaults: [String: [Fault]] = [:]
        var randomGenerator: SplitMix64?
        var randomRates: [(Fault, Double)] = []
        var remaining: [String: Int] = [:]
        var endpoints = Endpoints(baseURL: "", otherHostURL: "")
        var listenerURLs: [String: String] = [:]
        var budget: RateBudget?
        /// `GitHub-Authentication-Token-Expiration` values by token (`TestServer.setTokenExpiration`).
        var tokenExpirations: [String: String] = [:]
    }

    /// The router's GitHub App (`TestServer.setGitHubApp`).
    let gitHubApp: GitHubAppRoutes?
    /// The router's GitHub search (`TestServer.setSearchLimit`).
    let gitHubSearch: GitHubSearchRoutes?
    /// The router's Bitly (`TestServer.setBitlyPlan`).
    let bitly: BitlyRoutes?

    init(router: Router) {
        self.router = router
        gitHubApp = router.handlers.lazy.compactMap { $0 as? GitHubAppRoutes }.first
        gitHubSearch = router.handlers.lazy.compactMap { $0 as? GitHubSearchRoutes }.first
        bitly = router.handlers.lazy.compactMap { $0 as? BitlyRoutes }.first
        self.resetEpoch = ServerCore.now() + 3600
    }

    /// Seconds since 1970.
    static func now() -> Int { Int(Date().timeIntervalSince1970) }

    // MARK: addresses

    var endpoints: Endpoints { state.withLock { $0.endpoints } }

    func setListener(_ address: String, url: String) {
        state.withLock { $0.listenerURLs[address] = url }
    }

    func setEndpoints(_ endpoints: Endpoints) {
        state.withLock { $0.endpoints = endpoints }
    }

    /// `http://address:port` of the listener bound to `address`.
    func listenerURL(_ address: String) -> String {
        state.withLock { $0.listenerURLs[address] } ?? "http://\(address)"
    }

    // MARK: connections

    func connectionAccepted() {
        accepted.add(1, ordering: .relaxed)
    }

    var connectionCount: Int { accepted.load(ordering: .relaxed) }

    func connectionClosed() {
        closed.add(1, ordering: .relaxed)
    }

    var closedCount: Int { closed.load(ordering: .relaxed) }

    // MARK: request log

    func record(_ request: RecordedRequest) {
        state.withLock { $0.requests.append(request) }
    }

    var requests: [RecordedRequest] { state.withLock { $0.requests } }

    func clearRequests() {
        state.withLock { $0.requests.removeAll() }
    }

    // MARK: faults

    func inject(_ faults: [Fault], path: String) {
        state.withLock { $0.queuedFaults[path, default: []].append(contentsOf: faults) }
    }

    func setRandomFaults(_ configuration: RandomFaults?) {
        state.withLock { state in
            state.randomGenerator = configuration.map { SplitMix64(seed: $0.seed) }
            state.randomRates = configuration?.rates ?? []
        }
    }

    /// The fault for this request: the next queued one for its path, else a random draw (if on).
    func takeFault(for request: RecordedRequest) -> Fault? {
        let rawPath = String(request.uri.split(separator: "?", maxSplits: 1).first ?? "")
        return state.withLock { state -> Fault? in
            for key in [request.path, rawPath] {
                if var queue = state.queuedFaults[key], !queue.isEmpty {
                    let fault = queue.removeFirst()
                    state.queuedFaults[key] = queue.isEmpty ? nil : queue
                    return fault
                }
            }
            guard var generator = state.randomGenerator else { return nil }
            let draw = generator.nextUnit()
            state.randomGenerator = generator
            var threshold = 0.0
            for (fault, rate) in state.randomRates {
                threshold += max(0, rate)
                if draw < threshold { return fault }
            }
            return nil
        }
    }

    // MARK: tokens

    func setTokenExpiration(_ value: String?, for token: String) {
        state.withLock { $0.tokenExpirations[token] = value }
    }

    /// The token of `request`'s `Authorization: Bearer|token …`, if any.
    static func token(of request: RecordedRequest) -> String? {
        guard let authorization = request.header("authorization") else { return nil }
        for scheme in ["Bearer ", "token "] where authorization.hasPrefix(scheme) {
            return String(authorization.dropFirst(scheme.count))
        }
        return nil
    }

    // MARK: rate limit

    /// The budget mode (`TestServer.setBudget`), nil when off.
    var budget: RateBudget? { state.withLock { $0.budget } }

    func setBudget(_ budget: RateBudget?) {
        state.withLock { $0.budget = budget }
    }

    /// The listener's remaining count after this request (decremented unless `consume` is false).
    func remaining(listener: String, consume: Bool) -> Int {
        state.withLock { state in
            var value = state.remaining[listener] ?? ServerCore.rateLimit
            if consume { value = max(0, value - 1) }
            state.remaining[listener] = value
            return value
        }
    }

    /// Adds the headers every answer carries, and turns a matching conditional GET into a 304.
    func finalize(_ response: Response, for request: RecordedRequest) -> Response {
        var response = response
        var notModified = false
        let isRead = request.method == "GET" || request.method == "HEAD"
        if response.status == 200 && isRead {
            let etag = response.etag ?? ETag.of(response.body)
            response.setHeader("ETag", etag)
            if let condition = request.header("if-none-match"), ETag.matches(ifNoneMatch: condition, etag: etag) {
                notModified = true
                response.status = 304
                response.body = []
                response.removeHeader("Content-Type")
            }
        }
        if let budget = self.budget, !budget.exempt.contains(request.path),
            response.header("x-ratelimit-remaining") == nil
        {
            response = budget.spend(response)
        }
        if response.sendsRateLimitHeaders, response.header("x-ratelimit-remaining") == nil {
            let remaining = remaining(listener: request.listener, consume: !notModified)
            response.headers += [
                ("x-ratelimit-limit", String(ServerCore.rateLimit)),
                ("x-ratelimit-remaining", String(remaining)),
                ("x-ratelimit-reset", String(resetEpoch)),
                ("x-ratelimit-used", String(ServerCore.rateLimit - remaining)),
                ("x-ratelimit-resource", "core"),
            ]
        }
        if response.status != 304 && response.status != 204 {
            response.addDefaultHeader("Content-Type", Response.jsonContentType)
        }
        // GitHub names an expiring token's end in every answer to it.
        if let token = ServerCore.token(of: request),
            let expiration = state.withLock({ $0.tokenExpirations[token] })
        {
            response.addDefaultHeader("GitHub-Authentication-Token-Expiration", expiration)
        }
        return response
    }
}
