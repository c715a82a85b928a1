/// `GET /repos/{owner}/{repo}/stargazers` (https://docs.github.com/rest/activity/starring#list-stargazers):
/// `octocat/Hello-World` has 230 stargazers, oldest first, one an hour from 2024-01-01; with
/// `Accept: application/vnd.github.star+json` each comes as `{starred_at, user}`, as GitHub
/// sends it.
///
/// The server's ETag makes an unchanged page a 304.
struct GitHubStargazerRoutes: RouteHandler {
    /// How many stargazers each repository has.
    static let repositories = ["octocat/Hello-World": 230]

    func respond(to request: RouteRequest) -> Response? {
        guard let captures = request.match("GET", "/repos/{owner}/{repo}/stargazers"),
            let owner = captures["owner"], let repo = captures["repo"]
        else { return nil }
        guard let total = Self.repositories["\(owner)/\(repo)"] else {
            return GitHubUserRoutes.notFound("/activity/starring#list-stargazers")
        }
        let withDates = request.recorded.header("accept")?.contains("application/vnd.github.star+json") == true
        let pagination = Pagination(request: request, total: total)
        do {
            let items = try pagination.indices.map { index -> JSON in
                let user = try GitHubObjects.simpleUser(
                    login: "stargazer\(index + 1)", id: 2_000_000 + index + 1, origin: request.origin)
                guard withDates else { return user }
                return .object([("starred_at", .string(Self.starredAt(index))), ("user", user)])
            }
            return pagination.response(items: items, request: request)
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
    }

    /// The time the `index`th stargazer starred: one an hour from 2024-01-01T00:00:00Z.
    static func starredAt(_ index: Int) -> String {
        let day = index / 24 + 1
        let hour = index % 24
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return "2024-01-\(twoDigits(day))T\(twoDigits(hour)):00:00Z"
    }
}
