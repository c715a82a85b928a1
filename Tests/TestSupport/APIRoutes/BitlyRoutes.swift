import Foundation
import Synchronization

/// Bitly's API v4 under `/bitly/v4` (a client's base URL is `<baseURL>/bitly/v4`).
///
/// - `POST shorten` `{"long_url", "domain"?, "group_guid"?}`: the account's link for the URL
///   (200) or a new one (201); `https://google.com/` answers the 2019 recording exactly
/// - `POST bitlinks`: the same with `keyword` (a custom back-half) and `tags`
/// - `POST expand` `{"bitlink_id"}`, `GET user`, `GET groups/{guid}/bitlinks?size=&search_after=`,
///   `GET bitlinks/{domain}/{hash}/clicks/summary`
/// - the limits, counting every request answered (`BitlyPlanState`): `GET user/platform_limits`,
///   `GET groups/{guid}`, `GET organizations/{guid}/plan_limits`
///
/// Every endpoint needs `Authorization: Bearer bitly-test-token`; anything else is the recorded
/// 403 `{"message":"FORBIDDEN"}`. Answers come from `../shared/fixtures/shortener/laracrafts-bitly-*.http`
/// where a recording exists; the others follow the shapes Bitly documents at
/// dev.bitly.com/api-reference (named beside each). The account's default group holds the
/// recorded link and 120 made-up ones (`bit.ly/pg001`…), so listings span pages; each server
/// keeps its own links.
struct BitlyRoutes: RouteHandler {
    static let prefix = "/bitly/v4"
    static let validToken = "bitly-test-token"
    /// The group of the recording (`references.group` of laracrafts-bitly-shorten-200.http).
    static let group = "Bj1tjw4uLSN"
    /// The domains links may be made on.
    static let domains = ["bit.ly", "j.mp"]
    /// How many made-up links the default group holds besides the recorded one.
    static let seededLinks = 120

    let account = BitlyAccount()
    /// The plan's and the platform's limits, which count every request answered here.
    let limits = BitlyPlanState()

    /// The answer, without the server's rate-limit headers: the API sends none.
    func respond(to request: RouteRequest) -> Response? {
        guard var answer = route(request) else { return nil }
        answer.sendsRateLimitHeaders = false
        if request.recorded.header("authorization") == "Bearer \(BitlyRoutes.validToken)" {
            limits.count(
                method: request.recorded.method,
                path: String(request.recorded.path.dropFirst(BitlyRoutes.prefix.count)),
                created: answer.status == 201)
        }
        return answer
    }

    private func route(_ request: RouteRequest) -> Response? {
        let prefix = BitlyRoutes.prefix
        guard request.recorded.path == prefix || request.recorded.path.hasPrefix(prefix + "/") else { return nil }
        guard request.recorded.header("authorization") == "Bearer \(BitlyRoutes.validToken)" else {
            return BitlyRoutes.forbidden
        }
        if request.match("POST", prefix + "/shorten") != nil { return create(request, custom: false) }
        if request.match("POST", prefix + "/bitlinks") != nil { return create(request, custom: true) }
        if request.match("POST", prefix + "/expand") != nil { return expand(request) }
        if request.match("GET", prefix + "/user") != nil { return BitlyRoutes.user }
        if request.match("GET", prefix + "/user/platform_limits") != nil { return limits.platformLimits() }
        if let guid = request.match("GET", prefix + "/groups/{guid}")?["guid"] { return BitlyPlanState.group(guid) }
        if let guid = request.match("GET", prefix + "/organizations/{guid}/plan_limits")?["guid"] {
            return limits.planLimits(organization: guid)
        }
        if let guid = request.match("GET", prefix + "/groups/{guid}/bitlinks")?["guid"] {
            return links(request, group: guid)
        }
        if let captures = request.match("GET", prefix + "/bitlinks/{domain}/{hash}/clicks/summary"),
            let domain = captures["domain"], let hash = captures["hash"]
        {
            guard let link = account.link("\(domain)/\(hash)") else { return BitlyRoutes.notFound }
            // Documented shape of GET /v4/bitlinks/{bitlink}/clicks/summary (no recording).
            return .json(
                .object([
                    ("unit_reference", .string(BitlyAccount.now)), ("total_clicks", .int(link.clicks)),
                    ("units", .int(-1)), ("unit", .string(request.query["unit"] ?? "day")),
                ]))
        }
        return BitlyRoutes.notFound
    }

    /// `POST shorten` (`custom: false`) and `POST bitlinks`.
    private func create(_ request: RouteRequest, custom: Bool) -> Response {
        // INVALID_ARG_LONG_URL is Bitly's documented code for a long URL it refuses; which ones
        // it refuses is not recorded: here, any but an http(s) URL whose host has a dot
        // (`https://intranet/page` is refused).
        guard let body = try? JSON(parsing: request.recorded.body), let longURL = body["long_url"]?.stringValue,
            ShortenerRoutes.isWebURL(longURL), URLComponents(string: longURL)?.host?.contains(".") == true
        else { return BitlyRoutes.invalid("INVALID_ARG_LONG_URL", field: "long_url") }
        let domain = body["domain"]?.stringValue ?? "bit.ly"
        guard BitlyRoutes.domains.contains(domain) else {
            return BitlyRoutes.invalid("INVALID_ARG_DOMAIN", field: "domain")
        }
        if let group = body["group_guid"]?.stringValue, group != BitlyRoutes.group {
            return BitlyRoutes.invalid("INVALID_ARG_GROUP_GUID", field: "group_guid")
        }
        let keyword = custom ? body["keyword"]?.stringValue : nil
        let tags = custom ? (body["tags"]?.arrayValue ?? []).compactMap(\.stringValue) : []
        switch account.shorten(longURL, domain: domain, keyword: keyword, tags: tags) {
        case .taken:
            // Modelled on Bitly's documented error code KEYWORD_UNAVAILABLE ("the custom
            // back-half is already being used by another link"); its status is not recorded.
            return BitlyRoutes.error(
                400, "KEYWORD_UNAVAILABLE", "The custom back-half is already in use.", field: "keyword",
                code: "already_exists")
        case .existing(let link):
            if link.id == BitlyAccount.recorded.id, let recording = try? HTTPRecording(BitlyRoutes.recording200) {
                // laracrafts-bitly-shorten-200.http: the 2019 answer for https://google.com/, as recorded.
                return recording.response
            }
            return .json(link.json, status: 200)
        case .created(let link):
            // The shape of laracrafts-bitly-shorten-200.http; Bitly documents 201 for a new link.
            return .json(link.json, status: 201)
        }
    }

    /// `POST expand`: documented shape `{"created_at", "link", "id", "long_url"}` (no recording).
    private func expand(_ request: RouteRequest) -> Response {
        guard let body = try? JSON(parsing: request.recorded.body), let id = body["bitlink_id"]?.stringValue else {
            return BitlyRoutes.invalid("INVALID_ARG_BITLINK", field: "bitlink_id")
        }
        guard let link = account.link(id) else { return BitlyRoutes.notFound }
        return .json(
            .object([
                ("created_at", .string(link.createdAt)), ("link", .string("https://" + link.id)),
                ("id", .string(link.id)), ("long_url", .string(link.longURL)),
            ]))
    }

    /// `GET groups/{guid}/bitlinks`: documented shape `{"links": [...], "pagination": {"prev",
    /// "next", "size", "page", "total", "search_after"}}`, newest first; `next` is a full URL
    /// (`?search_after=…&size=…`), empty on the last page (dev.bitly.com, "Changes to Retrieve
    /// Bitlinks By Group").
    private func links(_ request: RouteRequest, group: String) -> Response {
        guard group == BitlyRoutes.group else { return BitlyRoutes.forbidden }
        let size = min(100, max(1, request.queryInt("size") ?? 50))
        let all = account.all()
        let start =
            request.query["search_after"].flatMap { token in
                token.hasPrefix("after-") ? Int(token.dropFirst("after-".count)) : nil
            } ?? 0
        guard start >= 0, start <= all.count else {
            return BitlyRoutes.invalid("INVALID_ARG_SEARCH_AFTER", field: "search_after")
        }
        let page = Array(all[start..<min(all.count, start + size)])
        let end = start + page.count
        let token = end < all.count ? "after-\(end)" : ""
        let next =
            token.isEmpty
            ? "" : "\(request.origin)\(BitlyRoutes.prefix)/groups/\(group)/bitlinks?search_after=\(token)&size=\(size)"
        return .json(
            .object([
                ("links", .array(page.map(\.json))),
                (
                    "pagination",
                    .object([
                        ("next", .string(next)), ("size", .int(size)), ("page", .int(start / size + 1)),
                        ("total", .int(all.count)), ("search_after", .string(token)),
                    ])
                ),
            ]))
    }

    /// laracrafts-bitly-shorten-200.http.
    static let recording200 = "shortener/laracrafts-bitly-shorten-200.http"

    /// laracrafts-bitly-shorten-403.http: `{"message":"FORBIDDEN"}`, as recorded for a bad token.
    static var forbidden: Response {
        (try? HTTPRecording("shortener/laracrafts-bitly-shorten-403.http"))?.response
            ?? .message("fixture shortener/laracrafts-bitly-shorten-403.http unavailable", status: 500)
    }

    /// Documented shape of Bitly's 404 (no recording).
    static let notFound = error(404, "NOT_FOUND", "What you are looking for cannot be found.")

    /// Documented shape of GET /v4/user (no recording).
    static let user = Response.json(
        .object([
            ("login", .string("apimacro-test")), ("name", .string("apimacro test")), ("is_active", .bool(true)),
            ("created", .string("2019-06-15T11:55:09+0000")), ("modified", .string("2019-06-15T11:55:09+0000")),
            ("is_sso_user", .bool(false)), ("emails", .array([])), ("is_2fa_enabled", .bool(false)),
            ("default_group_guid", .string(group)),
        ]))

    /// The 400 of a field Bitly refuses, as its documentation and the fixtures README give it:
    /// `{"message": CODE, "resource": "bitlinks", "description": "The value provided is invalid.",
    /// "errors": [{"field", "error_code": "invalid"}]}`.
    static func invalid(_ code: String, field: String) -> Response {
        error(400, code, "The value provided is invalid.", field: field, code: "invalid")
    }

    /// Bitly's error body (documented shape).
    static func error(
        _ status: Int, _ message: String, _ description: String, field: String? = nil, code: String? = nil
    )
        -> Response
    {
        var members: [(String, JSON)] = [
            ("message", .string(message)), ("resource", .string("bitlinks")), ("description", .string(description)),
        ]
        if let field {
            members.append(
                ("errors", .array([.object([("field", .string(field)), ("error_code", .string(code ?? "invalid"))])])))
        }
        return .json(.object(members), status: status)
    }
}

/// One Bitly account's links (per server).
final class BitlyAccount: Sendable {
    /// The timestamp new links get (fixed, so recordings repeat).
    static let now = "2026-01-01T00:00:00+0000"
    /// The link of laracrafts-bitly-shorten-200.http.
    static let recorded = Link(
        id: "bit.ly/2WujBe0", longURL: "https://google.com/", createdAt: "1970-01-01T00:00:00+0000", tags: [],
        clicks: 42)

    /// A bitlink as the server keeps it.
    struct Link: Sendable {
        let id: String
        let longURL: String
        let createdAt: String
        let tags: [String]
        let clicks: Int

        /// The shape of laracrafts-bitly-shorten-200.http (`link` over https, as Bitly serves now).
        var json: JSON {
            .object([
                ("created_at", .string(createdAt)), ("id", .string(id)), ("link", .string("https://" + id)),
                ("custom_bitlinks", .array([])), ("long_url", .string(longURL)), ("archived", .bool(false)),
                ("tags", .array(tags.map(JSON.string))), ("deeplinks", .array([])),
                (
                    "references",
                    .object([("group", .string("https://api-ssl.bitly.com/v4/groups/\(BitlyRoutes.group)"))])
                ),
            ])
        }
    }

    /// What shortening did.
    enum Outcome {
        case existing(Link)
        case created(Link)
        /// The keyword names another URL's link.
        case taken
    }

    /// Newest first.
    private let links: Mutex<[Link]>

    init() {
        let seeded = (1...BitlyRoutes.seededLinks).reversed().map { number in
            let name = String(format: "%03d", number)
            return Link(
                id: "bit.ly/pg\(name)", longURL: "https://example.com/page/\(name)",
                createdAt: "2025-01-01T00:00:00+0000", tags: ["seed"], clicks: number)
        }
        links = Mutex(seeded + [BitlyAccount.recorded])
    }

    /// Every link, newest first.
    func all() -> [Link] { links.withLock { $0 } }

    /// The link called `id` (`bit.ly/abc`).
    func link(_ id: String) -> Link? { links.withLock { $0.first { $0.id == id } } }

    /// The account's link for `longURL` on `domain` (with `keyword`, when given), or a new one.
    func shorten(_ longURL: String, domain: String, keyword: String?, tags: [String]) -> Outcome {
        links.withLock { links in
            if let keyword {
                let id = "\(domain)/\(keyword)"
                if let found = links.first(where: { $0.id == id }) {
                    return found.longURL == longURL ? .existing(found) : .taken
                }
                let link = Link(id: id, longURL: longURL, createdAt: BitlyAccount.now, tags: tags, clicks: 0)
                links.insert(link, at: 0)
                return .created(link)
            }
            if let found = links.first(where: { $0.longURL == longURL && $0.id.hasPrefix(domain + "/") }) {
                return .existing(found)
            }
            var salt: UInt64 = 0
            while true {
                let id = "\(domain)/" + ShortURLStore.code(for: longURL, salt: salt)
                if !links.contains(where: { $0.id == id }) {
                    let link = Link(id: id, longURL: longURL, createdAt: BitlyAccount.now, tags: tags, clicks: 0)
                    links.insert(link, at: 0)
                    return .created(link)
                }
                salt += 1
            }
        }
    }
}
