import Foundation

/// How an API links one page of a list to the next.
public enum Pagination: Sendable, Equatable {
    /// No pages: the payload is the whole list.
    case none
    /// RFC 8288 `Link: <…>; rel="next"` (GitHub).
    case linkHeader
    /// A URL inside the JSON body at this path (Instagram's `pagination.next_url`).
    case nextURL(path: [String])
    /// A page-number query parameter, starting at `first`; a page with no items ends the list.
    case pageParameter(name: String, first: Int)

    /// The request for the page after `response`, or nil at the end.
    ///
    /// A URL the server named keeps `response.url` in `linkedFrom`, so `APIClient`
    /// refuses it unless it keeps to `SchemeRule` (http(s) only; from https to http
    /// only towards loopback).
    ///
    /// - Parameters:
    ///   - response: the page just fetched.
    ///   - request: the request that fetched `response`.
    ///   - itemCount: how many items that page held (for `pageParameter`).
    ///   - nextURL: for `nextURL`, the value found at the path (callers that
    ///     already decoded the body pass it; otherwise it is read here, from a body of at most
    ///     `JSONPath.maxValues` values).
    /// - Returns: the next page's request, or nil when `response` was the last page.
    public func next(after response: Response, request: Request, itemCount: Int?, nextURL: String?? = nil) -> Request? {
        switch self {
        case .none:
            return nil
        case .linkHeader:
            guard let url = LinkHeader.next(response.headers["link"]) else { return nil }
            var next = Request(request.method, url, headers: request.headers, timeout: request.timeout)
            next.linkedFrom = response.url
            return next
        case .nextURL(let path):
            let found = nextURL ?? JSONPath.string(in: response.body, path: path)
            guard let url = found, !url.isEmpty else { return nil }
            var next = Request(request.method, url, headers: request.headers, timeout: request.timeout)
            next.linkedFrom = response.url
            return next
        case .pageParameter(let name, let first):
            guard let itemCount, itemCount > 0 else { return nil }
            var next = request
            let current = next.query.last { $0.0 == name }.flatMap { Int($0.1) } ?? first
            // Past Int.max there is no next number: the same page is asked for again, which the
            // iteration's `PageHistory` refuses with an error (rather than a trap, or a list that
            // ends without saying so).
            let (following, overflow) = current.addingReportingOverflow(1)
            next.query.removeAll { $0.0 == name }
            next.query.append((name, String(overflow ? current : following)))
            return next
        }
    }
}
