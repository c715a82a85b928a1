import Foundation
import Synchronization
import TestSupport
import Testing

@testable import WebAPI

/// The secondary-limit pace shared through a real `redis-server`: two stages with their own
/// pacers, shared state and governor, as two processes with one token would have.
@Suite("the secondary-limit pace shared through Redis", .serialized)
struct SharedPaceTests {
    /// Opens once; waiters before and after go on.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        func wait() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// One "process": its own pacer and shared state on `redis`, GitHub-like rules.
    static func process(
        _ redis: RedisServer, maxWait: Double, shared: Bool = true, limits: SecondaryLimits = SharedPaceTests.limits,
        token: String = "ghp_sharedPaceToken"
    ) throws -> PaceStage {
        let state = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "APIMACRO_SHARED_STATE"), timeout: 30,
            warn: { _ in })
        let slot = CredentialSlot(.bearer(Secret(token)))
        let governor = GovernorStage(
            shared: state, limits: GovernorLimits(), slot: slot, baseURL: "https://api.example.com", maxWait: maxWait,
            api: "github")
        return PaceStage(
            pacer: SecondaryPacer(limits: limits), slot: slot, maxWait: maxWait, api: "github",
            log: ExchangeLog(logger: nil), governor: shared ? governor : nil)
    }

    static let post = Exchange(
        method: "POST", url: "https://api.example.com/repos/o/r/issues", headers: Headers([]), body: [], timeout: 30)
    static let get = Exchange(
        method: "GET", url: "https://api.example.com/users/octocat", headers: Headers([]), body: [], timeout: 30)

    /// What reached the network.
    final class Counter: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// A `Next` that counts what it sends and answers `answer`.
    static func network(
        _ sent: Counter, answer: Response = Response(status: 201, headers: Headers([]), body: [], url: "")
    ) -> Next {
        Next { _ in
            sent.add()
            return answer
        }
    }

    @Test("a write in flight in one process holds the other's, then the gap after it; a secondary answer holds both")
    func acrossProcesses() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let first = try Self.process(redis, maxWait: 60)
        let entered = Gate()
        let release = Gate()
        let inFlight = Task {
            try await first.handle(
                Self.post,
                next: Next { _ in
                    entered.open()
                    await release.wait()
                    return Response(status: 201, headers: Headers([]), body: [], url: "")
                })
        }
        await entered.wait()
        // The first process's write is in flight: the second's may not go (its wait is past
        // APIMACRO_MAX_WAIT), and nothing is sent.
        let sent = Counter()
        let second = try Self.process(redis, maxWait: 0.01)
        let held = await apiError { _ = try await second.handle(Self.post, next: Self.network(sent)) }
        #expect(held?.kind == .rateLimited && held?.isSecondary == true, "\(String(describing: held))")
        #expect(held?.message.contains("shared by every apimacro process") == true)
        #expect(sent.value == 0)
        // A process without shared state sends at once (the control).
        let alone = try Self.process(redis, maxWait: 0.01, shared: false)
        _ = try await alone.handle(Self.post, next: Self.network(sent))
        #expect(sent.value == 1)
        release.open()
        _ = try await inFlight.value
        // Answered: the next write waits for the gap (10 minutes in these rules, so no machine
        // is slow enough to see it pass), past APIMACRO_MAX_WAIT: refused unsent.
        let gap = await apiError {
            _ = try await Self.process(redis, maxWait: 5).handle(Self.post, next: Self.network(sent))
        }
        #expect(gap?.isSecondary == true && sent.value == 1, "\(String(describing: gap))")
        // GitHub's secondary answer with Retry-After: 30 in one process holds every request of
        // the token in the others, reads too.
        let secondary = Response(
            status: 403, headers: Headers([("retry-after", "30")]),
            body: Array(#"{"message":"You have exceeded a secondary rate limit."}"#.utf8), url: "")
        _ = try await Self.process(redis, maxWait: 60).handle(Self.get, next: Self.network(sent, answer: secondary))
        let afterAnswer = await apiError {
            _ = try await Self.process(redis, maxWait: 5).handle(Self.get, next: Self.network(sent))
        }
        #expect(afterAnswer?.isSecondary == true && sent.value == 2, "nothing more was sent")
    }

    @Test("content-creating sends count across processes: one an hour, the second process's waits")
    func creationWindow() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        var hourly = Self.limits
        hourly.isMutating = { _ in false }
        hourly.contentCreation = [.init(requests: 1, seconds: 3600)]
        let sent = Counter()
        _ = try await Self.process(redis, maxWait: 5, limits: hourly).handle(Self.post, next: Self.network(sent))
        let second = await apiError {
            _ = try await Self.process(redis, maxWait: 5, limits: hourly).handle(Self.post, next: Self.network(sent))
        }
        #expect(second?.isSecondary == true && sent.value == 1)
        // Another token has its own window.
        _ = try await Self.process(redis, maxWait: 5, limits: hourly, token: "ghp_otherToken").handle(
            Self.post, next: Self.network(sent))
        #expect(sent.value == 2)
    }

    static let limits = SecondaryLimits(
        maxInFlight: 100, writeGap: 600, contentCreation: [.init(requests: 80, seconds: 60)], defaultWait: 60,
        isMutating: { $0.method != "GET" }, createsContent: { $0.method == "POST" }, cost: { _ in nil },
        recognizes: { $0.status == 403 && $0.text.contains("secondary rate limit") })
}
