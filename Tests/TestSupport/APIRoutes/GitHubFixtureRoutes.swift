/// GitHub endpoints answered with octokit's recorded responses (`shared/fixtures/github/`).
struct GitHubFixtureRoutes: RouteHandler {
    static let apiOrigin = "https://api.github.com"

    /// Recorded headers worth replaying; the server adds its own ETag and x-ratelimit-*.
    static let keptHeaders: Set<String> = [
        "cache-control", "last-modified", "link", "x-github-media-type", "x-oauth-scopes",
        "x-accepted-oauth-scopes", "x-github-request-id",
    ]

    func respond(to request: RouteRequest) -> Response? {
        if request.match("GET", "/") != nil {
            return replay("github/octokit-get-root.json", request: request)
        }
        if request.match("GET", "/repos/octokit-fixture-org/hello-world") != nil {
            return replay("github/octokit-get-repository.json", request: request)
        }
        if request.match("GET", "/orgs/octokit-fixture-org") != nil {
            return replay("github/octokit-get-organization.json", request: request)
        }
        if request.match("GET", "/search/issues") != nil {
            return replay("github/octokit-search-issues.json", request: request)
        }
        if request.match("POST", "/repos/octokit-fixture-org/errors/labels") != nil {
            return replay("github/octokit-errors.json", request: request)
        }
        if request.match("GET", "/repos/octokit-fixture-org/paginate-issues/issues") != nil
            || request.match("GET", "/repositories/1000/issues") != nil
        {
            return paginatedIssues(request)
        }
        return nil
    }

    /// The recorded pages of `paginate-issues`: page 1 was recorded under the repository's name,
    /// pages 2–5 under `/repositories/1000/issues`; either path serves any recorded page.
    private func paginatedIssues(_ request: RouteRequest) -> Response {
        let page = request.queryInt("page") ?? 1
        return replay("github/octokit-paginate-issues.json", request: request) { exchange in
            Int(exchange.query["page"] ?? "1") == page
        }
    }

    private func replay(
        _ file: String, request: RouteRequest, where matches: (RecordedExchange) -> Bool = { _ in true }
    ) -> Response {
        let exchanges: [RecordedExchange]
        do {
            exchanges = try FixtureStore.exchanges(file)
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
        guard let exchange = exchanges.first(where: matches) else {
            return .message("Not Found", status: 404)
        }
        return GitHubFixtureRoutes.response(replaying: exchange, origin: request.origin)
    }

    /// The recorded body verbatim (compact, as recorded), its status and the useful headers,
    /// with `link` URLs moved from api.github.com to `origin`.
    static func response(replaying exchange: RecordedExchange, origin: String) -> Response {
        var response = Response.json(exchange.response, status: exchange.status)
        for (name, value) in exchange.headers where keptHeaders.contains(name) {
            let replayed = name == "link" ? value.replacing(apiOrigin, with: origin) : value
            response.setHeader(name, replayed)
        }
        return response
    }
}
