/// GitHub-style page arithmetic and `Link` headers for a list of `total` items.
struct Pagination {
    static let defaultPerPage = 30
    static let maximumPerPage = 100

    let page: Int
    let perPage: Int
    let total: Int

    /// Reads `page` (default 1) and `per_page` (default 30, at most 100) from the request.
    init(request: RouteRequest, total: Int) {
        let requested = request.queryInt("per_page") ?? Pagination.defaultPerPage
        perPage = requested < 1 ? Pagination.defaultPerPage : min(requested, Pagination.maximumPerPage)
        page = max(1, request.queryInt("page") ?? 1)
        self.total = total
    }

    /// The last page number (1 for an empty list).
    var lastPage: Int { max(1, (total + perPage - 1) / perPage) }

    /// The 0-based item indices on this page (empty past the end).
    var indices: Range<Int> {
        let start = min(total, (page - 1) * perPage)
        return start..<min(total, start + perPage)
    }

    /// GitHub's `Link` value: `<URL>; rel="next", <URL>; rel="last"` on the first page; prev, next,
    /// last, first in between; prev, first on the last page; nil when everything fits on one page.
    ///
    /// URLs are `origin` + the request's path + its other query parameters + `page=N`.
    func linkHeader(for request: RouteRequest) -> String? {
        guard lastPage > 1 || page > 1 else { return nil }
        var links: [(String, Int)] = []
        if page > 1 { links.append(("prev", min(page - 1, lastPage))) }
        if page < lastPage {
            links.append(("next", page + 1))
            links.append(("last", lastPage))
        }
        if page > 1 { links.append(("first", 1)) }
        return links.map { "<\(Pagination.url(for: request, page: $0.1))>; rel=\"\($0.0)\"" }
            .joined(separator: ", ")
    }

    /// The request's URL on `origin` with `page` replaced by `page`.
    static func url(for request: RouteRequest, page: Int) -> String {
        let rawPath = String(request.recorded.uri.split(separator: "?", maxSplits: 1).first ?? "")
        let kept = request.recorded.rawQuery.split(separator: "&").filter { item in
            let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return URLCoding.percentDecode(name, plusAsSpace: true) != "page"
        }
        let query = (kept.map(String.init) + ["page=\(page)"]).joined(separator: "&")
        return request.origin + rawPath + "?" + query
    }

    /// A JSON array answer for this page, with its `Link` header.
    func response(items: [JSON], request: RouteRequest) -> Response {
        var response = Response.json(.array(items))
        if let link = linkHeader(for: request) { response.setHeader("Link", link) }
        return response
    }
}
