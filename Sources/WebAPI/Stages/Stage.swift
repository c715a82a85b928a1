/// One step of the pipeline: it gets the exchange and the rest of the
/// pipeline, and returns the response (or throws `APIError`).
///
/// A stage runs on its caller's executor (`nonisolated(nonsending)`, SE-0461), as do `Next`
/// and `Pipeline.send`: a request's trip through the stages makes no executor hop (each was a
/// task switch and a look-up of the task's executor preference, ~0.2 k instructions); a stage
/// that calls an actor hops there and back as before.
public protocol Stage: Sendable {
    nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response

    /// The answer to `exchange` when this stage and those below it (`next`) give it without
    /// waiting for anything (a fresh cache hit): the stage does for it exactly what `handle`
    /// does, synchronously. Nil when the exchange has to go the asynchronous way
    /// (`handle`), and then nothing was done for it yet: the caller sends it through
    /// `handle` instead.
    ///
    /// By default nil: a stage that may wait, or that does not know how to answer at once.
    func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response?

    /// What `answerAtOnce` does; by default `.never`.
    var atOnce: AtOnce.Role { get }
}

extension Stage {
    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? { nil }
    public var atOnce: AtOnce.Role { .never }
}

/// The rest of the pipeline below a stage.
public struct Next: Sendable {
    let run: nonisolated(nonsending) @Sendable (Exchange) async throws -> Response
    /// Sends `exchange` through the remaining stages.
    public nonisolated(nonsending) func callAsFunction(_ exchange: Exchange) async throws -> Response {
        try await run(exchange)
    }
}

/// The rest of the pipeline below a stage, asked for an answer without waiting
/// (`Stage.answerAtOnce`).
public struct AtOnce: Sendable {
    let run: @Sendable (Exchange) throws -> Response?
    /// The remaining stages' answer to `exchange` without waiting, or nil (nothing was done).
    public func callAsFunction(_ exchange: Exchange) throws -> Response? {
        try run(exchange)
    }

    /// Thrown by a stage whose answer at once turned out to need a wait (a rate limit in a
    /// stored answer), after the stages below had answered.
    ///
    /// The caller sends the exchange again, the asynchronous way. No stage of this tree throws it
    /// for an answer the cache gives at once (a 2xx); it keeps such a stage's meaning if one ever did.
    struct Unfinished: Error {}

    /// What a stage's `answerAtOnce` does.
    public enum Role: Sendable {
        /// Always nil.
        case never
        /// Answers when the stages below answer at once (what it adds is done at once).
        case passes
        /// May answer itself (a cache).
        case answers
    }
}
