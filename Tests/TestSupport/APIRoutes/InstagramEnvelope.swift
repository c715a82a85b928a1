import Synchronization

/// Instagram v1's answer shape: `{"meta": {"code": 200}, "data": …, "pagination": {…}}`, its
/// `meta`-only error bodies, and the `access_token` check every v1 endpoint makes.
enum InstagramEnvelope {
    /// The token the OAuth routes hand out; it belongs to user "20" (shayne).
    static let issuedToken = "ig-token-1"
    /// Any token with this prefix (and something after it) is valid, for user "20" as well.
    static let validTokenPrefix = "ig-token-"
    /// The token that always gets a 429 `OAuthRateLimitException`.
    static let rateLimitedToken = "ig-ratelimited"

    /// A 200 envelope; `pagination` is added when given (lists), left out for single objects.
    static func success(_ data: JSON, pagination: JSON? = nil) -> Response {
        var members: [(String, JSON)] = [("meta", .object([("code", .int(200))])), ("data", data)]
        if let pagination { members.append(("pagination", pagination)) }
        return .json(.object(members))
    }

    /// v1's error body `{"meta": {"error_type": …, "code": …, "error_message": …}}`, with the
    /// HTTP status equal to `code`.
    static func error(_ type: String, code: Int, message: String, headers: [(String, String)] = []) -> Response {
        .json(
            .object([
                (
                    "meta",
                    .object([
                        ("error_type", .string(type)), ("code", .int(code)), ("error_message", .string(message)),
                    ])
                )
            ]), status: code, headers: headers)
    }

    /// The 400 of a missing or unknown `access_token`.
    static let invalidToken = error(
        "OAuthAccessTokenException", code: 400, message: "The access_token provided is invalid.")

    /// The 429 of an exhausted hourly quota, with v1's rate-limit headers.
    static let rateLimited = error(
        "OAuthRateLimitException", code: 429, message: "The maximum number of requests per hour has been exceeded.",
        headers: [("X-Ratelimit-Limit", "5000"), ("X-Ratelimit-Remaining", "0")])

    /// The 400 v1 gives for an id that names no user.
    static let unknownUser = error("APINotFoundError", code: 400, message: "this user does not exist")

    /// The 400 v1 gives for an id that names no media.
    static let unknownMedia = error("APINotFoundError", code: 400, message: "invalid media id")

    /// A 400 for a malformed paging parameter.
    static func invalidParameter(_ name: String) -> Response {
        error("APIInvalidParametersError", code: 400, message: "invalid \(name)")
    }

    /// Nil when the request's `access_token` is valid, else the error answer.
    static func refusal(for request: RouteRequest) -> Response? {
        let token = request.query["access_token"] ?? ""
        if token == rateLimitedToken { return rateLimited }
        if token.hasPrefix(validTokenPrefix) && token.count > validTokenPrefix.count { return nil }
        return invalidToken
    }

    /// The absolute URL of the next page: the request's own host and path with `access_token`,
    /// `count` and the page parameter (`cursor` or `max_id`).
    ///
    /// The recordings' own next links point at dead 2011 hosts, so they are never served.
    static func nextURL(for request: RouteRequest, count: Int, parameter: String, value: String) -> String {
        let rawPath = String(request.recorded.uri.split(separator: "?", maxSplits: 1).first ?? "")
        let token = URLCoding.percentEncode(request.query["access_token"] ?? "")
        return request.origin + rawPath + "?access_token=" + token + "&count=\(count)&" + parameter + "="
            + URLCoding.percentEncode(value)
    }

    /// The `count` parameter: default 20, at most 100 (a value below 1 means the default).
    static func pageSize(_ request: RouteRequest) -> Int {
        let requested = request.queryInt("count") ?? 20
        return requested < 1 ? 20 : min(requested, 100)
    }
}

/// The Instagram recordings (`../shared/fixtures/instagram/…`, and for the Graph routes
/// `instagram-graph/…`), parsed once per process.
enum InstagramFixtures {
    private static let cache = Mutex<[String: JSON]>([:])

    /// The whole document of `instagram/<name>`.
    static func document(_ name: String) throws -> JSON {
        try document(at: "instagram/" + name)
    }

    /// The whole document of `../shared/fixtures/<path>`, parsed once per process.
    static func document(at path: String) throws -> JSON {
        if let cached = cache.withLock({ $0[path] }) { return cached }
        let document = try JSON(parsing: try TestServer.fixture(path))
        cache.withLock { $0[path] = document }
        return document
    }

    /// The `data` member of `instagram/<name>`.
    static func data(_ name: String) throws -> JSON {
        guard let data = try document(name)["data"] else {
            throw FixtureError(path: "instagram/" + name, reason: "has no data member")
        }
        return data
    }

    /// The `data` array of `instagram/<name>`.
    static func list(_ name: String) throws -> [JSON] {
        guard let items = try data(name).arrayValue else {
            throw FixtureError(path: "instagram/" + name, reason: "has no data array")
        }
        return items
    }

    /// v1's filter names, one of which each served media object gets.
    static let filters = [
        "Normal", "Valencia", "Amaro", "Rise", "Hudson", "X-Pro II", "Lo-fi", "Earlybird", "Nashville", "Toaster",
        "Inkwell",
    ]

    /// The text of an `id` member, whether recorded as a number (2011) or a string (later v1).
    static func idText(_ value: JSON?) -> String? {
        switch value {
        case .number(let literal): return literal
        case .string(let text): return text
        default: return nil
        }
    }

    /// The filter of the media `id`: a deterministic pick from ``filters``.
    static func filter(forMediaID id: String) -> String {
        let number = UInt64(id) ?? id.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) }
        return filters[Int(number % UInt64(filters.count))]
    }

    /// A recorded media object as served.
    ///
    /// The 2011 recordings have no `filter` key while v1 media did, so this one key is added to
    /// the recorded object (chosen by its id); `link` is added only if missing. Every other key
    /// stays as recorded.
    static func served(media: JSON) -> JSON {
        let id = idText(media["id"]) ?? ""
        var result = media
        if result["filter"] == nil { result = result.setting("filter", .string(filter(forMediaID: id))) }
        if result["link"] == nil { result = result.setting("link", .string("https://instagram.com/p/\(id)/")) }
        return result
    }
}
