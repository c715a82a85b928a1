/// Turns a non-2xx final response into the one error type, with the API's
/// own message, unless the request asked to see every status.
public struct StatusStage: Stage {
    public let api: String?
    public let message: @Sendable (Response) -> String?
    public let validates: Bool

    public init(api: String?, validates: Bool = true, message: @escaping @Sendable (Response) -> String?) {
        self.api = api
        self.validates = validates
        self.message = message
    }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let response = try await next(exchange)
        guard validates, !response.isSuccess, response.status != 304 else { return response }
        throw APIError.status(response, api: api, method: exchange.method, message: message(response))
    }
}
