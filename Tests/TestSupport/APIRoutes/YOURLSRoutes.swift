import Foundation
import Synchronization

/// A YOURLS site's API, `yourls-api.php`, under `/yourls` (a client's base URL is
/// `<baseURL>/yourls`): `action=shorturl` (POST, the link's fields in a form body),
/// `expand`, `url-stats`, `stats` (`filter=last`, `limit`, `start`) and `db-stats`, each with
/// `format=json`.
///
/// There are no recordings of a live YOURLS: every answer is the shape YOURLS's own source
/// builds (YOURLS 1.9: `includes/functions-api.php` for `expand`, the API's output and its
/// status codes; `includes/functions-shorturls.php`, `yourls_add_new_link`, for `shorturl`,
/// success and `fail` alike with statusCode 200; `includes/functions.php`, `yourls_get_stats`
/// and `yourls_get_link_stats`, for `stats` and `url-stats`; `includes/auth.php` for the 403 of
/// a missing or wrong signature), with made-up links. The site is `https://sho.rt`; it starts
/// with 61 links (`sho.rt/s001`…, newest last), so listings span pages; each server keeps its own.
///
/// The keyword `taken` is reserved (`shorturl` with it answers `error:keyword`). Hostile answers,
/// for the client's error paths: `expand` of `hostile-json` answers with JSON cut short, of
/// `hostile-missing` with `success` but no link, and `stats` with the signature
/// `yourls-hostile-signature` with JSON cut short.
struct YOURLSRoutes: RouteHandler {
    static let prefix = "/yourls"
    static let site = "https://sho.rt"
    static let validSignature = "yourls-test-signature"
    static let hostileSignature = "yourls-hostile-signature"
    static let seededLinks = 61

    let site = YOURLSSite()

    /// The answer, without the server's rate-limit headers: YOURLS sends none.
    func respond(to request: RouteRequest) -> Response? {
        guard request.recorded.path == YOURLSRoutes.prefix + "/yourls-api.php" else { return nil }
        var answer = route(request)
        answer.sendsRateLimitHeaders = false
        return answer
    }

    private func route(_ request: RouteRequest) -> Response {
        var parameters = request.query
        if request.recorded.method == "POST" {
            for (name, value) in URLCoding.formPairs(request.recorded.bodyText) { parameters[name] = value }
        }
        let signature = parameters["signature"]
        guard signature == YOURLSRoutes.validSignature || signature == YOURLSRoutes.hostileSignature else {
            // auth.php: the API's answer to a request it cannot authenticate.
            let message = signature == nil ? "Please log in" : "Invalid username or password"
            return .json(
                .object([("message", .string(message)), ("errorCode", .int(403)), ("callback", .string(""))]),
                status: 403)
        }
        guard parameters["format"] == "json" else { return .text("only format=json is modelled", status: 400) }
        switch parameters["action"] {
        case "shorturl":
            return shorten(parameters["url"] ?? "", keyword: parameters["keyword"].flatMap { $0.isEmpty ? nil : $0 })
        case "expand":
            return expand(parameters["shorturl"] ?? "")
        case "url-stats":
            return urlStats(parameters["shorturl"] ?? "")
        case "stats":
            if signature == YOURLSRoutes.hostileSignature {
                return Response(
                    status: 200, headers: [("Content-Type", "application/json")],
                    body: Array(#"{"links":{"link_1":{"shorturl":"#.utf8))
            }
            return stats(limit: Int(parameters["limit"] ?? "") ?? 10, start: Int(parameters["start"] ?? "") ?? 0)
        case "db-stats":
            let all = site.all()
            return .json(
                .object([
                    ("db-stats", totals(all)), ("statusCode", .int(200)), ("message", .string("success")),
                ]))
        default:
            // yourls-api.php's answer to an unknown action.
            return .json(
                .object([("errorCode", .int(400)), ("message", .string("Unknown or missing \"action\" parameter"))]),
                status: 400)
        }
    }

    /// `yourls_add_new_link`'s answers: a new link; the one the site has for the URL (`fail`,
    /// `error:url`); a keyword taken (`fail`, `error:keyword`, no link); each with statusCode 200.
    private func shorten(_ url: String, keyword: String?) -> Response {
        guard ShortenerRoutes.isWebURL(url) else {
            return .json(
                .object([
                    ("status", .string("fail")), ("code", .string("error:nourl")),
                    ("message", .string("Missing or malformed URL")), ("errorCode", .string("400")),
                ]), status: 400)
        }
        switch site.add(url, keyword: keyword) {
        case .added(let link):
            return .json(
                .object([
                    ("url", link.urlObject(clicks: false)), ("status", .string("success")),
                    ("message", .string("\(url) added to database")), ("title", .string(link.title)),
                    ("shorturl", .string(link.shortURL)), ("statusCode", .int(200)),
                ]))
        case .exists(let link):
            return .json(
                .object([
                    ("status", .string("fail")), ("code", .string("error:url")), ("url", link.urlObject(clicks: true)),
                    ("message", .string("\(url) already exists in database")), ("title", .string(link.title)),
                    ("shorturl", .string(link.shortURL)), ("statusCode", .int(200)),
                ]))
        case .keywordTaken(let keyword):
            return .json(
                .object([
                    ("status", .string("fail")), ("code", .string("error:keyword")),
                    ("message", .string("Short URL \(keyword) already exists in database or is reserved")),
                    ("statusCode", .int(200)),
                ]))
        }
    }

    /// `yourls_api_expand`: the link, or 404 `Error: short URL not found`.
    private func expand(_ shortURL: String) -> Response {
        let keyword = YOURLSRoutes.keyword(shortURL)
        switch keyword {
        case "hostile-json":
            return Response(
                status: 200, headers: [("Content-Type", "application/json")],
                body: Array(#"{"keyword":"hostile-json","longurl":"#.utf8))
        case "hostile-missing":
            return .json(
                .object([("keyword", .string(keyword)), ("message", .string("success")), ("statusCode", .int(200))]))
        default: break
        }
        guard let link = site.link(keyword) else { return YOURLSRoutes.notFound(keyword) }
        return .json(
            .object([
                ("keyword", .string(keyword)), ("shorturl", .string(link.shortURL)), ("longurl", .string(link.url)),
                ("message", .string("success")), ("statusCode", .int(200)),
            ]))
    }

    /// `yourls_get_link_stats`: `{"statusCode", "message", "link": {…}}`, or 404.
    private func urlStats(_ shortURL: String) -> Response {
        let keyword = YOURLSRoutes.keyword(shortURL)
        guard let link = site.link(keyword) else {
            return .json(
                .object([("statusCode", .int(404)), ("message", .string("Error: short URL not found"))]), status: 404)
        }
        return .json(
            .object([("statusCode", .int(200)), ("message", .string("success")), ("link", link.statsObject)]))
    }

    /// `yourls_get_stats` with `filter=last`: the newest from `start`, keyed `link_1`…, `links`
    /// left out when there are none; `stats` the site's totals (as strings, as the database gives them).
    private func stats(limit: Int, start: Int) -> Response {
        let all = site.all()
        let newest = all.reversed().dropFirst(max(0, start)).prefix(max(0, limit))
        var members: [(String, JSON)] = []
        if !newest.isEmpty {
            members.append(
                ("links", .object(newest.enumerated().map { ("link_\($0.offset + 1)", $0.element.statsObject) })))
        }
        members += [("stats", totals(all)), ("statusCode", .string("200")), ("message", .string("success"))]
        return .json(.object(members))
    }

    private func totals(_ all: [YOURLSSite.Link]) -> JSON {
        .object([
            ("total_links", .string(String(all.count))),
            ("total_clicks", .string(String(all.reduce(0) { $0 + $1.clicks }))),
        ])
    }

    /// The keyword of `shortURL`: YOURLS takes its own site's URL or the keyword itself.
    static func keyword(_ shortURL: String) -> String {
        shortURL.hasPrefix(site + "/") ? String(shortURL.dropFirst(site.count + 1)) : shortURL
    }

    /// `yourls_api_expand`'s 404.
    static func notFound(_ keyword: String) -> Response {
        .json(
            .object([
                ("keyword", .string(keyword)), ("message", .string("Error: short URL not found")),
                ("errorCode", .int(404)),
            ]), status: 404)
    }
}

/// One YOURLS site's links, oldest first.
final class YOURLSSite: Sendable {
    /// A link as the site's table holds it.
    struct Link: Sendable {
        let keyword: String
        let url: String
        let title: String
        let timestamp: String
        let clicks: Int

        var shortURL: String { YOURLSRoutes.site + "/" + keyword }

        /// `yourls_add_new_link`'s `url` member (`clicks` only for a link that existed).
        func urlObject(clicks withClicks: Bool) -> JSON {
            var members: [(String, JSON)] = [
                ("keyword", .string(keyword)), ("url", .string(url)), ("title", .string(title)),
                ("date", .string(timestamp)), ("ip", .string("127.0.0.1")),
            ]
            if withClicks { members.append(("clicks", .string(String(clicks)))) }
            return .object(members)
        }

        /// A link as `stats` and `url-stats` show it (`clicks` a string, as the database gives it).
        var statsObject: JSON {
            .object([
                ("shorturl", .string(shortURL)), ("url", .string(url)), ("title", .string(title)),
                ("timestamp", .string(timestamp)), ("ip", .string("127.0.0.1")), ("clicks", .string(String(clicks))),
            ])
        }
    }

    /// What adding did.
    enum Outcome {
        case added(Link)
        case exists(Link)
        case keywordTaken(String)
    }

    private let links = Mutex<[Link]>(
        (1...YOURLSRoutes.seededLinks).map { number in
            let keyword = "s" + String(format: "%03d", number)
            return Link(
                keyword: keyword, url: "https://example.com/page/\(keyword.dropFirst())",
                title: "Page \(number)", timestamp: String(format: "2024-01-01 00:%02d:%02d", number / 60, number % 60),
                clicks: number)
        })

    /// Every link, oldest first.
    func all() -> [Link] { links.withLock { $0 } }

    /// The link called `keyword`.
    func link(_ keyword: String) -> Link? { links.withLock { $0.first { $0.keyword == keyword } } }

    /// A new link for `url` (with `keyword`, else the next free one), unless the site has the URL.
    func add(_ url: String, keyword: String?) -> Outcome {
        links.withLock { all in
            if let existing = all.first(where: { $0.url == url }) { return .exists(existing) }
            if let keyword, all.contains(where: { $0.keyword == keyword }) || keyword == "taken" {
                return .keywordTaken(keyword)
            }
            let link = Link(
                keyword: keyword ?? String(all.count + 1, radix: 36), url: url, title: "A page",
                timestamp: "2026-11-29 09:00:00", clicks: 0)
            all.append(link)
            return .added(link)
        }
    }
}
