/// The Instagram v1 endpoints apimacro knows, one case each.
public import WebAPI

public enum InstagramRouter: Sendable {
    /// `GET users/self`.
    case me
    /// `GET users/self/followed-by` (a list).
    case followedBy
    /// `GET users/self/follows` (a list).
    case follows
    /// `GET users/{id}/media/recent` (a list).
    case recentMedia(userID: String)
    /// `GET {path}` relative to the base URL.
    case get(path: String, parameters: [(String, String)])

    /// The request for this endpoint; a user id is one escaped path segment.
    public var request: Request {
        switch self {
        case .me: Request("GET", "/users/self")
        case .followedBy: Request("GET", "/users/self/followed-by")
        case .follows: Request("GET", "/users/self/follows")
        case .recentMedia(let userID): Request("GET", "/users/\(FormEncoding.pathSegment(userID))/media/recent")
        case .get(let path, let parameters): Request("GET", path, query: parameters)
        }
    }

    /// The first page's request, asking for `min(limit, 100)` items.
    public func firstPage(limit: Int?) -> Request {
        var request = self.request
        if let limit, !request.query.contains(where: { $0.0 == "count" }) {
            request.query.append(("count", String(min(100, max(1, limit)))))
        }
        return request
    }
}
