import Platform
public import WebAPI

/// The Shlink REST API v3 endpoints the shortener uses, one case each
/// (https://api-spec.shlink.io; the base URL is the server's `…/rest/v3`).
public enum ShlinkRouter: Sendable {
    /// `POST /short-urls` `{"longUrl", "findIfExists": true, "domain"?, "customSlug"?, "tags"?}`:
    /// with `findIfExists` the link the server has for the same URL (and slug, tags) comes back
    /// instead of a new one.
    case create(longURL: String, domain: String?, slug: String?, tags: [String])
    /// `GET /short-urls/{shortCode}[?domain=…]`: one short URL, with its `visitsSummary`.
    case shortURL(code: String, domain: String?)
    /// `GET /short-urls?page=N&itemsPerPage=M`: one page of the server's short URLs.
    case list(page: Int, itemsPerPage: Int)

    /// The most short URLs a page asks for.
    public static let pageSize = 50
    /// Where a page of `list` keeps its short URLs.
    public static let itemsPath = ["shortUrls", "data"]
    /// How many pages there are, in a page of `list`.
    public static let pagesCountPath = ["shortUrls", "pagination", "pagesCount"]
    /// How the pages are followed (`links()` and `api --paginate` alike): `page` from 1 to
    /// `pagesCount`, or to an empty page; the number comes from the request, not the answer, so a
    /// server that repeats `currentPage` cannot send the listing round in circles.
    public static let pagination = Pagination.pageParameter(name: "page", first: 1, pages: pagesCountPath)
    /// How `list` pages: `pagination`, the short URLs in `shortUrls.data`.
    public static let paging: Paging = Paging(pagination, items: itemsPath)

    /// The request for this endpoint; a short code is one escaped path segment (a multi-segment
    /// slug's `/` included).
    public var request: Request {
        switch self {
        case .create(let longURL, let domain, let slug, let tags):
            Request(
                "POST", "/short-urls",
                body: ShortenerJSON.body(
                    [("longUrl", longURL), ("domain", domain), ("customSlug", slug)],
                    lists: tags.isEmpty ? [] : [("tags", tags)], flags: [("findIfExists", true)]))
        case .shortURL(let code, let domain):
            Request(
                "GET", "/short-urls/\(FormEncoding.pathSegment(code))", query: domain.map { [("domain", $0)] } ?? [])
        case .list(let page, let itemsPerPage):
            Request("GET", "/short-urls", query: [("page", String(page)), ("itemsPerPage", String(itemsPerPage))])
        }
    }

    /// The first page of `links(limit=...)`.
    public static func firstPage(limit: Int?) -> Request {
        ShlinkRouter.list(page: 1, itemsPerPage: min(pageSize, max(1, limit ?? pageSize))).request
    }
}

extension ShlinkRouter: ShortenerService {
    public static let name = "shlink"
    public static let title = "Shlink"
    /// None: a user runs Shlink on their own server.
    public static let defaultBaseURL: String? = nil
    public static let exampleBaseURL = "https://s.example.com/rest/v3"
    public static let credentialKind = ShortenerCredentialKind.key
    public static let credentialName = "a Shlink API key"
    /// `X-Api-Key`.
    public static func credential(_ secret: Secret) -> Credential { .header(name: "X-Api-Key", value: secret) }

    public static let shape = ShortLinkShape(
        id: [["shortUrl"]], longURL: [["longUrl"]], createdAt: [["dateCreated"]],
        clicks: [["visitsSummary", "total"], ["visitsCount"]])

    /// `/short-urls` with `findIfExists`.
    public static func shorten(_ link: NewShortLink, in configuration: ShortenerConfiguration) throws -> Request {
        ShlinkRouter.create(longURL: link.longURL, domain: link.domain, slug: link.slug, tags: link.tags).request
    }

    public static func expand(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        try shortURLRequest(shortURL, argument: argument, in: configuration)
    }

    /// The short URL, with its `visitsSummary`.
    public static func clicks(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        try shortURLRequest(shortURL, argument: argument, in: configuration)
    }

    /// One short URL: its code, on its domain unless that is the API's own host (then the
    /// server's default domain).
    static func shortURLRequest(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        let address = try ShortLinkAddress(shortURL, argument: argument)
        let apiHost = URLComponents(string: configuration.baseURL).flatMap { components in
            components.host.map { host in components.port.map { "\(host.lowercased()):\($0)" } ?? host.lowercased() }
        }
        let domain = address.host == apiHost ? nil : address.host
        return ShlinkRouter.shortURL(code: address.code, domain: domain).request
    }

    public static func linksStart(limit: Int?, in configuration: ShortenerConfiguration) throws -> LinksStart {
        LinksStart(firstPage(limit: limit))
    }

    /// problem+json: `title: detail`, then the extras that name what was wrong
    /// (`invalidElements`, `customSlug`, `shortCode`, `domain`).
    public static func errorMessage(_ response: Response) -> String? {
        guard let object = JSONValue.native(in: response.body, path: []) as? [String: Any] else { return nil }
        var text = [object["title"] as? String, object["detail"] as? String].compactMap { $0 }.joined(separator: ": ")
        var extras: [String] = []
        if let invalid = object["invalidElements"] as? [Any] {
            let names = invalid.compactMap { $0 as? String }
            if !names.isEmpty { extras.append("invalid fields: \(names.joined(separator: ", "))") }
        }
        for key in ["customSlug", "shortCode", "domain"] {
            if let value = object[key] as? String { extras.append("\(key) \(value.debugDescription)") }
        }
        if !extras.isEmpty { text += (text.isEmpty ? "" : " ") + "(\(extras.joined(separator: "; ")))" }
        return text.isEmpty ? nil : text
    }

    /// problem+json's `type` is a URI ending in the error's name.
    public static func errorKind(_ response: Response) -> APIError.Kind? {
        guard let type = JSONPath.string(in: response.body, path: ["type"]) else { return nil }
        let name = type.split(separator: "/").last.map(String.init) ?? type
        switch name {
        case "short-url-not-found", "not-found", "domain-not-found", "tag-not-found": return .notFound
        case "invalid-api-key", "missing-authentication": return .unauthorized
        case _ where name.hasPrefix("forbidden"): return .forbidden
        default: return nil
        }
    }

    /// Shlink names no account: one page of one short URL shows the key is accepted, and how
    /// many short URLs the server holds.
    public static let identity: IdentityCheck? = IdentityCheck(list(page: 1, itemsPerPage: 1).request) { response in
        let total = JSONPath.string(in: response.body, path: ["shortUrls", "pagination", "totalItems"])
        return Identity(
            account: "the key is accepted (Shlink names no account)", facts: total.map { ["\($0) short URLs"] } ?? [])
    }
}
