/// The addresses a route may need to build links.
struct Endpoints: Sendable {
    /// The main listener, e.g., `http://127.0.0.1:54321`.
    var baseURL: String
    /// The second listener on another loopback host, e.g., `http://127.0.0.2:54322`.
    var otherHostURL: String
}

/// A request on its way to the routes.
struct RouteRequest: Sendable {
    let recorded: RecordedRequest
    /// `http://` + the host the request came to (its `Host` header when that names a loopback
    /// host, else the listener's own address), so links keep the client on this listener.
    let origin: String
    let endpoints: Endpoints
    let segments: [String]

    init(recorded: RecordedRequest, listenerURL: String, endpoints: Endpoints) {
        self.recorded = recorded
        self.endpoints = endpoints
        self.segments = recorded.segments
        if let host = recorded.host, RouteRequest.isLoopback(host: host) {
            self.origin = "http://" + host
        } else {
            self.origin = listenerURL
        }
    }

    private static func isLoopback(host: String) -> Bool {
        let name = host.lowercased()
        return name.hasPrefix("127.") || name.hasPrefix("localhost") || name.hasPrefix("[::1]")
    }

    var method: String { recorded.method }
    var query: [String: String] { recorded.query }

    /// Matches `method` (GET also matches HEAD; `*` matches any) and a path `pattern` such as
    /// `/users/{login}/repos`; returns the captured segments by name.
    ///
    /// A pattern ending in `/**` also matches any deeper path.
    func match(_ method: String, _ pattern: String) -> [String: String]? {
        let methodMatches =
            method == "*" || self.method == method || (method == "GET" && self.method == "HEAD")
        guard methodMatches else { return nil }
        var parts = pattern.split(separator: "/").map(String.init)
        let allowsDeeper = parts.last == "**"
        if allowsDeeper { parts.removeLast() }
        guard segments.count == parts.count || (allowsDeeper && segments.count >= parts.count) else { return nil }
        var captures: [String: String] = [:]
        for (part, segment) in zip(parts, segments) {
            if part.hasPrefix("{") && part.hasSuffix("}") {
                captures[String(part.dropFirst().dropLast())] = segment
            } else if part != segment {
                return nil
            }
        }
        return captures
    }

    /// The query parameter `name` as an integer, if present and numeric.
    func queryInt(_ name: String) -> Int? { query[name].flatMap { Int($0) } }
}

/// A group of routes (one API, or one family of helpers).
///
/// Returns nil for requests it does not handle.
protocol RouteHandler: Sendable {
    func respond(to request: RouteRequest) -> Response?
}

/// Tries each group of routes in order; the first answer wins, else 404 `{"message":"Not Found"}`.
///
/// A new API is one file with a `RouteHandler`, added to `standard`.
struct Router: Sendable {
    let handlers: [any RouteHandler]

    /// A fresh set of routes for each server, so state such as the shortener's codes is per server.
    static var standard: Router {
        Router(handlers: [
            // First: it counts (and refuses once expired) the App tokens it issued, whatever the route.
            GitHubAppRoutes(),
            DeviceFlowRoutes(),
            PaginationLoopRoutes(),
            HostileJSONRoutes(),
            TerminalEscapeRoutes(),
            // Before the recorded answers: it serves its own data set's queries (and lets others through).
            GitHubSearchRoutes(),
            GitHubStargazerRoutes(),
            GitHubFixtureRoutes(),
            GitHubContentsRoutes(),
            GraphQLRoutes(),
            GitHubUserRoutes(),
            GitHubWriteRoutes(),
            CrossHostRoutes(),
            NumberedPageRoutes(),
            AuthRoutes(),
            EchoRoutes(),
            CommonRoutes(),
            FeedRoutes(),
            InstagramRoutes(),
            InstagramGraphRoutes(),
            OAuthRoutes(),
            ShortenerRoutes(),
            BitlyRoutes(),
            ShlinkRoutes(),
            YOURLSRoutes(),
            PluginRoutes(),
            PagingKindRoutes(),
            OpenAPIRoutes(),
            CacheRoutes(),
            CacheConformanceRoutes(),
            HostileRoutes(),
        ])
    }

    func respond(to request: RouteRequest) -> Response {
        for handler in handlers {
            // GitHub's answers in the shape of the API version asked for.
            if let response = handler.respond(to: request) { return GitHubVersions.adapt(response, for: request) }
        }
        return .notFound
    }
}
