import Foundation
import Synchronization

/// A Shlink server's REST API v3 under `/shlink/rest/v3` (a client's base URL is
/// `<baseURL>/shlink/rest/v3`).
///
/// - `POST short-urls` `{"longUrl", "customSlug"?, "tags"?, "domain"?, "findIfExists"?}`
/// - `GET short-urls/{shortCode}[?domain=]`, `GET short-urls?page=&itemsPerPage=`
///
/// Every endpoint needs `X-Api-Key: shlink-test-key`. There are no recordings of a live Shlink:
/// the answers are the shapes and examples Shlink's authors wrote in its OpenAPI description
/// (`../shared/fixtures/shortener/shlink-*.json`, named beside each). The server's default
/// domain is `s.test`, as in those examples; it starts with their three short URLs and 57
/// made-up ones (`s.test/pg001`…), so listings span pages; each server keeps its own.
struct ShlinkRoutes: RouteHandler {
    static let prefix = "/shlink/rest/v3"
    static let validKey = "shlink-test-key"
    static let defaultDomain = "s.test"
    static let seededLinks = 57

    let server = ShlinkServer()

    /// The answer, without the server's rate-limit headers: the API sends none.
    func respond(to request: RouteRequest) -> Response? {
        guard var answer = route(request) else { return nil }
        answer.sendsRateLimitHeaders = false
        return answer
    }

    private func route(_ request: RouteRequest) -> Response? {
        let prefix = ShlinkRoutes.prefix
        guard request.recorded.path == prefix || request.recorded.path.hasPrefix(prefix + "/") else { return nil }
        guard let key = request.recorded.header("x-api-key") else {
            // The problem Shlink sends without a key (type from Shlink's ErrorType list; modelled text).
            return ShlinkRoutes.problem(
                401, "missing-authentication", "Invalid authorization",
                "Expected one of the following authentication headers, [\"X-Api-Key\"], but none were provided")
        }
        guard key == ShlinkRoutes.validKey else {
            return ShlinkRoutes.problem(
                401, "invalid-api-key", "Invalid API key", "Provided API key does not exist or is invalid.")
        }
        do {
            if request.match("POST", prefix + "/short-urls") != nil { return try create(request) }
            if request.match("GET", prefix + "/short-urls") != nil { return try list(request) }
            if let code = request.match("GET", prefix + "/short-urls/{shortCode}")?["shortCode"] {
                let domain = request.query["domain"].flatMap { $0 == ShlinkRoutes.defaultDomain ? nil : $0 }
                guard let found = try server.shortURL(code: code, domain: domain) else {
                    // shlink-short-url-not-found-v3.json, with the code asked for.
                    var members: [(String, JSON)] = [
                        ("detail", .string("No URL found with short code \"\(code)\"")),
                        ("title", .string("Short URL not found")),
                        ("type", .string("https://shlink.io/api/error/short-url-not-found")), ("status", .int(404)),
                        ("shortCode", .string(code)),
                    ]
                    if let domain { members.append(("domain", .string(domain))) }
                    return ShlinkRoutes.problem(.object(members), status: 404)
                }
                return .json(found)
            }
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
        return ShlinkRoutes.problem(404, "not-found", "Not found", "Requested route does not exist.")
    }

    /// `POST short-urls`: the example of shlink-v1_short-urls.json's 200 for a new short URL
    /// (`visitsSummary` all 0); with `findIfExists`, the one with the same long URL (and slug, tags).
    private func create(_ request: RouteRequest) throws -> Response {
        guard let body = try? JSON(parsing: request.recorded.body), let longURL = body["longUrl"]?.stringValue,
            ShortenerRoutes.isWebURL(longURL)
        else { return ShlinkRoutes.invalidData("longUrl") }
        let slug = body["customSlug"]?.stringValue
        let domain = body["domain"]?.stringValue.flatMap { $0 == ShlinkRoutes.defaultDomain ? nil : $0 }
        // `domain` is among the elements the create endpoint documents as refusable
        // (shlink-v1_short-urls.json).
        if let domain, !ShlinkRoutes.isHost(domain) { return ShlinkRoutes.invalidData("domain") }
        let tags = (body["tags"]?.arrayValue ?? []).compactMap(\.stringValue)
        let findIfExists = body["findIfExists"] == .bool(true)
        switch try server.create(longURL, slug: slug, domain: domain, tags: tags, findIfExists: findIfExists) {
        case .taken(let slug):
            // The "Non-unique slug" example of shlink-v1_short-urls.json, with the slug asked for.
            return ShlinkRoutes.problem(
                .object([
                    ("title", .string("Invalid custom slug")),
                    ("type", .string("https://shlink.io/api/error/non-unique-slug")),
                    ("detail", .string("Provided slug \"\(slug)\" is already in use.")), ("status", .int(400)),
                    ("customSlug", .string(slug)),
                ]), status: 400)
        case .found(let shortURL):
            return .json(shortURL)
        }
    }

    /// `GET short-urls`: shlink-v1_short-urls.json's list shape `{"shortUrls": {"data": [...],
    /// "pagination": {"currentPage", "pagesCount", "itemsPerPage", "itemsInCurrentPage", "totalItems"}}}`,
    /// newest first.
    private func list(_ request: RouteRequest) throws -> Response {
        let all = try server.all()
        let perPage = min(100, max(1, request.queryInt("itemsPerPage") ?? 10))
        let page = max(1, request.queryInt("page") ?? 1)
        let pages = max(1, (all.count + perPage - 1) / perPage)
        let start = min(all.count, (page - 1) * perPage)
        let items = Array(all[start..<min(all.count, start + perPage)])
        return .json(
            .object([
                (
                    "shortUrls",
                    .object([
                        ("data", .array(items)),
                        (
                            "pagination",
                            .object([
                                ("currentPage", .int(page)), ("pagesCount", .int(pages)),
                                ("itemsPerPage", .int(perPage)),
                                ("itemsInCurrentPage", .int(items.count)), ("totalItems", .int(all.count)),
                            ])
                        ),
                    ])
                )
            ]))
    }

    /// shlink-short-url-invalid-args-v3.json's shape, naming `element` as the field at fault.
    static func invalidData(_ element: String) -> Response {
        problem(
            .object([
                ("title", .string("Invalid data")), ("type", .string("https://shlink.io/api/error/invalid-data")),
                ("detail", .string("Provided data is not valid")), ("status", .int(400)),
                ("invalidElements", .array([.string(element)])),
            ]), status: 400)
    }

    /// Whether `text` is a host name (letters, digits, `-` and `.`; a port allowed).
    static func isHost(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.:".contains($0)) }
    }

    /// A problem+json answer (shlink-Error.json: `type`, `title`, `detail`, `status`).
    static func problem(_ status: Int, _ type: String, _ title: String, _ detail: String) -> Response {
        problem(
            .object([
                ("type", .string("https://shlink.io/api/error/\(type)")), ("title", .string(title)),
                ("detail", .string(detail)), ("status", .int(status)),
            ]), status: status)
    }

    static func problem(_ body: JSON, status: Int) -> Response {
        Response(status: status, headers: [("Content-Type", "application/problem+json")], body: body.bytes)
    }
}

/// One Shlink server's short URLs, kept as the JSON objects it answers with.
final class ShlinkServer: Sendable {
    /// What creating did.
    enum Outcome {
        case found(JSON)
        case taken(String)
    }

    /// Newest first; nil until first used (the examples are read from the fixture then).
    private let urls = Mutex<[JSON]?>(nil)

    /// The three short URLs of shlink-v1_short-urls.json's list example, after 57 made-up
    /// ones in their shape.
    private static func seeded() throws -> [JSON] {
        let spec = try JSON(parsing: TestServer.fixture("shortener/shlink-v1_short-urls.json"))
        guard
            let examples = spec["get"]?["responses"]?["200"]?["content"]?["application/json"]?["example"]?[
                "shortUrls"]?["data"]?.arrayValue
        else { throw FixtureError(path: "shortener/shlink-v1_short-urls.json", reason: "has no list example") }
        let madeUp = (1...ShlinkRoutes.seededLinks).reversed().map { number -> JSON in
            let code = "pg" + String(format: "%03d", number)
            return shortURL(
                code: code, longURL: "https://example.com/page/\(code.dropFirst(2))", domain: nil,
                tags: ["seed"], created: "2024-01-01T00:00:00+00:00", visits: number)
        }
        return madeUp + examples
    }

    /// A short URL in the shape of shlink-ShortUrl.json (and the examples beside it).
    static func shortURL(code: String, longURL: String, domain: String?, tags: [String], created: String, visits: Int)
        -> JSON
    {
        .object([
            ("shortCode", .string(code)),
            ("shortUrl", .string("https://\(domain ?? ShlinkRoutes.defaultDomain)/\(code)")),
            ("longUrl", .string(longURL)), ("dateCreated", .string(created)),
            ("visitsSummary", .object([("total", .int(visits)), ("nonBots", .int(visits)), ("bots", .int(0))])),
            ("tags", .array(tags.map(JSON.string))),
            ("meta", .object([("validSince", .null), ("validUntil", .null), ("maxVisits", .null)])),
            ("domain", domain.map(JSON.string) ?? .null), ("title", .null), ("crawlable", .bool(false)),
            ("forwardQuery", .bool(true)), ("hasRedirectRules", .bool(false)),
        ])
    }

    private func withURLs<T>(_ body: (inout [JSON]) throws -> T) throws -> T {
        try urls.withLock { stored in
            var current = try stored ?? ShlinkServer.seeded()
            defer { stored = current }
            return try body(&current)
        }
    }

    func all() throws -> [JSON] { try withURLs { $0 } }

    /// The short URL `code` on `domain` (nil: the default domain).
    func shortURL(code: String, domain: String?) throws -> JSON? {
        try withURLs { urls in
            urls.first { $0["shortCode"]?.stringValue == code && $0["domain"]?.stringValue == domain }
        }
    }

    func create(_ longURL: String, slug: String?, domain: String?, tags: [String], findIfExists: Bool) throws
        -> Outcome
    {
        try withURLs { urls in
            func same(_ url: JSON) -> Bool {
                url["longUrl"]?.stringValue == longURL && url["domain"]?.stringValue == domain
                    && (slug == nil || url["shortCode"]?.stringValue == slug)
                    && (tags.isEmpty || Set((url["tags"]?.arrayValue ?? []).compactMap(\.stringValue)) == Set(tags))
            }
            if findIfExists, let found = urls.first(where: same) { return .found(found) }
            var code = slug ?? ""
            if let slug {
                if urls.contains(where: { $0["shortCode"]?.stringValue == slug && $0["domain"]?.stringValue == domain })
                {
                    return .taken(slug)
                }
            } else {
                var salt: UInt64 = 0
                repeat {
                    code = String(ShortURLStore.code(for: longURL, salt: salt).prefix(5))
                    salt += 1
                } while urls.contains { $0["shortCode"]?.stringValue == code && $0["domain"]?.stringValue == domain }
            }
            let created = ShlinkServer.shortURL(
                code: code, longURL: longURL, domain: domain, tags: tags, created: "2026-01-01T00:00:00+00:00",
                visits: 0)
            urls.insert(created, at: 0)
            return .found(created)
        }
    }
}
