/// The Instagram API with Instagram Login (graph.instagram.com) under `/instagram/graph` (a
/// client's base URL is `<baseURL>/instagram/graph`), served from the account of
/// `InstagramGraphWorld`.
///
/// Its routes:
///
/// - `GET {version}/me?fields=…`, `GET {version}/{id}?fields=…` (the account, or a media)
/// - `GET {version}/{id}/media?fields=…&limit=N[&after=C]`: pages of at most 4 media with
///   `paging.cursors` and `paging.next` (an absolute URL carrying the request's `access_token`,
///   as Meta's do)
/// - `GET {version}/{id}/children`, `GET {version}/{id}/insights?metric=…`
/// - `GET access_token?grant_type=ig_exchange_token&client_secret=…&access_token=…` (the
///   long-lived exchange) and `GET refresh_access_token?grant_type=ig_refresh_token&access_token=…`
/// - `POST _usage` (a test's control, form fields `call_count`, `regain`, `throttled`): sets the
///   usage every answer reports (`InstagramGraphState`)
///
/// Tokens: any starting with `ig-token-` (the test credential, as for v1) or `IGAA-` (what the
/// login routes issue); `ig-token-expired` is expired (190, subcode 463), `ig-token-throttled`
/// is over the app's limit (4), `ig-token-noinsights` may not read insights (10); anything
/// else is invalid (190). Every answer carries the usage headers and `Cache-Control:
/// no-store` (the headers Graph answers carry).
struct InstagramGraphRoutes: RouteHandler {
    static let prefix = "/instagram/graph"
    /// The app's secret the long-lived exchange checks.
    static let clientSecret = "test-secret"

    let state = InstagramGraphState()

    func respond(to request: RouteRequest) -> Response? {
        let segments = request.segments
        guard segments.count >= 3, segments[0] == "instagram", segments[1] == "graph" else { return nil }
        let rest = Array(segments.dropFirst(2))
        do {
            switch rest.first {
            case "_usage" where request.method == "POST": return control(request)
            case "access_token" where rest.count == 1: return try exchange(request)
            case "refresh_access_token" where rest.count == 1: return try refresh(request)
            default: break
            }
            guard request.method == "GET" || request.method == "HEAD", rest.count >= 2,
                Self.isVersion(rest[0])
            else {
                return InstagramGraphWorld.error("Unknown path components: /\(rest.joined(separator: "/"))", code: 2500)
            }
            let usage = state.arrived(request.recorded.path)
            let headers = Self.usageHeaders(usage) + Self.noStore
            if let refusal = Self.refusal(request, headers: headers) { return refusal }
            if usage.throttled {
                // Meta's "Rate Limits" page: an Instagram account over its Business Use Case limit.
                return InstagramGraphWorld.error(
                    "There have been too many calls to this Instagram account. Wait a bit and try again.",
                    code: 80002, transient: true, headers: headers)
            }
            var answer = try route(Array(rest.dropFirst()), request: request)
            answer.headers += headers
            return answer
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
    }

    /// `vN.N`.
    static func isVersion(_ segment: String) -> Bool {
        let parts = segment.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        return segment.hasPrefix("v") && parts.count == 2
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    private func route(_ path: [String], request: RouteRequest) throws -> Response {
        let id = path[0] == "me" ? InstagramGraphWorld.accountID : path[0]
        switch path.count {
        case 1: return try object(id, request: request)
        case 2 where path[1] == "media":
            guard id == InstagramGraphWorld.accountID else { return try InstagramGraphWorld.unknownObject() }
            return try list(InstagramGraphWorld.media(), request: request)
        case 2 where path[1] == "children":
            guard let children = try InstagramGraphWorld.children(of: id) else {
                return try InstagramGraphWorld.unknownObject()
            }
            return try list(children, request: request)
        case 2 where path[1] == "insights":
            return try insights(of: id, request: request)
        default:
            return InstagramGraphWorld.error(
                "Unsupported get request. Object with ID '\(id)' does not exist, cannot be loaded due to missing "
                    + "permissions, or does not support this operation.", code: 100, subcode: 33)
        }
    }

    /// The account or a media, with the fields asked for (and `id`); an unknown field is
    /// Meta's documented error 100.
    private func object(_ id: String, request: RouteRequest) throws -> Response {
        let found =
            id == InstagramGraphWorld.accountID
            ? try InstagramGraphWorld.account() : try InstagramGraphWorld.media().first { $0["id"]?.stringValue == id }
        guard let found else { return try InstagramGraphWorld.unknownObject() }
        let fields = (request.query["fields"] ?? "").split(separator: ",").map(String.init)
        if id == InstagramGraphWorld.accountID, let bogus = fields.first(where: { !Self.known($0, in: found) }) {
            return InstagramGraphWorld.error(
                "(#100) Tried accessing nonexisting field (\(bogus)) on node type (User)", code: 100)
        }
        return .json(Self.selecting(fields, from: found))
    }

    /// Whether `field` is one of the account's fields (the recorded ones, and those Meta
    /// documents for an Instagram user).
    private static func known(_ field: String, in account: JSON) -> Bool {
        account[field] != nil || ["website", "ig_id"].contains(field)
    }

    /// `fields` of `object` that it holds, `id` always; every member when none are named.
    static func selecting(_ fields: [String], from object: JSON) -> JSON {
        guard !fields.isEmpty, case .object(let members) = object else { return object }
        let wanted = Set(fields.map { $0.split(separator: "{").first.map(String.init) ?? $0 } + ["id"])
        return .object(members.filter { wanted.contains($0.0) })
    }

    /// A page of `items`: `limit` of them (default 25, at most 4), from the `after` cursor.
    private func list(_ items: [JSON], request: RouteRequest) throws -> Response {
        let fields = (request.query["fields"] ?? "").split(separator: ",").map(String.init)
        let size = max(1, min(request.queryInt("limit") ?? 25, 4))
        var start = 0
        if let after = request.query["after"] {
            guard let offset = Int(after), offset >= 0 else {
                return InstagramGraphWorld.error("(#100) Invalid cursor: \(after)", code: 100)
            }
            start = min(offset, items.count)
        }
        let end = min(items.count, start + size)
        var paging: [(String, JSON)] = [
            ("cursors", .object([("before", .string(String(start))), ("after", .string(String(end)))]))
        ]
        if end < items.count { paging.append(("next", .string(Self.link(request, size: size, after: end)))) }
        if start > 0 {
            paging.append(("previous", .string(Self.link(request, size: size, after: max(0, start - size)))))
        }
        let page = items[start..<end].map { Self.selecting(fields, from: $0) }
        return .json(.object([("data", .array(page)), ("paging", .object(paging))]))
    }

    /// The page link Meta sends: this path on this host, the request's own token, fields and
    /// limit, and the cursor.
    static func link(_ request: RouteRequest, size: Int, after: Int) -> String {
        let path = String(request.recorded.uri.split(separator: "?", maxSplits: 1).first ?? "")
        var query = [("access_token", request.query["access_token"] ?? "")]
        if let fields = request.query["fields"] { query.append(("fields", fields)) }
        query += [("limit", String(size)), ("after", String(after))]
        return request.origin + path + "?"
            + query.map { $0.0 + "=" + URLCoding.percentEncode($0.1) }.joined(separator: "&")
    }

    /// The insights of the account (`me`) or a media; a metric not recorded is Meta's error 100;
    /// `ig-token-noinsights` lacks the permission (10).
    private func insights(of id: String, request: RouteRequest) throws -> Response {
        if request.query["access_token"] == "ig-token-noinsights" {
            return InstagramGraphWorld.error("(#10) Application does not have permission for this action", code: 10)
        }
        let ofAccount = id == InstagramGraphWorld.accountID
        let isMedia = try InstagramGraphWorld.media().contains { $0["id"]?.stringValue == id }
        guard ofAccount || isMedia else {
            return try InstagramGraphWorld.unknownObject()
        }
        let metric = request.query["metric"] ?? ""
        guard let answer = try InstagramGraphWorld.insights(metric: metric, ofAccount: ofAccount) else {
            // The shape of Meta's answer to an unsupported metric (documented, not recorded).
            return InstagramGraphWorld.error(
                "(#100) metric[0] must be one of the following values: \(ofAccount ? "reach, follower_count, views" : "profile_activity, likes, comments, reach")",
                code: 100)
        }
        return .json(answer)
    }

    /// The long-lived exchange: a short-lived `IGAA-short-*` token and the app's secret give a
    /// 60-day token (pyfb-base-long_term_token.json's shape).
    private func exchange(_ request: RouteRequest) throws -> Response {
        let query = request.query
        guard query["grant_type"] == "ig_exchange_token" else {
            return InstagramGraphWorld.error("Unsupported grant_type", code: 100)
        }
        guard query["client_secret"] == Self.clientSecret else {
            return InstagramGraphWorld.error("Error validating client secret.", code: 1, type: "OAuthException")
        }
        guard let token = query["access_token"], token.hasPrefix("IGAA-short-") else {
            return InstagramGraphWorld.error("Invalid OAuth access token - Cannot parse access token", code: 190)
        }
        return try InstagramGraphWorld.longLived("IGAA-long-" + token.dropFirst("IGAA-short-".count))
    }

    /// A refresh: any valid token becomes `IGAA-refreshed-N`, valid 60 days.
    private func refresh(_ request: RouteRequest) throws -> Response {
        guard request.query["grant_type"] == "ig_refresh_token" else {
            return InstagramGraphWorld.error("Unsupported grant_type", code: 100)
        }
        if let refusal = Self.refusal(request, headers: []) { return refusal }
        switch request.query["access_token"] {
        case "ig-token-huge-refresh":
            // Hostile: a "token" of 1.5 MiB, which would fill credentials.json past what is read.
            return try InstagramGraphWorld.longLived("IGAA" + String(repeating: "Huge", count: 3 << 17))
        case "ig-token-escape-refresh":
            // Hostile: a refusal whose message would retitle the terminal and clear the screen.
            return InstagramGraphWorld.error("refresh refused \u{1b}]0;pwned\u{07}\u{1b}[2J here", code: 190)
        default:
            return try InstagramGraphWorld.longLived("IGAA-refreshed-\(state.refreshed())")
        }
    }

    /// `POST _usage` with `call_count`, `regain` (minutes), `throttled` (`1`): the usage from now on.
    private func control(_ request: RouteRequest) -> Response {
        let form = URLCoding.formDictionary(request.recorded.bodyText)
        var usage = InstagramGraphState.Usage.recorded
        usage.callCount = form["call_count"].flatMap { Int($0) } ?? usage.callCount
        usage.totalTime = usage.callCount
        usage.regainMinutes = form["regain"].flatMap { Int($0) } ?? 0
        usage.throttled = form["throttled"] == "1"
        state.usage = usage
        return .json(.object([("ok", .bool(true))]))
    }

    /// Nil when the request's token is valid, else Meta's error for it.
    static func refusal(_ request: RouteRequest, headers: [(String, String)]) -> Response? {
        let token = request.query["access_token"] ?? ""
        switch token {
        case "":
            return InstagramGraphWorld.error(
                "An active access token must be used to query information about the current user.", code: 2500,
                headers: headers)
        case "ig-token-expired":
            return InstagramGraphWorld.error(
                "Error validating access token: Session has expired on Thursday, 01-Jan-26 00:00:00 PST.",
                code: 190, subcode: 463, headers: headers)
        case "ig-token-throttled":
            let over = InstagramGraphState.Usage(
                callCount: 100, totalTime: 40, totalCPUTime: 35, regainMinutes: 5, throttled: true)
            return InstagramGraphWorld.error(
                "(#4) Application request limit reached", code: 4, transient: true,
                headers: usageHeaders(over) + noStore)
        default:
            if (token.hasPrefix("ig-token-") && token.count > 9) || (token.hasPrefix("IGAA-") && token.count > 5) {
                return nil
            }
            return InstagramGraphWorld.error(
                "Invalid OAuth access token - Cannot parse access token", code: 190, headers: headers)
        }
    }

    /// The usage headers, in pyfb-2019-headers.json's shape (the real header carries the JSON as
    /// a string): `X-Business-Use-Case-Usage` for the account, and `X-App-Usage` (Meta's
    /// "Rate Limits" page; not recorded).
    static func usageHeaders(_ usage: InstagramGraphState.Usage) -> [(String, String)] {
        let app = JSON.object([
            ("call_count", .int(usage.callCount)), ("total_cputime", .int(usage.totalCPUTime)),
            ("total_time", .int(usage.totalTime)),
        ])
        let business = JSON.object([
            (
                InstagramGraphWorld.accountID,
                .array([
                    .object([
                        ("type", .string("instagram")), ("call_count", .int(usage.callCount)),
                        ("total_cputime", .int(usage.totalCPUTime)), ("total_time", .int(usage.totalTime)),
                        ("estimated_time_to_regain_access", .int(usage.regainMinutes)),
                    ])
                ])
            )
        ])
        return [
            ("X-App-Usage", String(decoding: app.bytes, as: UTF8.self)),
            ("X-Business-Use-Case-Usage", String(decoding: business.bytes, as: UTF8.self)),
        ]
    }

    /// What Graph answers say of caching.
    static let noStore = [("Cache-Control", "private, no-cache, no-store, must-revalidate")]
}
