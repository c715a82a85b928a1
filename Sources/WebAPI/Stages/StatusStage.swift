import Platform

/// Turns a non-2xx final response into the one error type, with the API's
/// own message, unless the request asked to see every status (`Exchange.validatesStatus`).
public struct StatusStage: Stage {
    public let api: String?
    public let message: @Sendable (Response) -> String?
    public let kind: @Sendable (Response) -> APIError.Kind?
    /// The facts of the error body the exception carries besides its message.
    public let details: @Sendable (Response) -> [APIError.Detail]
    /// For a rate limit the status alone does not show (an error code in the body): seconds
    /// until calls are allowed again, when the answer says.
    public let retryAfter: @Sendable (Response) -> Double?
    /// The API's list of what was wrong, as JSON text (`ClientConfiguration.errorList`).
    public let errorList: @Sendable (Response) -> String?

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        try checked(try await next(exchange), exchange)
    }

    public var atOnce: AtOnce.Role { .passes }

    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? {
        try next(exchange).map { try checked($0, exchange) }
    }

    /// `response`, or the error it is for `exchange`.
    private func checked(_ response: Response, _ exchange: Exchange) throws -> Response {
        guard exchange.validatesStatus, !response.isSuccess, response.status != 304 else { return response }
        var error = APIError.status(response, api: api, method: exchange.method, message: message(response))
        let kind = kind(response) ?? error.kind
        let wait =
            kind == .rateLimited ? retryAfter(response).map { min(max(0, $0), RateLimitPolicy.longestWait) } : nil
        if kind != error.kind || wait != nil {
            error = APIError(
                kind, error.message, status: error.status, url: error.url, api: api, body: error.body,
                resetAt: wait.map { Int(Date().timeIntervalSince1970 + $0) }, retryAfter: wait)
        }
        error.details = details(response)
        error.errorList = errorList(response)
        throw error
    }
}
