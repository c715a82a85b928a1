/// One step of the pipeline: it gets the exchange and the rest of the
/// pipeline, and returns the response (or throws `APIError`).
///
/// A stage runs on its caller's executor (`nonisolated(nonsending)`, SE-0461), as do `Next`
/// and `Pipeline.send`: a request's trip through the stages makes no executor hop (each was a
/// task switch and a look-up of the task's executor preference, ~0.2 k instructions); a stage
/// that calls an actor hops there and back as before.
public protocol Stage: Sendable {
    nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response
}

/// The rest of the pipeline below a stage.
public struct Next: Sendable {
    let run: nonisolated(nonsending) @Sendable (Exchange) async throws -> Response
    /// Sends `exchange` through the remaining stages.
    public nonisolated(nonsending) func callAsFunction(_ exchange: Exchange) async throws -> Response {
        try await run(exchange)
    }
}
