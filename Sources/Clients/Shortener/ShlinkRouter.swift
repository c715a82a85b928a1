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
    public static let paging = Paging(pagination, items: itemsPath)

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
