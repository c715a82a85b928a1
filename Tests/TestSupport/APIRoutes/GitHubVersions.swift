import Foundation

/// GitHub's REST API versions as the routes answer them.
///
/// An answer is written in 2022-11-28's shape, and a request that asks for 2026-03-10
/// (`X-GitHub-Api-Version`) gets it in that version's shape, as GitHub's "Breaking changes"
/// page lists them for the endpoints the clients use
/// (docs.github.com/rest/about-the-rest-api/breaking-changes, "Version 2026-03-10"):
///
/// - "Remove deprecated `has_downloads` property from Repository response" and "Remove
///   deprecated `use_squash_pr_title_as_default` property": gone from every repository object
///   of `GET /search/code`, `/search/commits`, `/search/issues`, `GET /installation/repositories`
///   and `POST /app/installations/{installation_id}/access_tokens`.
/// - "Remove deprecated singular `assignee` field from Issue and Pull Request endpoints": gone
///   from the items of `GET /search/issues` (`assignees` stays).
/// - Submodules in a directory listing of `GET /repos/{owner}/{repo}/contents/{path}` have the
///   `type` "submodule" instead of "file": `GitHubContentsRoutes` answers so itself.
/// - `GET /rate_limit` without `rate`: `GitHubUserRoutes.rateLimit` answers so itself.
enum GitHubVersions {
    /// The version a request asks for (GitHub's default when it names none).
    static func version(of request: RouteRequest) -> String {
        request.recorded.header("X-GitHub-Api-Version") ?? "2022-11-28"
    }

    /// Whether `request` asks for 2026-03-10 or later.
    static func isCurrent(_ request: RouteRequest) -> Bool { version(of: request) >= "2026-03-10" }

    /// `response` in the shape of the version `request` asks for.
    static func adapt(_ response: Response, for request: RouteRequest) -> Response {
        guard isCurrent(request), (200..<300).contains(response.status), response.hostile == nil else {
            return response
        }
        let path = request.recorded.path
        let repositories =
            ["/search/code", "/search/commits", "/search/issues", "/installation/repositories"].contains(path)
            || (path.hasPrefix("/app/installations/") && path.hasSuffix("/access_tokens"))
        guard repositories, let body = try? JSON(parsing: response.body) else { return response }
        var adapted = removing(["has_downloads", "use_squash_pr_title_as_default"], from: body)
        if path == "/search/issues", let items = adapted["items"]?.arrayValue {
            adapted = adapted.setting("items", .array(items.map { $0.removing("assignee") }))
        }
        var answer = response
        answer.body = adapted.bytes
        return answer
    }

    /// `json` without `keys` in any object, at any depth.
    static func removing(_ keys: Set<String>, from json: JSON) -> JSON {
        switch json {
        case .array(let items): .array(items.map { removing(keys, from: $0) })
        case .object(let members):
            .object(members.filter { !keys.contains($0.0) }.map { ($0.0, removing(keys, from: $0.1)) })
        default: json
        }
    }
}
