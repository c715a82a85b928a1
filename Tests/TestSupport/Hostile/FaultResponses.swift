/// The answers of the faults that replace a route's answer.
enum FaultResponses {
    static let rateLimitBody =
        #"{"message":"API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}"#

    static let secondaryRateLimitBody =
        #"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}"#

    /// The replacement answer for `.status`, `.rateLimited` and `.forbiddenRateLimit`; nil for the
    /// faults that keep the route's answer (`.delay`, `.truncated`) or send none (`.reset`).
    static func response(for fault: Fault) -> Response? {
        switch fault {
        case .status(let status, let body, let headers):
            var response =
                body.map { Response.text($0, contentType: Response.jsonContentType, status: status) }
                ?? Response.message(Response.reasonPhrase(status), status: status)
            for (name, value) in headers { response.setHeader(name, value) }
            return response
        case .rateLimited(let retryAfter):
            var response = Response.text(secondaryRateLimitBody, contentType: Response.jsonContentType, status: 429)
            if let retryAfter { response.setHeader("retry-after", String(retryAfter)) }
            response.headers += exhaustedHeaders(resetIn: retryAfter ?? 60)
            return response
        case .forbiddenRateLimit(let resetIn):
            var response = Response.text(rateLimitBody, contentType: Response.jsonContentType, status: 403)
            response.headers += exhaustedHeaders(resetIn: resetIn)
            return response
        case .reset, .delay, .truncated, .closeAfterAnswer:
            return nil
        }
    }

    private static func exhaustedHeaders(resetIn: Int) -> [(String, String)] {
        [
            ("x-ratelimit-limit", String(ServerCore.rateLimit)),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", String(ServerCore.now() + resetIn)),
            ("x-ratelimit-used", String(ServerCore.rateLimit)),
            ("x-ratelimit-resource", "core"),
        ]
    }
}
