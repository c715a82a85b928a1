/// Shows every response that passes, errors included, to what a client declared it watches
/// (`ClientConfiguration.watch`: GitHub reads when its token expires), before the stages above
/// turn an error status into an `APIError`.
public struct ResponseWatchStage: Stage {
    /// What sees each response.
    public let watch: @Sendable (Response) -> Void

    public init(watch: @escaping @Sendable (Response) -> Void) { self.watch = watch }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let response = try await next(exchange)
        watch(response)
        return response
    }

    public var atOnce: AtOnce.Role { .passes }

    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? {
        guard let response = try next(exchange) else { return nil }
        watch(response)
        return response
    }
}
