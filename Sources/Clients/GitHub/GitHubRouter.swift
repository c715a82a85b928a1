/// The GitHub REST endpoints apimacro knows, one case each; `request` builds
/// the whole request for a case in one switch.
public import WebAPI

public enum GitHubRouter: Sendable {
    /// `GET /users/{login}`.
    case user(login: String)
    /// `GET /users/{login}/repos` (a list).
    case repos(login: String, parameters: [(String, String)])
    /// `GET /users/{login}/followers` (a list).
    case followers(login: String)
    /// `GET /users/{login}/following` (a list).
    case following(login: String)
    /// `GET {path}` relative to the base URL (or an absolute URL on it).
    case get(path: String, parameters: [(String, String)], headers: [(String, String)])
    /// `GET {path}`, every page (a list).
    case paginate(path: String, parameters: [(String, String)])
    /// `POST`, `PUT`, `PATCH` or `DELETE {path}` with `body` (a write: never sent twice after
    /// its body may have left, `RetryStage`).
    case write(
        method: String, path: String, parameters: [(String, String)], headers: [(String, String)], body: Request.Body)

    /// The methods of `write`.
    public static let writeMethods = ["POST", "PUT", "PATCH", "DELETE"]

    /// The items a page asks for (GitHub's maximum).
    public static let pageSize = 100

    /// The request for this endpoint.
    ///
    /// Logins are escaped as one path segment, so `../x` cannot reach another
    /// endpoint.
    public var request: Request {
        switch self {
        case .user(let login):
            Request("GET", "/users/\(FormEncoding.pathSegment(login))")
        case .repos(let login, let parameters):
            Request("GET", "/users/\(FormEncoding.pathSegment(login))/repos", query: parameters)
        case .followers(let login):
            Request("GET", "/users/\(FormEncoding.pathSegment(login))/followers")
        case .following(let login):
            Request("GET", "/users/\(FormEncoding.pathSegment(login))/following")
        case .get(let path, let parameters, let headers):
            Request("GET", path, query: parameters, headers: headers)
        case .paginate(let path, let parameters):
            Request("GET", path, query: parameters)
        case .write(let method, let path, let parameters, let headers, let body):
            Request(method, path, query: parameters, headers: headers, body: body)
        }
    }

    /// Whether the endpoint returns a list spread over pages.
    public var isList: Bool {
        switch self {
        case .repos, .followers, .following, .paginate: true
        case .user, .get, .write: false
        }
    }

    /// The first page's request, asking for `min(100, limit)` items unless
    /// the caller set `per_page` itself.
    public func firstPage(limit: Int?) -> Request {
        var request = self.request
        if !request.query.contains(where: { $0.0 == "per_page" }) {
            request.query.append(
                ("per_page", String(min(GitHubRouter.pageSize, max(1, limit ?? GitHubRouter.pageSize)))))
        }
        return request
    }
}
