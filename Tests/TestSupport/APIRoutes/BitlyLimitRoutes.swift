import Foundation
import Synchronization

/// The account's limits as Bitly's API reports them (dev.bitly.com, "Rate Limits").
///
/// They count every request the Bitly routes answer:
///
/// - `GET /v4/organizations/{organization_guid}/plan_limits`: documented shape (Bitly's API
///   reference, `getPlanLimits`; its OpenAPI `PlanLimits`): `{"organization_guid",
///   "plan_limits": [{"name", "description", "count", "limit"}]}`, the month's counts.
/// - `GET /v4/user/platform_limits`: documented shape (`getPlatformLimits`; OpenAPI
///   `PlatformLimit`, `MethodLimit`): `{"platform_limits": [{"endpoint", "methods": [{"name",
///   "count", "limit"}]}]}`, the hour's counts per endpoint and method.
/// - `GET /v4/groups/{group_guid}`: documented shape of a `Group`, whose `organization_guid`
///   names the organization.
///
/// What is not documented, and assumed here: the API-request limit's name (`api_requests`;
/// `encodes`, the short links, is the name clients read from Bitly's real answers), and how a
/// templated endpoint is named in `platform_limits` (`/v4/groups/{group_guid}/bitlinks`, as the
/// API reference writes its paths). The plan is Bitly's Free plan (1,000 API requests a month,
/// as bitly.com/pages/pricing gives it) unless a test sets it (`TestServer.setBitlyPlan`).
final class BitlyPlanState: Sendable {
    /// The organization of the default group.
    static let organization = "Ob1tjw4uLSN"

    struct Plan: Sendable {
        var apiRequests = (count: 0, limit: 1000)
        var encodes = (count: 0, limit: 1000)
        /// Hourly counts by `METHOD endpoint`.
        var platform: [String: (count: Int, limit: Int)] = Dictionary(
            uniqueKeysWithValues: BitlyPlanState.endpoints.map { ("\($0.0) \($0.1)", (count: 0, limit: 1000)) })
        /// Bodies the lookups answer with instead (hostile tests), raw.
        var planAnswer: String?
        var platformAnswer: String?
    }

    /// The endpoints the routes serve, as `platform_limits` names them.
    static let endpoints: [(String, String)] = [
        ("POST", "/v4/shorten"), ("POST", "/v4/bitlinks"), ("POST", "/v4/expand"), ("GET", "/v4/user"),
        ("GET", "/v4/groups/{group_guid}/bitlinks"), ("GET", "/v4/bitlinks/{bitlink}/clicks/summary"),
        ("GET", "/v4/groups/{group_guid}"), ("GET", "/v4/organizations/{organization_guid}/plan_limits"),
        ("GET", "/v4/user/platform_limits"),
    ]

    private let plan = Mutex(Plan())

    func set(_ change: (inout Plan) -> Void) { plan.withLock { change(&$0) } }

    /// Counts one request answered (`path` under `/v4`): the month's API requests, and the hour's
    /// count of its endpoint and method.
    func count(method: String, path: String, created: Bool) {
        let segments = path.split(separator: "/").map(String.init)
        plan.withLock { plan in
            plan.apiRequests.count += 1
            if created { plan.encodes.count += 1 }
            for (verb, endpoint) in BitlyPlanState.endpoints where verb == method {
                let pattern = endpoint.split(separator: "/").dropFirst().map(String.init)
                if BitlyPlanState.matches(pattern[...], segments[...]) {
                    plan.platform["\(verb) \(endpoint)"]?.count += 1
                    break
                }
            }
        }
    }

    static func matches(_ pattern: ArraySlice<String>, _ segments: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return segments.isEmpty }
        if first.hasPrefix("{") {
            // A bitlink is two segments (bit.ly/abc); a GUID one.
            let widths = first == "{bitlink}" ? [2] : [1]
            return widths.contains { $0 <= segments.count && matches(pattern.dropFirst(), segments.dropFirst($0)) }
        }
        return segments.first == first && matches(pattern.dropFirst(), segments.dropFirst())
    }

    /// `GET organizations/{guid}/plan_limits`.
    func planLimits(organization: String) -> Response {
        guard organization == BitlyPlanState.organization else { return BitlyRoutes.forbidden }
        let plan = plan.withLock { $0 }
        if let raw = plan.planAnswer { return .text(raw, contentType: Response.jsonContentType) }
        return .json(
            .object([
                ("organization_guid", .string(organization)),
                (
                    "plan_limits",
                    .array([
                        .object([
                            ("name", .string("encodes")), ("description", .string("Short links created this month")),
                            ("count", .int(plan.encodes.count)), ("limit", .int(plan.encodes.limit)),
                        ]),
                        .object([
                            ("name", .string("api_requests")), ("description", .string("API requests this month")),
                            ("count", .int(plan.apiRequests.count)), ("limit", .int(plan.apiRequests.limit)),
                        ]),
                    ])
                ),
            ]))
    }

    /// `GET user/platform_limits`.
    func platformLimits() -> Response {
        let plan = plan.withLock { $0 }
        if let raw = plan.platformAnswer { return .text(raw, contentType: Response.jsonContentType) }
        var byEndpoint: [(String, [JSON])] = []
        for (method, endpoint) in BitlyPlanState.endpoints {
            let numbers = plan.platform["\(method) \(endpoint)"] ?? (count: 0, limit: 1000)
            let entry = JSON.object([
                ("name", .string(method)), ("count", .int(numbers.count)), ("limit", .int(numbers.limit)),
            ])
            if let index = byEndpoint.firstIndex(where: { $0.0 == endpoint }) {
                byEndpoint[index].1.append(entry)
            } else {
                byEndpoint.append((endpoint, [entry]))
            }
        }
        return .json(
            .object([
                (
                    "platform_limits",
                    .array(
                        byEndpoint.map { .object([("endpoint", .string($0.0)), ("methods", .array($0.1))]) })
                )
            ]))
    }

    /// `GET groups/{guid}`: documented shape of a `Group`.
    static func group(_ guid: String) -> Response {
        guard guid == BitlyRoutes.group else { return BitlyRoutes.forbidden }
        return .json(
            .object([
                ("created", .string("2019-06-15T11:55:09+0000")), ("modified", .string("2019-06-15T11:55:09+0000")),
                ("bsds", .array([])), ("guid", .string(guid)), ("organization_guid", .string(organization)),
                ("name", .string("apimacro-test")), ("is_active", .bool(true)), ("role", .string("org-admin")),
                (
                    "references",
                    .object([("organization", .string("https://api-ssl.bitly.com/v4/organizations/\(organization)"))])
                ),
            ]))
    }
}

extension TestServer {
    /// Bitly's plan for the account: `count` of `limit` API requests used this month (each
    /// request the Bitly routes answer adds one), the month's short links (`encodes`: each new
    /// link adds one), and the hour's count and limit of `POST /v4/shorten`.
    public func setBitlyPlan(
        apiRequests: (count: Int, limit: Int), encodes: (count: Int, limit: Int) = (0, 1000),
        shorten: (count: Int, limit: Int) = (0, 1000)
    ) {
        core.bitly?.limits.set { plan in
            plan.apiRequests = apiRequests
            plan.encodes = encodes
            plan.platform["POST /v4/shorten"] = shorten
        }
    }

    /// The paths of the lookups a Bitly client makes before its first request: its platform
    /// limits, its account, its default group and its organization's plan limits.
    public var bitlyLimitLookups: Set<String> {
        let prefix = BitlyRoutes.prefix
        return [
            prefix + "/user/platform_limits", prefix + "/user", prefix + "/groups/\(BitlyRoutes.group)",
            prefix + "/organizations/\(BitlyPlanState.organization)/plan_limits",
        ]
    }

    /// The same lookups in the order a client makes them, as `GET path`.
    public var bitlyLimitLookupCalls: [String] {
        let prefix = BitlyRoutes.prefix
        return [
            "GET \(prefix)/user/platform_limits", "GET \(prefix)/user", "GET \(prefix)/groups/\(BitlyRoutes.group)",
            "GET \(prefix)/organizations/\(BitlyPlanState.organization)/plan_limits",
        ]
    }

    /// Raw bodies `plan_limits` and `platform_limits` answer with instead of the documented ones
    /// (nil: the documented one).
    public func setBitlyLimitAnswers(plan: String?, platform: String?) {
        core.bitly?.limits.set { limits in
            limits.planAnswer = plan
            limits.platformAnswer = platform
        }
    }
}
