import Platform
public import WebAPI

/// The YOURLS API the shortener uses, one case each: `yourls-api.php` at the root of a
/// self-hosted YOURLS site (the base URL is the site, such as `https://sho.rt`), asked for JSON
/// (`format=json`) and signed with the passwordless API's `signature` token
/// (https://yourls.org/docs/guide/advanced/api, and the site's `includes/functions-api.php`).
public enum YOURLSRouter: Sendable {
    /// `POST action=shorturl` with `url` and `keyword` (the custom back-half): `{"url": {"keyword",
    /// "url", "title", "date", "ip"}, "status": "success", "shorturl", "statusCode": 200}`; for a
    /// long URL the site has, `status: fail`, `code: error:url` and that link's `shorturl`, still 200.
    case shortURL(longURL: String, keyword: String?)
    /// `GET action=expand&shorturl=KEYWORD`: `{"keyword", "shorturl", "longurl", "statusCode": 200}`;
    /// 404 with `message` when there is no such link.
    case expand(keyword: String)
    /// `GET action=url-stats&shorturl=KEYWORD`: `{"link": {"shorturl", "url", "title", "timestamp",
    /// "ip", "clicks"}, "statusCode": 200}`.
    case urlStats(keyword: String)
    /// `GET action=stats&filter=last&limit=N&start=S`: the newest links from `start`, `{"links":
    /// {"link_1": {…}, …}, "stats": {"total_links", "total_clicks"}}` (`links` left out when none).
    case stats(limit: Int, start: Int)
    /// `GET action=db-stats`: `{"db-stats": {"total_links", "total_clicks"}}`.
    case databaseStats

    /// The API's one endpoint, relative to the site.
    public static let path = "/yourls-api.php"
    /// The most links a page of `stats` asks for.
    public static let pageSize = 50
    /// Where a page of `stats` keeps its links (an object: `link_1`, `link_2`, …).
    public static let itemsPath = ["links"]
    /// How many links the site holds, in a page of `stats`.
    public static let totalPath = ["stats", "total_links"]

    /// The request for this endpoint: `action` and `format=json` in the query (YOURLS reads
    /// GET and POST parameters alike); a new link's fields in a form body.
    public var request: Request {
        let query: [(String, String)]
        switch self {
        case .shortURL(let longURL, let keyword):
            var fields = [("url", longURL)]
            if let keyword { fields.append(("keyword", keyword)) }
            return Request(
                "POST", Self.path, query: [("action", "shorturl"), ("format", "json")], body: .form(fields))
        case .expand(let keyword): query = [("action", "expand"), ("shorturl", keyword)]
        case .urlStats(let keyword): query = [("action", "url-stats"), ("shorturl", keyword)]
        case .stats(let limit, let start):
            query = [("action", "stats"), ("filter", "last"), ("limit", String(limit)), ("start", String(start))]
        case .databaseStats: query = [("action", "db-stats")]
        }
        return Request("GET", Self.path, query: query + [("format", "json")])
    }
}

extension YOURLSRouter: ShortenerService {
    public static let name = "yourls"
    public static let title = "YOURLS"
    /// None: a user runs YOURLS on their own site.
    public static let defaultBaseURL: String? = nil
    public static let exampleBaseURL = "https://sho.rt (the site yourls-api.php is at the root of)"
    public static let credentialKind = ShortenerCredentialKind.key
    public static let credentialName = "a YOURLS signature token"
    /// `signature=` in the query (the passwordless API).
    public static func credential(_ secret: Secret) -> Credential { .query(name: "signature", value: secret) }

    /// `shorturl` answers keep the link in `url`, `expand` the long URL in `longurl`, `url-stats`
    /// all in `link`, and each of `stats`' links is flat; a `fail` without a link names its `code`.
    public static let shape = ShortLinkShape(
        id: [["shorturl"], ["link", "shorturl"]], longURL: [["url", "url"], ["longurl"], ["url"], ["link", "url"]],
        createdAt: [["url", "date"], ["timestamp"], ["link", "timestamp"]], clicks: [["link", "clicks"]],
        failure: ["code"])

    /// `stats` from `start` 0 by `limit`, to a short page or `stats.total_links`; links keyed `link_N`.
    public static let paging = Paging(
        .offset(parameter: "start", limitParameter: "limit", size: pageSize, total: totalPath), items: itemsPath,
        keyedItems: true)

    /// `shorturl`, the slug as its `keyword`; YOURLS keeps no domain nor tags.
    public static func shorten(_ link: NewShortLink, in configuration: ShortenerConfiguration) throws -> Request {
        if let refused = link.refusing(["domain", "tags"], by: self, because: "it keeps no domains nor tags") {
            throw refused
        }
        return YOURLSRouter.shortURL(longURL: link.longURL, keyword: link.slug).request
    }

    /// By the link's keyword, its back-half: YOURLS takes that or its own site's URL.
    public static func expand(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        YOURLSRouter.expand(keyword: try ShortLinkAddress(shortURL, argument: argument).code).request
    }

    /// `url-stats`: the link with its `clicks`.
    public static func clicks(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        YOURLSRouter.urlStats(keyword: try ShortLinkAddress(shortURL, argument: argument).code).request
    }

    /// `stats` with `filter=last`, newest first.
    public static func linksStart(limit: Int?, in configuration: ShortenerConfiguration) throws -> LinksStart {
        LinksStart(YOURLSRouter.stats(limit: min(pageSize, max(1, limit ?? pageSize)), start: 0).request)
    }

    /// `{"message", "errorCode"}`, with `code` (`error:keyword`) when it names one.
    public static func errorMessage(_ response: Response) -> String? {
        let message = JSONPath.string(in: response.body, path: ["message"])
        let code = JSONPath.string(in: response.body, path: ["code"])
        switch (message, code) {
        case (let message?, let code?): return "\(message) (\(code))"
        default: return message ?? code
        }
    }

    /// A refused signature is 403 "Invalid username or password" (or "Please log in" without one):
    /// `Unauthorized`, as the credential is at fault.
    public static func errorKind(_ response: Response) -> APIError.Kind? {
        guard response.status == 403, let message = JSONPath.string(in: response.body, path: ["message"]) else {
            return nil
        }
        return message.contains("Invalid username or password") || message.contains("Please log in")
            ? .unauthorized : nil
    }

    /// YOURLS names no account: `db-stats` shows the signature is accepted, and how many links the site holds.
    public static let identity: IdentityCheck? = IdentityCheck(databaseStats.request) { response in
        let total = JSONPath.string(in: response.body, path: ["db-stats", "total_links"])
        return Identity(
            account: "the signature is accepted (YOURLS names no account)", facts: total.map { ["\($0) links"] } ?? [])
    }
}
