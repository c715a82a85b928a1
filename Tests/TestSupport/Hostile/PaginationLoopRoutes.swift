/// Pagination that goes round in a loop, for every way a client pages, so the clients' loop
/// check (`PageHistory`) stays covered.
///
/// Every page holds one item.
///
/// - `GET /hostile/loop/self`: `[{"id": 1}]` with `Link: <this very URL>; rel="next"` and
///   `Cache-Control: max-age=600`, so a client with a cache can have the page again without asking.
/// - `GET /hostile/loop/pair/{a|b}?spell=S[&…]`: `a` links (`Link: rel="next"`) to `b` with the
///   same query, `b` back to `a`, spelt as `S` says: `exact`, `fragment` (an empty `#` added),
///   `reordered` (the query's parameters in reverse order), `dots` (`/hostile/loop/./pair/a`),
///   `case` (scheme and host in upper case).
/// - `GET /hostile/loop/next-url/{a|b}[?…]`: the same pair, linked by `pagination.next_url` in a
///   `{"items": [{"id": …}], "pagination": {"next_url": …}}` body.
/// - `GET /hostile/loop/pages[?page=N]`: `{"items": [{"id": N}]}` for any N: a page-number list
///   that never runs dry.
/// - `GET /instagram/v1/users/loop/media/recent[?max_id=2]`: Instagram v1 pages; the second's
///   `next_url` leads back to the first. Both carry the request's `access_token` and `count`, as
///   Instagram's next links do.
/// - `POST /graphql` for `repository(owner: "hostile-loop", name: N)` (the variables `owner` and
///   `name`): a connection `repository.issues` whose `endCursor` goes `A, B, A, B…`
///   (`N = "alternate"`) or is always `A` (`N = "repeat"`); `hasNextPage` is always true.
struct PaginationLoopRoutes: RouteHandler {
    static let graphQLOwner = "hostile-loop"

    func respond(to request: RouteRequest) -> Response? {
        if request.match("GET", "/hostile/loop/self") != nil {
            var response = Response.json(.array([.object([("id", .int(1))])]))
            response.setHeader("Link", "<\(request.origin + request.recorded.uri)>; rel=\"next\"")
            response.setHeader("Cache-Control", "max-age=600")
            return response
        }
        if let page = request.match("GET", "/hostile/loop/pair/{page}")?["page"] {
            var response = Response.json(.array([.object([("id", .int(page == "a" ? 1 : 2))])]))
            response.setHeader(
                "Link", "<\(pairLink(from: page, request, spell: request.query["spell"]))>; rel=\"next\"")
            return response
        }
        if let page = request.match("GET", "/hostile/loop/next-url/{page}")?["page"] {
            let next = request.origin + "/hostile/loop/next-url/" + (page == "a" ? "b" : "a") + query(request)
            return .json(
                .object([
                    ("items", .array([.object([("id", .int(page == "a" ? 1 : 2))])])),
                    ("pagination", .object([("next_url", .string(next))])),
                ]))
        }
        if request.match("GET", "/hostile/loop/pages") != nil {
            return .json(.object([("items", .array([.object([("id", .string(request.query["page"] ?? ""))])]))]))
        }
        if request.match("GET", InstagramRoutes.prefix + "/users/loop/media/recent") != nil {
            return instagramPage(request)
        }
        if request.match("POST", "/graphql") != nil { return graphQLPage(request) }
        return nil
    }

    /// `?` and the request's own query, or "".
    private func query(_ request: RouteRequest) -> String {
        request.recorded.rawQuery.isEmpty ? "" : "?" + request.recorded.rawQuery
    }

    /// The next link of pair page `page`: `b` from `a`, and `a` (spelt as `spell` says) from `b`.
    private func pairLink(from page: String, _ request: RouteRequest, spell: String?) -> String {
        guard page == "b" else { return request.origin + "/hostile/loop/pair/b" + query(request) }
        switch spell {
        case "fragment":
            return request.origin + "/hostile/loop/pair/a" + query(request) + "#"
        case "reordered":
            let reversed = request.recorded.rawQuery.split(separator: "&").reversed().joined(separator: "&")
            return request.origin + "/hostile/loop/pair/a?" + reversed
        case "dots":
            return request.origin + "/hostile/loop/./pair/a" + query(request)
        case "case":
            return request.origin.uppercased() + "/hostile/loop/pair/a" + query(request)
        default:
            return request.origin + "/hostile/loop/pair/a" + query(request)
        }
    }

    private func instagramPage(_ request: RouteRequest) -> Response {
        let second = request.query["max_id"] == "2"
        var next = request.origin + InstagramRoutes.prefix + "/users/loop/media/recent?access_token="
        next += URLCoding.percentEncode(request.query["access_token"] ?? "")
        if let count = request.query["count"] { next += "&count=" + URLCoding.percentEncode(count) }
        if !second { next += "&max_id=2" }
        return .json(
            .object([
                ("meta", .object([("code", .int(200))])),
                ("data", .array([.object([("id", .string(second ? "2" : "1"))])])),
                ("pagination", .object([("next_url", .string(next))])),
            ]))
    }

    private func graphQLPage(_ request: RouteRequest) -> Response? {
        guard let document = try? JSON(parsing: request.recorded.body), let variables = document["variables"],
            variables["owner"]?.stringValue == Self.graphQLOwner
        else { return nil }
        let sent = variables["cursor"]?.stringValue
        let cursor = variables["name"]?.stringValue == "alternate" && sent == "A" ? "B" : "A"
        let connection = JSON.object([
            ("pageInfo", .object([("hasNextPage", .bool(true)), ("endCursor", .string(cursor))])),
            ("nodes", .array([.object([("number", .int(sent == nil ? 1 : sent == "A" ? 2 : 3))])])),
        ])
        return .json(.object([("data", .object([("repository", .object([("issues", connection)]))]))]))
    }
}
