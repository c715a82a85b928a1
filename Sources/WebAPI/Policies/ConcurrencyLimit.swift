import Synchronization

/// At most `limit` holders at once: a counting semaphore whose waiters suspend (they hold no
/// thread) and leave the queue when their task is cancelled.
///
/// A client's cap on requests in flight (`ClientConfiguration.maxConcurrentRequests`, Bitly's
/// five connections per address) is one of these, held by `ConcurrencyLimitStage` around the
/// send, so every path to the network counts against it: direct calls, `apimacro.map`'s child
/// tasks and Python threads alike. Waiters are served first come, first served.
public final class ConcurrencyLimit: Sendable {
    /// How many may hold it at once (at least 1).
    public let limit: Int
    private let state: Mutex<State>

    private struct State {
        var holders = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Waiters whose task was cancelled before they queued (the cancellation handler ran first).
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
        var peak = 0
    }

    /// A limit of `limit` holders (less than 1 counts as 1).
    public init(limit: Int) {
        self.limit = max(1, limit)
        state = Mutex(State())
    }

    /// How many hold it now.
    public var holders: Int { state.withLock { $0.holders } }

    /// How many wait for a place now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// The most that ever held it at once.
    public var peak: Int { state.withLock { $0.peak } }

    /// Runs `body` holding a place, waiting (suspended) for one first when all are taken.
    ///
    /// Throws `CancellationError` when the task is cancelled while it waits; the place is given
    /// back however `body` ends.
    public func withPlace<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// Takes a place, waiting for one when all are taken.
    func acquire() async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if state.cancelledEarly.remove(id) != nil { return false }
                    guard state.holders < limit else {
                        state.waiters.append((id, continuation))
                        return nil
                    }
                    state.holders += 1
                    state.peak = max(state.peak, state.holders)
                    return true
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    // Not queued yet (or already given a place): a place given stays taken and
                    // is released by the holder as usual; one not yet asked for is refused.
                    state.cancelledEarly.insert(id)
                    return nil
                }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
        // A place was given: the id is no longer waiting, so a late cancellation must not refuse
        // a later waiter that happens to share nothing with it.
        state.withLock { _ = $0.cancelledEarly.remove(id) }
    }

    /// Gives a place back: to the first waiter, or to the pool.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiters.isEmpty else {
                state.holders -= 1
                return nil
            }
            // The place passes straight to the waiter: the count of holders stays the same.
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
