import Foundation
import Synchronization
import Testing

@testable import WebAPI

/// `ConcurrencyLimit` and its stage: a client's cap on requests in flight (the shortener's
/// Bitly backend, five at once), with no I/O: the "network" is a gate the test opens.
@Suite("a client's cap on requests in flight")
struct ConcurrencyLimitTests {
    /// A `Next` that counts the requests inside it and holds each until the test lets it go.
    final class HeldNetwork: Sendable {
        private let state = Mutex<(inside: Int, peak: Int, entered: Int, waiting: [CheckedContinuation<Void, Never>])>(
            (0, 0, 0, []))

        var inside: Int { state.withLock { $0.inside } }
        var peak: Int { state.withLock { $0.peak } }
        var entered: Int { state.withLock { $0.entered } }

        var next: Next {
            Next { [self] exchange in
                await withCheckedContinuation { continuation in
                    state.withLock { state in
                        state.inside += 1
                        state.entered += 1
                        state.peak = max(state.peak, state.inside)
                        state.waiting.append(continuation)
                    }
                }
                state.withLock { $0.inside -= 1 }
                return Response(status: 200, headers: Headers([]), body: [], url: exchange.url)
            }
        }

        /// Lets the oldest held request through; false when none is held.
        @discardableResult
        func releaseOne() -> Bool {
            let next = state.withLock { state in state.waiting.isEmpty ? nil : state.waiting.removeFirst() }
            next?.resume()
            return next != nil
        }
    }

    /// Waits (yielding, never sleeping) until `condition` holds; a hang guard of 60 s fails the test.
    static func until(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(600)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("no event after 60 s: \(what)")
                throw CancellationError()
            }
            await Task.yield()
        }
    }

    static let exchange = Exchange(
        method: "POST", url: "https://api.example.com/x", headers: Headers([]), body: [], timeout: 30)

    @Test("eight requests through a cap of five: five inside, three waiting, then each freed place is taken")
    func capHolds() async throws {
        let network = HeldNetwork()
        let stage = ConcurrencyLimitStage(limit: ConcurrencyLimit(limit: 5))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { _ = try await stage.handle(Self.exchange, next: network.next) }
            }
            // Every request is inside or waiting: without the stage all eight would be inside.
            try await Self.until("all eight placed") { network.inside + stage.limit.waiting == 8 }
            #expect(network.inside == 5)
            #expect(stage.limit.waiting == 3)
            for done in 1...8 {
                network.releaseOne()
                try await Self.until("the next one in") { network.entered == min(8, 5 + done) }
                #expect(network.inside <= 5)
            }
            try await group.waitForAll()
        }
        #expect(network.peak == 5)
        #expect(stage.limit.peak == 5)
        #expect(stage.limit.holders == 0 && stage.limit.waiting == 0)
    }

    @Test("a request cancelled while it waits leaves the queue and takes no place; one that holds gives it back")
    func cancellation() async throws {
        let network = HeldNetwork()
        let limit = ConcurrencyLimit(limit: 1)
        let stage = ConcurrencyLimitStage(limit: limit)
        let holder = Task { try await stage.handle(Self.exchange, next: network.next) }
        try await Self.until("the first inside") { network.inside == 1 }
        let waiter = Task { try await stage.handle(Self.exchange, next: network.next) }
        try await Self.until("the second waiting") { limit.waiting == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(limit.waiting == 0 && limit.holders == 1)
        network.releaseOne()
        _ = try await holder.value
        #expect(limit.holders == 0)
        // Cancelled before it asked: refused at once, nothing held.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await limit.withPlace { 1 }
        }
        await #expect(throws: CancellationError.self) { _ = try await early.value }
        #expect(limit.holders == 0 && network.entered == 1)
    }

    @Test("the stage sits below the retries and above the credentials, only when the configuration sets a cap")
    func order() {
        var configuration = ClientConfiguration(name: "test", baseURL: "https://api.example.com")
        configuration.maxConcurrentRequests = 5
        let client = APIClient(
            configuration: configuration, transport: OfflineTransport(), log: ExchangeLog(logger: nil),
            redactor: Redactor(secrets: []))
        #expect(
            PipelineOrderTests.order(client) == [
                "StatusStage", "RateLimitStage", "RateLimitMemoryStage", "RedirectStage", "RetryStage",
                "ConcurrencyLimitStage", "CredentialStage", "ExchangeLogStage",
            ])
        #expect(
            !PipelineOrderTests.order(PipelineOrderTests.client(OfflineTransport())).contains("ConcurrencyLimitStage"))
        #expect(ConcurrencyLimit(limit: 0).limit == 1)
    }
}
