import Platform
public import WebAPI

/// The endpoints of the Instagram API with Instagram Login that apimacro knows, one case each;
/// paths are relative to the versioned base URL (`https://graph.instagram.com/v27.0`).
public enum InstagramGraphRouter: Sendable {
    /// `GET /me?fields=…`: the logged-in professional account.
    case me(fields: String)
    /// `GET /{user_id}/media?fields=…` (a list).
    case media(userID: String, fields: String)
    /// `GET /{media_id}/children?fields=…`: a carousel's items (a list).
    case children(mediaID: String, fields: String)
    /// `GET /{target}/insights?metric=…[&period=…]`: media or account insights (a list).
    case insights(target: String, metrics: String, parameters: [(String, String)])
    /// `GET {path}` relative to the versioned base URL (or an absolute URL on its host).
    case get(path: String, parameters: [(String, String)])

    /// `me()`'s fields unless a macro names others.
    public static let meFields =
        "user_id,username,name,account_type,profile_picture_url,followers_count,follows_count,media_count"
    /// `media()`'s fields unless a macro names others.
    public static let mediaFields =
        "id,caption,media_type,media_product_type,media_url,thumbnail_url,permalink,timestamp,like_count,comments_count"
    /// `children()`'s fields.
    public static let childFields = "id,media_type,media_url,thumbnail_url,permalink,timestamp"
    /// The items a page asks for.
    public static let pageSize = 100

    /// The request for this endpoint; ids are one escaped path segment, so `../x` reaches no other endpoint.
    public var request: Request {
        switch self {
        case .me(let fields):
            Request("GET", "/me", query: [("fields", fields)])
        case .media(let userID, let fields):
            Request("GET", "/\(FormEncoding.pathSegment(userID))/media", query: [("fields", fields)])
        case .children(let mediaID, let fields):
            Request("GET", "/\(FormEncoding.pathSegment(mediaID))/children", query: [("fields", fields)])
        case .insights(let target, let metrics, let parameters):
            Request("GET", "/\(FormEncoding.pathSegment(target))/insights", query: [("metric", metrics)] + parameters)
        case .get(let path, let parameters):
            // A link taken from an answer (`access_token=REDACTED`) is followed with the client's token.
            Request("GET", Self.withoutToken(path), query: parameters)
        }
    }

    /// The first page's request, asking for `min(100, limit)` items unless the caller set `limit`.
    public func firstPage(limit: Int?) -> Request {
        var request = self.request
        if !request.query.contains(where: { $0.0 == "limit" }) {
            request.query.append(("limit", String(min(Self.pageSize, max(1, limit ?? Self.pageSize)))))
        }
        return request
    }

    /// Graph lists link their pages with `paging.next`: an absolute URL that carries the
    /// token (`access_token`) the server saw.
    public static let pagination = Pagination.nextURL(path: ["paging", "next"])

    /// Where a Graph answer keeps a page's items (and insights their values): `data`.
    public static let itemsPath = ["data"]

    /// Graph's pages: `paging.next`, followed without the token it carries; items in `data`.
    public static let paging = Paging(pagination, items: itemsPath, followLink: withoutToken)

    /// `url` without its `access_token` parameters: a page link is followed with the client's
    /// own token, which the pipeline adds only on the client's host (a `paging.next` naming
    /// another host, as graph.facebook.com's do, goes without one), and a macro never sees the
    /// token in a link.
    public static func withoutToken(_ url: String) -> String {
        guard let mark = url.firstIndex(of: "?") else { return url }
        let end = url[mark...].firstIndex(of: "#") ?? url.endIndex
        let kept = url[url.index(after: mark)..<end].split(separator: "&", omittingEmptySubsequences: false).filter {
            pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return (name.percentDecoded ?? String(name)) != "access_token"
        }
        return String(url[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")) + url[end...]
    }
}
