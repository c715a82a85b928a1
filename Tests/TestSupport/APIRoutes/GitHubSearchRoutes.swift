import Foundation
import Synchronization

/// `GET /search/{kind}` as GitHub answers it (https://docs.github.com/rest/search/search):
/// `total_count`, `incomplete_results` and `items`, `per_page` (at most 100) and `page`, `sort`
/// and `order`, `Link` headers, and GitHub's 422 past the first 1,000 results.
///
/// Its own rate bucket, `x-ratelimit-resource: search`, holds `searchLimit` requests per window
/// of `searchWindow` seconds (GitHub: 30 a minute; tests use short windows) and answers a
/// request past it with GitHub's 403.
///
/// The data: for a query containing `bulk`, 2,500 issues created over two years (some
/// hundreds within one day, so halving has to go deep); `medium`, 1,200 over a year (the
/// smallest split, for the example's cassette); `samesecond`, 1,100 created in one second (no
/// date range can split them); `slowpoke` sets `incomplete_results`; anything else has 3
/// results (except an issues query without those words, which the recorded octokit answer of
/// `GitHubFixtureRoutes` serves). A `created:` qualifier in the query filters them (`A..B`,
/// `>=A`, `<=B`, `>A`, `<B`, a date or a time in UTC).
final class GitHubSearchRoutes: RouteHandler, Sendable {
    /// The requests the search bucket allows per window, and the window in seconds.
    private let bucket = Mutex<(limit: Int, window: Int, reset: Int, used: Int, refused: Int)>((30, 60, 0, 0, 0))

    func configure(limit: Int, window: Int) {
        bucket.withLock { $0 = (limit, window, 0, 0, 0) }
    }

    /// Requests the bucket refused.
    var refused: Int { bucket.withLock { $0.refused } }

    /// The items of the data set for `query`, each an id and a creation time.
    static func data(for query: String) -> [(id: Int, created: Int)] {
        let base = 1_600_000_000  // 2020-09-13
        if query.contains("bulk") {
            // 2,000 spread over two years, and 500 within one day.
            return (0..<2000).map { (40_000_000 + $0, base + $0 * 31_536) }
                + (0..<500).map { (41_000_000 + $0, base + 400 * 86_400 + $0 * 150) }
        }
        if query.contains("samesecond") { return (0..<1100).map { (42_000_000 + $0, base) } }
        // 1,200 over a year: the smallest split, for the example's cassette.
        if query.contains("medium") { return (0..<1200).map { (44_000_000 + $0, base + $0 * 26_280) } }
        return (0..<3).map { (43_000_000 + $0, base + $0 * 86_400) }
    }

    func respond(to request: RouteRequest) -> Response? {
        guard let captures = request.match("GET", "/search/{kind}"), let kind = captures["kind"] else { return nil }
        let query = request.query["q"] ?? ""
        guard kind != "issues" || ["bulk", "samesecond", "slowpoke", "medium"].contains(where: query.contains) else {
            return nil
        }
        let now = ServerCore.now()
        let (allowed, remaining, reset, limit) = bucket.withLock { bucket -> (Bool, Int, Int, Int) in
            if now >= bucket.reset {
                bucket.reset = now + bucket.window
                bucket.used = 0
            }
            let allowed = bucket.used < bucket.limit
            if allowed { bucket.used += 1 } else { bucket.refused += 1 }
            return (allowed, bucket.limit - bucket.used, bucket.reset, bucket.limit)
        }
        let headers = [
            ("x-ratelimit-limit", String(limit)), ("x-ratelimit-remaining", String(remaining)),
            ("x-ratelimit-reset", String(reset)), ("x-ratelimit-used", String(limit - remaining)),
            ("x-ratelimit-resource", "search"),
        ]
        guard allowed else {
            return .json(
                .object([
                    ("message", .string("API rate limit exceeded for user ID 1.")),
                    (
                        "documentation_url",
                        .string("https://docs.github.com/rest/overview/rate-limits-for-the-rest-api")
                    ),
                    ("status", .string("403")),
                ]), status: 403, headers: headers)
        }
        guard !query.isEmpty else {
            return GitHubWriteRoutes.validationFailed(
                resource: "Search", field: "q", code: "missing", documentation: "/search/search")
        }
        let perPage = min(100, max(1, request.queryInt("per_page") ?? 30))
        let page = max(1, request.queryInt("page") ?? 1)
        // GitHub: "Only the first 1000 search results are available".
        guard page * perPage <= 1000 else {
            return .json(
                .object([
                    ("message", .string("Only the first 1000 search results are available")),
                    ("documentation_url", .string("https://docs.github.com/v3/search/")),
                    ("status", .string("422")),
                ]), status: 422, headers: headers)
        }
        var items = Self.data(for: query)
        if let range = Self.createdRange(in: query) { items = items.filter { range.contains($0.created) } }
        if request.query["sort"] == "created" {
            items.sort { $0.created == $1.created ? $0.id < $1.id : $0.created < $1.created }
            if request.query["order"] == "desc" { items.reverse() }
        }
        let start = (page - 1) * perPage
        let shown = items.dropFirst(start).prefix(perPage)
        var links: [String] = []
        let reachable = min(items.count, 1000)
        if start + perPage < reachable {
            var parts = URLComponents()
            parts.queryItems =
                request.query.filter { $0.key != "page" }.sorted { $0.key < $1.key }.map {
                    URLQueryItem(name: $0.key, value: $0.value)
                } + [URLQueryItem(name: "page", value: String(page + 1))]
            links.append("<\(request.origin)/search/\(kind)?\(parts.percentEncodedQuery ?? "")>; rel=\"next\"")
        }
        let body = JSON.object([
            ("total_count", .int(items.count)),
            ("incomplete_results", .bool(query.contains("slowpoke"))),
            (
                "items",
                .array(
                    shown.map { item in
                        Self.item(
                            .object([
                                ("id", .int(item.id)), ("number", .int(item.id - 39_999_999)),
                                ("title", .string("result \(item.id)")),
                                ("created_at", .string(GitHubAppRoutes.iso8601(item.created))),
                                ("url", .string("\(request.origin)/repos/octo/bulk/issues/\(item.id)")),
                            ]), kind: kind, origin: request.origin)
                    })
            ),
        ])
        return .json(body, headers: headers + (links.isEmpty ? [] : [("Link", links.joined(separator: ", "))]))
    }

    /// A result with the members its kind has in GitHub's 2022-11-28 shape that 2026-03-10
    /// removed (`GitHubVersions`): an issue's singular `assignee` (beside `assignees`); a code or
    /// commit result's `repository`, with `has_downloads`.
    static func item(_ base: JSON, kind: String, origin: String) -> JSON {
        switch kind {
        case "issues":
            return base.setting("assignee", .null).setting("assignees", .array([]))
        case "code", "commits":
            return base.setting(
                "repository",
                .object([
                    ("id", .int(1_296_269)), ("name", .string("bulk")), ("full_name", .string("octo/bulk")),
                    ("url", .string("\(origin)/repos/octo/bulk")), ("has_downloads", .bool(true)),
                ]))
        default:
            return base
        }
    }

    /// The `created:` qualifier of `query` as a closed range of epoch seconds, if there is one.
    static func createdRange(in query: String) -> ClosedRange<Int>? {
        guard let token = query.split(separator: " ").first(where: { $0.hasPrefix("created:") }) else { return nil }
        let text = String(token.dropFirst("created:".count))
        if let dots = text.range(of: "..") {
            guard let from = time(String(text[..<dots.lowerBound]), end: false),
                let to = time(String(text[dots.upperBound...]), end: true)
            else { return 0...0 }
            return from...max(from, to)
        }
        for (prefix, isFrom, strict) in [
            (">=", true, false), ("<=", false, false), (">", true, true), ("<", false, true),
        ]
        where text.hasPrefix(prefix) {
            guard let value = time(String(text.dropFirst(prefix.count)), end: !isFrom) else { return 0...0 }
            return isFrom ? (value + (strict ? 1 : 0))...Int.max : Int.min...(value - (strict ? 1 : 0))
        }
        guard let from = time(text, end: false), let to = time(text, end: true) else { return 0...0 }
        return from...to
    }

    /// `2020-01-31T23:59:59Z`, or a day (its first or last second, by `end`).
    static func time(_ text: String, end: Bool) -> Int? {
        if text == "*" { return end ? Int.max : Int.min }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        if let date = formatter.date(from: text) { return Int(date.timeIntervalSince1970) }
        formatter.dateFormat = "yyyy-MM-dd"
        guard let day = formatter.date(from: text) else { return nil }
        return Int(day.timeIntervalSince1970) + (end ? 86_399 : 0)
    }
}

extension TestServer {
    /// The search bucket: `limit` requests per `window` seconds (GitHub: 30 a minute).
    public func setSearchLimit(_ limit: Int, window: Int) { core.gitHubSearch?.configure(limit: limit, window: window) }

    /// Search requests the bucket refused with GitHub's 403.
    public var searchRequestsRefused: Int { core.gitHubSearch?.refused ?? 0 }
}
