import Synchronization

/// One piece of async work at a time, shared: while it runs, every other caller waits for its
/// result instead of starting the same work again (a token being fetched while ten requests of
/// a `map` ask for it).
public final class SingleFlight<Value: Sendable>: Sendable {
    private enum State {
        case idle
        case running([CheckedContinuation<Value, any Error>])
    }
    private let state = Mutex<State>(.idle)

    public init() {}

    /// The result of `work`, run now, or of the run already in progress.
    public func run(_ work: @Sendable () async throws -> Value) async throws -> Value {
        while true {
            let leads = state.withLock { state -> Bool in
                guard case .idle = state else { return false }
                state = .running([])
                return true
            }
            if leads { return try await lead(work) }
            do {
                return try await join()
            } catch is SingleFlightRetry {
                continue
            }
        }
    }

    /// Runs `work` and hands its result to everyone who joined meanwhile.
    private func lead(_ work: @Sendable () async throws -> Value) async throws -> Value {
        let result: Result<Value, any Error>
        do {
            result = .success(try await work())
        } catch {
            result = .failure(error)
        }
        let waiting = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            defer { state = .idle }
            if case .running(let waiting) = state { return waiting }
            return []
        }
        for continuation in waiting { continuation.resume(with: result) }
        return try result.get()
    }

    /// Waits for the run in progress; `SingleFlightRetry` when it ended before this joined.
    private func join() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let joined = state.withLock { state -> Bool in
                guard case .running(var waiting) = state else { return false }
                waiting.append(continuation)
                state = .running(waiting)
                return true
            }
            if !joined { continuation.resume(throwing: SingleFlightRetry()) }
        }
    }

    /// Thrown to a caller that arrived as a run ended; `run` never lets it out.
    private struct SingleFlightRetry: Error {}
}
