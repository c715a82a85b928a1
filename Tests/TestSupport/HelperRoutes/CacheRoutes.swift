import Synchronization

/// Routes for the HTTP cache's tests.
///
/// Every answer is JSON; `serial` counts the requests that route has answered
/// with a body, so a test can tell a cached answer (same serial) from a fresh
/// one.
///
/// - `GET /cache/etag/{name}`: a stable body (so the server's ETag matches and a
///   conditional request gets 304); no freshness, so a cache revalidates every time.
/// - `GET /cache/last-modified`: `Last-Modified` only counts; `If-Modified-Since` equal to it gets 304.
/// - `GET /cache/max-age/{seconds}`: `Cache-Control: max-age=seconds`, body with a serial.
/// - `GET /cache/no-store`: `Cache-Control: no-store`, body with a serial.
/// - `GET /cache/poll/{seconds}`: `X-Poll-Interval: seconds` (as GitHub's events), body with a serial.
/// - `GET /cache/vary`: `Vary: Accept-Language`, the body names the language asked for.
/// - `GET /cache/fresh/users/{login}`: the user `GET /users/{login}` answers (about 1.3 KB, built
///   from the recorded `github/octokit-get-repository.json`), with `Cache-Control: private,
///   max-age=3600`: hits on a body of a real API's size (`Benchmarks/per_request.sh`).
/// Faults for stale-if-error come from `TestServer.inject` on these paths.
struct CacheRoutes: RouteHandler {
    static let lastModified = "Tue, 15 Nov 1994 12:45:26 GMT"
    private final class Serials: Sendable {
        let counts = Mutex<[String: Int]>([:])
    }
    private let serials = Serials()

    private func next(_ key: String) -> Int {
        serials.counts.withLock { serials in
            serials[key, default: 0] += 1
            return serials[key, default: 0]
        }
    }

    func respond(to request: RouteRequest) -> Response? {
        if let name = request.match("GET", "/cache/etag/{name}")?["name"] {
            return .json(.object([("name", .string(name)), ("kind", .string("etag"))]))
        }
        if request.match("GET", "/cache/last-modified") != nil {
            if request.recorded.header("if-modified-since") == CacheRoutes.lastModified {
                return Response(status: 304, headers: [("Last-Modified", CacheRoutes.lastModified)])
            }
            return .json(
                .object([("kind", .string("last-modified")), ("serial", .int(next("last-modified")))]),
                headers: [("Last-Modified", CacheRoutes.lastModified)])
        }
        if let seconds = request.match("GET", "/cache/max-age/{seconds}")?["seconds"] {
            return .json(
                .object([("kind", .string("max-age")), ("serial", .int(next("max-age/" + seconds)))]),
                headers: [("Cache-Control", "private, max-age=\(seconds)")])
        }
        if let seconds = request.match("GET", "/cache/poll/{seconds}")?["seconds"] {
            return .json(
                .object([("kind", .string("poll")), ("serial", .int(next("poll/" + seconds)))]),
                headers: [("X-Poll-Interval", seconds)])
        }
        if request.match("GET", "/cache/no-store") != nil {
            return .json(
                .object([("kind", .string("no-store")), ("serial", .int(next("no-store")))]),
                headers: [("Cache-Control", "no-store")])
        }
        if let login = request.match("GET", "/cache/fresh/users/{login}")?["login"] {
            guard let profile = GitHubProfile.named(login),
                let user = try? GitHubObjects.fullUser(profile, origin: request.origin)
            else { return .notFound }
            return .json(user, headers: [("Cache-Control", "private, max-age=3600")])
        }
        if request.match("GET", "/cache/vary") != nil {
            let language = request.recorded.header("accept-language") ?? "none"
            return .json(
                .object([("language", .string(language)), ("serial", .int(next("vary")))]),
                headers: [("Vary", "Accept-Language"), ("Cache-Control", "max-age=600")])
        }
        return nil
    }
}
