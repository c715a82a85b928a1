import Foundation

/// `GET /users/{login}` and its paginated lists (repos, followers, following), and `GET /user`.
struct GitHubUserRoutes: RouteHandler {
    static let docs = "https://docs.github.com/rest"

    func respond(to request: RouteRequest) -> Response? {
        if request.match("GET", "/user") != nil {
            return authenticatedUser(request)
        }
        if request.match("GET", "/rate_limit") != nil {
            return Self.rateLimit(version: request.recorded.header("X-GitHub-Api-Version"))
        }
        if let captures = request.match("GET", "/users/{login}"), let login = captures["login"] {
            return user(login, request: request)
        }
        if let captures = request.match("GET", "/users/{login}/{list}"), let login = captures["login"] {
            switch captures["list"] ?? "" {
            case "repos": return repos(login, request: request)
            case "followers": return people(login, followers: true, request: request)
            case "following": return people(login, followers: false, request: request)
            default: return nil
            }
        }
        return nil
    }

    /// `GET /rate_limit` in the documented shape of the API version asked for
    /// (https://docs.github.com/rest/rate-limit/rate-limit): `resources` (core, search, graphql),
    /// and before 2026-03-10 also the deprecated top-level `rate` (a copy of core), which
    /// 2026-03-10 removed.
    ///
    /// An answer to 2022-11-28 carries `Deprecation`, `Sunset` and `Link` headers as GitHub sends
    /// them for a version it will stop serving (RFC 9745, RFC 8594).
    static func rateLimit(version: String?) -> Response {
        func bucket(_ limit: Int, _ used: Int, _ resource: String) -> JSON {
            .object([
                ("limit", .int(limit)), ("used", .int(used)), ("remaining", .int(limit - used)),
                ("reset", .int(1_900_000_000)), ("resource", .string(resource)),
            ])
        }
        let core = bucket(5000, 12, "core")
        var members: [(String, JSON)] = [
            (
                "resources",
                .object([("core", core), ("search", bucket(30, 1, "search")), ("graphql", bucket(5000, 0, "graphql"))])
            )
        ]
        let current = (version ?? "2022-11-28") >= "2026-03-10"
        if !current { members.append(("rate", core)) }
        var headers = [
            ("X-RateLimit-Limit", "5000"), ("X-RateLimit-Remaining", "4988"), ("X-RateLimit-Reset", "1900000000"),
            ("X-RateLimit-Used", "12"), ("X-RateLimit-Resource", "core"),
        ]
        if !current {
            headers += [
                ("Deprecation", "@1773100800"), ("Sunset", "Wed, 10 Mar 2027 00:00:00 GMT"),
                (
                    "Link",
                    "<https://docs.github.com/rest/about-the-rest-api/api-versions>; rel=\"deprecation\"; type=\"text/html\", "
                        + "<https://github.blog/changelog/2026-03-10-rest-api-version-2026-03-10>; rel=\"sunset\""
                ),
            ]
        }
        return .json(.object(members), headers: headers)
    }

    /// GitHub's 404 body, pointing at the documentation of the endpoint asked for.
    static func notFound(_ documentation: String) -> Response {
        .json(
            .object([
                ("message", .string("Not Found")),
                ("documentation_url", .string(docs + documentation)),
                ("status", .string("404")),
            ]), status: 404)
    }

    /// `GET /user` as GitHub answers a token (https://docs.github.com/rest/users/users#get-the-authenticated-user):
    /// octocat's profile; a classic token (`ghp_…`) gets `X-OAuth-Scopes: repo, read:org`, a
    /// fine-grained one (`github_pat_…`) none; no token, or one containing `revoked` or starting
    /// `bad`, is GitHub's 401.
    ///
    /// A token ending `_for_LOGIN` (`gho_work_for_user7`) is LOGIN's, so that tests can hold
    /// several accounts (a LOGIN the server does not know is a 401 too).
    private func authenticatedUser(_ request: RouteRequest) -> Response {
        let token = ServerCore.token(of: request.recorded)
        let owner = token.flatMap { token in token.range(of: "_for_").map { String(token[$0.upperBound...]) } }
        guard let token, !token.contains("revoked"), !token.hasPrefix("bad"),
            let profile = GitHubProfile.named(owner ?? "octocat")
        else {
            return .json(
                .object([
                    (
                        "message",
                        .string(
                            request.recorded.header("authorization") == nil
                                ? "Requires authentication" : "Bad credentials")
                    ),
                    ("documentation_url", .string(Self.docs + "/users/users#get-the-authenticated-user")),
                    ("status", .string("401")),
                ]), status: 401)
        }
        var answer = build { .json(try GitHubObjects.fullUser(profile, origin: request.origin)) }
        if token.hasPrefix("ghp_") {
            answer.setHeader("X-OAuth-Scopes", "repo, read:org")
            answer.setHeader("X-Accepted-OAuth-Scopes", "")
        }
        return answer
    }

    private func user(_ login: String, request: RouteRequest) -> Response {
        guard let profile = GitHubProfile.named(login) else {
            return GitHubUserRoutes.notFound("/users/users#get-a-user")
        }
        return build { .json(try GitHubObjects.fullUser(profile, origin: request.origin)) }
    }

    private func repos(_ login: String, request: RouteRequest) -> Response {
        guard let profile = GitHubProfile.named(login) else {
            return GitHubUserRoutes.notFound("/repos/repos#list-repositories-for-a-user")
        }
        let pagination = Pagination(request: request, total: profile.publicRepos)
        return build {
            let items = try pagination.indices.map {
                try GitHubObjects.repository(number: $0 + 1, owner: profile, origin: request.origin)
            }
            return pagination.response(items: items, request: request)
        }
    }

    private func people(_ login: String, followers: Bool, request: RouteRequest) -> Response {
        guard let profile = GitHubProfile.named(login) else {
            return GitHubUserRoutes.notFound(
                followers
                    ? "/users/followers#list-followers-of-a-user" : "/users/followers#list-the-people-a-user-follows"
            )
        }
        let pagination = Pagination(request: request, total: followers ? profile.followers : profile.following)
        return build {
            let items = try pagination.indices.map { index in
                try GitHubObjects.simpleUser(
                    login: "user\(index + 1)", id: 1_000_000 + index + 1, origin: request.origin)
            }
            return pagination.response(items: items, request: request)
        }
    }

    /// Runs a builder that reads fixtures; a missing fixture becomes a 500 naming it.
    private func build(_ body: () throws -> Response) -> Response {
        do {
            return try body()
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
    }
}
