/// Turns a non-2xx final response into the one error type, with the API's
/// own message, unless the request asked to see every status (`Exchange.validatesStatus`).
public struct StatusStage: Stage {
    public let api: String?
    public let message: @Sendable (Response) -> String?
    public let kind: @Sendable (Response) -> APIError.Kind?
    /// The API's list of what was wrong, as JSON text (`ClientConfiguration.errorDetails`).
    public let details: @Sendable (Response) -> String?

    public init(
        api: String?, message: @escaping @Sendable (Response) -> String?,
        kind: @escaping @Sendable (Response) -> APIError.Kind? = { _ in nil },
        details: @escaping @Sendable (Response) -> String? = { _ in nil }
    ) {
        self.api = api
        self.message = message
        self.kind = kind
        self.details = details
    }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let response = try await next(exchange)
        guard exchange.validatesStatus, !response.isSuccess, response.status != 304 else { return response }
        var error = APIError.status(response, api: api, method: exchange.method, message: message(response))
        if let kind = kind(response), kind != error.kind {
            error = APIError(kind, error.message, status: error.status, url: error.url, api: api, body: error.body)
        }
        error.details = details(response)
        throw error
    }
}
