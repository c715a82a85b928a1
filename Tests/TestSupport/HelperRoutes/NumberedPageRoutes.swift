import Synchronization

/// `GET /pages/numbered?page=N&pages=P`: P pages (default 5) of 3 items each, `{"id": I}` with I
/// from 1, linked by GitHub's `Link: <…>; rel="next"` (every other query parameter kept, so a
/// `tag` tells loops apart), each `Cache-Control: max-age=600`: for the page iterator's fetch ahead.
///
/// `fail=K&status=S` makes page K answer S (`{"message": "…"}`); `hold=K` holds page K's answer
/// for an hour (a fetch that must be cancelled, not waited for). `once=K` makes page K answer
/// 200 with an object, not a list (its `Link` kept), the first time it is asked for (per `tag`),
/// and its items after that.
struct NumberedPageRoutes: RouteHandler {
    static let perPage = 3
    private final class Served: Sendable {
        let counts = Mutex<[String: Int]>([:])
    }
    private let served = Served()

    func respond(to request: RouteRequest) -> Response? {
        guard request.match("GET", "/pages/numbered") != nil else { return nil }
        let page = max(1, request.queryInt("page") ?? 1)
        let pages = max(1, request.queryInt("pages") ?? 5)
        if page == request.queryInt("fail") {
            return .json(
                .object([("message", .string("page \(page) fails on purpose"))]),
                status: request.queryInt("status") ?? 500)
        }
        let first = (page - 1) * Self.perPage
        var response = Response.json(
            .array((first..<first + Self.perPage).map { .object([("id", .int($0 + 1))]) }))
        if page == request.queryInt("once") {
            let key = "\(request.query["tag"] ?? "")/\(page)"
            let times = served.counts.withLock { counts in
                counts[key, default: 0] += 1
                return counts[key, default: 0]
            }
            if times == 1 { response = .json(.object([("id", .int(0))])) }
        }
        if page < pages {
            response.setHeader("Link", "<\(Pagination.url(for: request, page: page + 1))>; rel=\"next\"")
        }
        response.setHeader("Cache-Control", "max-age=600")
        if page == request.queryInt("hold") { response.delayMilliseconds = 3_600_000 }
        return response
    }
}
