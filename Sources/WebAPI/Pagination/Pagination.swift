import Platform

/// How an API links one page of a list to the next.
///
/// Every kind goes through one page iterator (`PageState`, and `api --paginate`), so `limit`,
/// the loop check (`PageHistory`) and the progress line work for all of them.
public enum Pagination: Sendable, Equatable {
    /// No pages: the payload is the whole list.
    case none
    /// RFC 8288 `Link: <…>; rel="next"` (GitHub).
    case linkHeader
    /// A URL inside the JSON body at this path (Instagram's `pagination.next_url`).
    case nextURL(path: [String])
    /// A page-number query parameter, starting at `first`; a page with no items ends the list,
    /// and so does, when `pages` names where the body holds the number of pages (Shlink's
    /// `shortUrls.pagination.pagesCount`), the page of that number, or a body without it.
    case pageParameter(name: String, first: Int, pages: [String]? = nil)
    /// An offset query parameter (`offset=0, 100, 200, …`), advanced by each page's item count.
    ///
    /// The list ends at an empty page, at a page shorter than the `limitParameter`'s value when
    /// the request names one (`size` is sent when it does not), or once the offset reaches the
    /// number at `total` in the body.
    case offset(parameter: String, limitParameter: String?, size: Int?, total: [String]?)
    /// A cursor read from the body at `path` and sent back as the query parameter `parameter`;
    /// a missing, null or empty cursor ends the list.
    case cursor(path: [String], parameter: String)
    /// A cursor read from the response header `header` and sent back as `parameter`; a missing
    /// or empty header ends the list.
    case headerCursor(header: String, parameter: String)

    /// The path of the one body value this kind reads (the next URL, the cursor, the total), if any.
    public var bodyPath: [String]? {
        switch self {
        case .nextURL(let path), .cursor(let path, _): path
        case .offset(_, _, _, let total), .pageParameter(_, _, let total): total
        case .none, .linkHeader, .headerCursor: nil
        }
    }

    /// `request` with the query parameters the first page needs: `size` for an offset
    /// pagination whose request names no limit.
    public func first(_ request: Request) -> Request {
        guard case .offset(_, let limitParameter?, let size?, _) = self,
            !request.query.contains(where: { $0.0 == limitParameter })
        else { return request }
        var first = request
        first.query.append((limitParameter, String(size)))
        return first
    }

    /// The request for the page after `response`, or nil at the end.
    ///
    /// A URL the server named keeps `response.url` in `linkedFrom`, so `APIClient`
    /// refuses it unless it keeps to `SchemeRule` (http(s) only; from https to http
    /// only towards loopback).
    ///
    /// - Parameters:
    ///   - response: the page just fetched.
    ///   - request: the request that fetched `response`.
    ///   - itemCount: how many items that page held (for `pageParameter` and `offset`).
    ///   - bodyValue: the value found at `bodyPath` (callers that already decoded the body pass
    ///     it; otherwise it is read here, from a body of at most `JSONPath.maxValues` values).
    /// - Returns: the next page's request, or nil when `response` was the last page.
    public func next(after response: Response, request: Request, itemCount: Int?, bodyValue: String?? = nil)
        -> Request?
    {
        let found: () -> String? = { bodyValue ?? bodyPath.flatMap { JSONPath.string(in: response.body, path: $0) } }
        switch self {
        case .none:
            return nil
        case .linkHeader:
            guard let url = LinkHeader.next(response.headers["link"]) else { return nil }
            var next = Request(request.method, url, headers: request.headers, timeout: request.timeout)
            next.linkedFrom = response.url
            return next
        case .nextURL:
            guard let url = found(), !url.isEmpty else { return nil }
            var next = Request(request.method, url, headers: request.headers, timeout: request.timeout)
            next.linkedFrom = response.url
            return next
        case .pageParameter(let name, let first, let pages):
            guard let itemCount, itemCount > 0 else { return nil }
            let current = request.query.last { $0.0 == name }.flatMap { Int($0.1) } ?? first
            // The number of pages, read from the body: the page it names is the last, and an
            // answer without it ends the list (the number comes from the request, not the answer).
            if pages != nil, !(found().flatMap { Int($0) }.map { current < $0 } ?? false) { return nil }
            // Past Int.max there is no next number: the same page is asked for again, which the
            // iteration's `PageHistory` refuses with an error (rather than a trap, or a list that
            // ends without saying so).
            let (following, overflow) = current.addingReportingOverflow(1)
            return Self.replacing(name, with: String(overflow ? current : following), in: request)
        case .offset(let name, let limitParameter, _, let total):
            guard let itemCount, itemCount > 0 else { return nil }
            let current = request.query.last { $0.0 == name }.flatMap { Int($0.1) } ?? 0
            if let limitParameter,
                let limit = request.query.last(where: { $0.0 == limitParameter }).flatMap({ Int($0.1) }),
                itemCount < limit
            {
                return nil
            }
            let (following, overflow) = current.addingReportingOverflow(itemCount)
            if total != nil, let text = found(), let count = Int(text), !overflow, following >= count { return nil }
            return Self.replacing(name, with: String(overflow ? current : following), in: request)
        case .cursor(_, let parameter):
            guard let cursor = found(), !cursor.isEmpty else { return nil }
            return Self.replacing(parameter, with: cursor, in: request)
        case .headerCursor(let header, let parameter):
            guard let cursor = response.headers[header], !cursor.isEmpty else { return nil }
            return Self.replacing(parameter, with: cursor, in: request)
        }
    }

    /// `request` with the query parameter `name` set to `value` (any earlier value removed).
    private static func replacing(_ name: String, with value: String, in request: Request) -> Request {
        var next = request
        next.query.removeAll { $0.0 == name }
        next.query.append((name, value))
        return next
    }
}
