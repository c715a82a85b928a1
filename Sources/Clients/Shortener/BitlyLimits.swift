import Platform
import Synchronization
public import WebAPI

/// Bitly's limits as its API reports them (dev.bitly.com, "Rate Limits"), read once a run, the
/// first time a request or `shortener.rate_limit` needs them, and the check that refuses a
/// request they leave no room for, before it is sent (`RequestGate`).
///
/// - The plan's monthly limits: `GET /v4/organizations/{organization_guid}/plan_limits`,
///   `{"plan_limits": [{"name", "description", "count", "limit"}]}`; the organization is the
///   one of the group links are made in (`APIMACRO_SHORTENER_GROUP`, else `GET /v4/user`'s
///   `default_group_guid`), which `GET /v4/groups/{group_guid}` names (`organization_guid`).
/// - The platform limits per endpoint and method (per hour): `GET /v4/user/platform_limits`,
///   `{"platform_limits": [{"endpoint", "methods": [{"name", "count", "limit"}]}]}`.
///
/// Bitly documents that each plan limits the API requests of a month, but not the name that
/// limit has in `plan_limits`: one named as `apiRequestNames` lists is taken for it. The
/// counts are Bitly's at the lookup plus one for each request this client sent since (a
/// request is counted when it is let through, so parallel calls cannot all take the last
/// place), and the `plan_limits` lookup itself counts as one. Entries that are not what Bitly documents (a missing name, a count that is not a
/// whole number from 0 to 10^15) are left out; a lookup that fails leaves its limits unknown
/// (`notes` says why) and checks nothing.
public final class BitlyLimits: RequestGate {
    /// One monthly limit of the plan.
    public struct PlanLimit: Sendable, Equatable {
        public let name: String
        public let description: String?
        public var count: Int
        public let limit: Int
    }

    /// One method's hourly limit on one endpoint.
    public struct MethodLimit: Sendable, Equatable {
        public let name: String
        public var count: Int
        public let limit: Int
    }

    /// One endpoint's platform limits (`/v4/shorten`).
    public struct PlatformLimit: Sendable, Equatable {
        public let endpoint: String
        public var methods: [MethodLimit]
    }

    /// What is known: each list nil when its lookup failed (or has not run), and why.
    public struct Snapshot: Sendable, Equatable {
        public var plan: [PlanLimit]?
        public var platform: [PlatformLimit]?
        /// The organization whose plan it is.
        public var organization: String?
        /// Why a lookup left limits unknown, one line each.
        public var notes: [String] = []

        /// The index in `plan` of the limit on API requests a month.
        public var apiRequests: Int? {
            plan?.firstIndex { BitlyLimits.isAPIRequestLimit($0.name) }
        }
    }

    /// The names the monthly API-request limit is recognised by in `plan_limits`.
    ///
    /// They are compared in lower case with `-` and spaces read as `_`. Bitly documents the
    /// limit but not its name: this small set is an assumption (docs/guide/clients.md says so).
    public static let apiRequestNames: Set<String> = [
        "api_requests", "api_calls", "monthly_api_requests", "monthly_api_calls",
    ]

    /// Whether `name` is the monthly API-request limit's.
    public static func isAPIRequestLimit(_ name: String) -> Bool {
        let folded = String(
            name.lowercased().map { $0 == "-" || $0 == " " ? "_" : $0 })
        return apiRequestNames.contains(folded)
    }

    /// The largest count or limit taken as a number (larger ones are no count Bitly sends).
    static let largest = 1_000_000_000_000_000

    /// True while the lookups run: their own requests pass the gate unchecked.
    @TaskLocal static var looking = false

    private enum State {
        case unread
        case reading(Task<Void, Never>)
        case read
    }

    private let state = Mutex(State.unread)
    private let known = Mutex(Snapshot())
    private let lookup = Mutex<(@Sendable (Request) async throws -> Response)?>(nil)
    /// `APIMACRO_SHORTENER_GROUP`, else nil (the account's default group).
    let group: String?
    /// The base URL's path (`/v4`), which the paths of requests are read relative to.
    let basePath: String
    let now: @Sendable () -> Double

    /// The limits of the account behind a client whose base URL is `baseURL`, making links in
    /// `group` (nil: the account's default).
    public convenience init(group: String?, baseURL: String) {
        self.init(group: group, baseURL: baseURL) { Date().timeIntervalSince1970 }
    }

    /// The same, with a clock of its own (tests).
    init(group: String?, baseURL: String, now: @escaping @Sendable () -> Double) {
        self.group = group
        var path = URLComponents(string: baseURL)?.percentEncodedPath ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
        self.now = now
    }

    /// Sets how the lookups are sent: the client's own `send` (which comes to the gate again,
    /// and is let through).
    public func connect(_ send: @escaping @Sendable (Request) async throws -> Response) {
        lookup.withLock { $0 = send }
    }

    /// The limits, read first when they have not been.
    public func snapshot() async -> Snapshot {
        await read()
        return known.withLock { $0 }
    }

    public func admit(_ exchange: Exchange) async throws {
        guard !Self.looking else { return }
        await read()
        let path = relativePath(exchange.url)
        let moment = now()
        try known.withLock { known in
            try Self.reserve(in: &known, method: exchange.method, path: path, url: exchange.url, now: moment)
        }
    }

    /// Counts a request of `method` to `path` (relative to the base URL) against the limits in
    /// `known`, or throws `RateLimited` when one of them is used up.
    static func reserve(in known: inout Snapshot, method: String, path: String, url: String, now: Double) throws {
        if let index = known.apiRequests, let entry = known.plan?[index], entry.count >= entry.limit {
            let reset = firstOfNextMonth(after: now)
            let lookup = "GET /v4/organizations/\(known.organization ?? "…")/plan_limits"
            throw refusal(
                .rateLimited,
                "\(method) \(url) not sent: the Bitly plan's API requests for this month are used up "
                    + "(\(entry.name): \(entry.count) of \(entry.limit), as \(lookup) counted them with this run's "
                    + "requests since); Bitly starts the count again on the first of the month "
                    + "(\(day(reset)) UTC): wait until then or move to a plan with more requests",
                url: url, api: Shortener.name, resetAt: Int(reset),
                details: [
                    .init("limit_name", .string(entry.name)), .init("count", .int(entry.count)),
                    .init("limit", .int(entry.limit)),
                ])
        }
        let slot = platformSlot(in: known.platform ?? [], method: method, path: path)
        if let (endpoint, index) = slot, let entry = known.platform?[endpoint].methods[index],
            entry.count >= entry.limit
        {
            let name = known.platform?[endpoint].endpoint ?? path
            let reset = (now / 3600).rounded(.down) * 3600 + 3600
            throw refusal(
                .rateLimited,
                "\(method) \(url) not sent: Bitly's platform limit for \(entry.name) \(name) is used up "
                    + "(\(entry.count) of \(entry.limit) this hour, as GET /v4/user/platform_limits counted them "
                    + "with this run's requests since); it starts again within the hour",
                url: url, api: Shortener.name, resetAt: Int(reset), retryAfter: max(0, reset - now),
                details: [
                    .init("limit_name", .string("\(entry.name) \(name)")), .init("count", .int(entry.count)),
                    .init("limit", .int(entry.limit)),
                ])
        }
        if let index = known.apiRequests { known.plan?[index].count += 1 }
        if let (endpoint, index) = slot { known.platform?[endpoint].methods[index].count += 1 }
    }

    /// `RateLimited` about a request not sent, its limit's name and numbers as attributes
    /// (`limit_name`, `count`, `limit`).
    static func refusal(
        _ kind: APIError.Kind, _ message: String, url: String, api: String, resetAt: Int, retryAfter: Double? = nil,
        details: [APIError.Detail]
    ) -> APIError {
        var error = APIError(kind, message, url: url, api: api, resetAt: resetAt, retryAfter: retryAfter)
        error.details = details
        return error
    }

    /// The endpoint and method entries of `platform` a request of `method` to `path` counts
    /// against: the endpoint's path (without `/v4`) matches segment by segment, a `{name}`
    /// standing for one segment or more (a bitlink is two: `bit.ly/abc`).
    static func platformSlot(in platform: [PlatformLimit], method: String, path: String) -> (Int, Int)? {
        let segments = path.split(separator: "/").map(String.init)
        for (endpointIndex, entry) in platform.enumerated() {
            var pattern = entry.endpoint.split(separator: "/").map(String.init)
            if pattern.first == "v4" { pattern.removeFirst() }
            guard matches(pattern[...], segments[...]),
                let methodIndex = entry.methods.firstIndex(where: { $0.name.uppercased() == method.uppercased() })
            else { continue }
            return (endpointIndex, methodIndex)
        }
        return nil
    }

    static func matches(_ pattern: ArraySlice<String>, _ segments: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return segments.isEmpty }
        guard first.hasPrefix("{"), first.hasSuffix("}") else {
            guard let segment = segments.first, segment.percentDecoded ?? segment == first else {
                return false
            }
            return matches(pattern.dropFirst(), segments.dropFirst())
        }
        guard !segments.isEmpty else { return false }
        for taken in 1...segments.count where matches(pattern.dropFirst(), segments.dropFirst(taken)) {
            return true
        }
        return false
    }

    /// The path of `url` after the base URL's.
    func relativePath(_ url: String) -> String {
        let path = URLComponents(string: url)?.percentEncodedPath ?? ""
        return path.hasPrefix(basePath) ? String(path.dropFirst(basePath.count)) : path
    }

    /// Reads the limits once; every caller waits for the one reading.
    private func read() async {
        let task: Task<Void, Never>? = state.withLock { state in
            switch state {
            case .read: return nil
            case .reading(let task): return task
            case .unread:
                let task = Task { await self.lookUp() }
                state = .reading(task)
                return task
            }
        }
        await task?.value
    }

    /// The lookups: platform limits first, then the group's organization and its plan limits.
    private func lookUp() async {
        defer { state.withLock { $0 = .read } }
        guard let send = lookup.withLock({ $0 }) else { return }
        await Self.$looking.withValue(true) {
            var notes: [String] = []
            let platform = await Self.fetch(BitlyRouter.platformLimits.request, send, &notes) {
                Self.platformLimits($0)
            }
            var organization: String?
            var groupGUID = group
            if groupGUID == nil {
                groupGUID = await Self.fetch(BitlyRouter.user.request, send, &notes) {
                    Self.guid(($0 as? [String: Any])?["default_group_guid"])
                }
            }
            if let groupGUID {
                organization = await Self.fetch(BitlyRouter.group(groupGUID).request, send, &notes) {
                    Self.guid(($0 as? [String: Any])?["organization_guid"])
                }
            }
            var plan: [PlanLimit]?
            if let organization {
                plan = await Self.fetch(BitlyRouter.planLimits(organization: organization).request, send, &notes) {
                    Self.planLimits($0)
                }
                // The lookup itself may count too: counted, to stay on the safe side.
                if let index = plan?.firstIndex(where: { Self.isAPIRequestLimit($0.name) }) { plan?[index].count += 1 }
            }
            known.withLock { known in
                known = Snapshot(plan: plan, platform: platform, organization: organization, notes: notes)
            }
        }
    }

    /// `request`'s answer read by `parse`; nil (and a note why) when it failed or was not the
    /// documented shape.
    private static func fetch<Value>(
        _ request: Request, _ send: @Sendable (Request) async throws -> Response, _ notes: inout [String],
        _ parse: (Any?) -> Value?
    ) async -> Value? {
        var request = request
        request.validatesStatus = false
        request.cache = .off
        let name = "\(request.method) /v4\(request.target)"
        do {
            let response = try await send(request)
            guard (200..<300).contains(response.status) else {
                notes.append("\(name) answered \(response.status)")
                return nil
            }
            guard let value = parse(JSONValue.native(in: response.body, path: [])) else {
                notes.append("\(name) did not answer in the shape Bitly documents")
                return nil
            }
            return value
        } catch let error as APIError {
            notes.append("\(name) failed: \(error.message)")
            return nil
        } catch {
            notes.append("\(name) failed")
            return nil
        }
    }

    /// `{"plan_limits": [...]}`'s entries that have a name and whole counts.
    static func planLimits(_ root: Any?) -> [PlanLimit]? {
        guard let list = (root as? [String: Any])?["plan_limits"] as? [Any] else { return nil }
        return list.compactMap { item in
            guard let entry = item as? [String: Any], let name = text(entry["name"]),
                let used = count(entry["count"]), let limit = count(entry["limit"])
            else { return nil }
            return PlanLimit(name: name, description: text(entry["description"]), count: used, limit: limit)
        }
    }

    /// `{"platform_limits": [...]}`'s endpoints, each with the methods that have a name and
    /// whole counts.
    static func platformLimits(_ root: Any?) -> [PlatformLimit]? {
        guard let list = (root as? [String: Any])?["platform_limits"] as? [Any] else { return nil }
        return list.compactMap { item in
            guard let entry = item as? [String: Any], let endpoint = text(entry["endpoint"]),
                let methods = entry["methods"] as? [Any]
            else { return nil }
            return PlatformLimit(
                endpoint: endpoint,
                methods: methods.compactMap { item in
                    guard let method = item as? [String: Any], let name = text(method["name"]),
                        let used = count(method["count"]), let limit = count(method["limit"])
                    else { return nil }
                    return MethodLimit(name: name, count: used, limit: limit)
                })
        }
    }

    /// A JSON number that is a whole number from 0 to `largest` (not `true` or `false`).
    static func count(_ value: Any?) -> Int? {
        guard let double = JSONValue.number(value) else { return nil }
        guard double.isFinite, double >= 0, double <= Double(largest), double.rounded() == double else { return nil }
        return Int(double)
    }

    /// A non-empty string of at most 200 printable characters (what an error message may name).
    static func text(_ value: Any?) -> String? {
        guard let string = value as? String, !string.isEmpty, string.count <= 200,
            string.unicodeScalars.allSatisfy({
                $0.value >= 0x20 && $0.value != 0x7F && !(0x80..<0xA0).contains($0.value)
            })
        else { return nil }
        return string
    }

    /// A group's or organization's GUID: letters, digits, `-` and `_`, as Bitly's are.
    static func guid(_ value: Any?) -> String? {
        guard let string = value as? String, !string.isEmpty, string.count <= 100,
            string.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { return nil }
        return string
    }

    /// When the month's plan limits start again: midnight UTC on the first of next month
    /// (epoch seconds).
    public static func monthlyReset() -> Int { Int(firstOfNextMonth(after: Date().timeIntervalSince1970)) }

    /// Midnight UTC on the first of the month after `time` (epoch seconds).
    static func firstOfNextMonth(after time: Double) -> Double {
        let date = UTCDates.month(of: time)
        let (year, month) = date.month == 12 ? (date.year + 1, 1) : (date.year, date.month + 1)
        return Double(UTCDates.epoch(year: year, month: month, day: 1))
    }

    /// `2026-12-01` (UTC).
    static func day(_ time: Double) -> String {
        UTCDates.day(time)
    }
}
