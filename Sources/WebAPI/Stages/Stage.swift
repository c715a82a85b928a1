/// One step of the pipeline: it gets the exchange and the rest of the
/// pipeline, and returns the response (or throws `APIError`).
public protocol Stage: Sendable {
    func handle(_ exchange: Exchange, next: Next) async throws -> Response
}

/// The rest of the pipeline below a stage.
public struct Next: Sendable {
    let run: @Sendable (Exchange) async throws -> Response
    /// Sends `exchange` through the remaining stages.
    public func callAsFunction(_ exchange: Exchange) async throws -> Response { try await run(exchange) }
}
