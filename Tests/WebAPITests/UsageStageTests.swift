import Foundation
import Synchronization
import TestSupport
import Testing

@testable import WebAPI

/// `UsageStage`: an API that reports the share of its quota used (Meta's `X-App-Usage`) is waited
/// for before sending while the quota is used up, or refused without sending; a rate-limit
/// answer is waited out and asked again.
///
/// Pure: the rest of the pipeline is a closure, the waits are recorded, nothing sleeps.
@Suite("the usage stage: waits and refusals from reported usage")
struct UsageStageTests {
    /// A rule reading `X-Usage: PERCENT/SECONDS` and calling a 400 with `throttled` in its body a rate limit.
    static let rule = UsageRule(
        read: { headers in
            guard let value = headers["x-usage"] else { return nil }
            let parts = value.split(separator: "/").compactMap { Double($0) }
            guard parts.count == 2 else { return nil }
            return Usage(figures: ["percent": parts[0]], percent: parts[0], regainAfter: parts[1])
        },
        isThrottled: { $0.status == 400 && $0.text.contains("throttled") })

    /// What happened, in order: `sent` for each exchange that reached the transport, `slept N` for each wait.
    final class Events: Sendable {
        private let list = Mutex<[String]>([])
        var all: [String] { list.withLock { $0 } }
        func add(_ event: String) { list.withLock { $0.append(event) } }
    }

    static func stage(maxWait: Double, memory: UsageMemory, events: Events) -> UsageStage {
        UsageStage(
            rule: rule, memory: memory, maxWait: maxWait, api: "meta",
            sleep: { seconds in events.add("slept \(Int(seconds))") }, now: { 1_000_000 })
    }

    /// A transport answering each exchange with the next of `answers` (the last one repeats).
    static func next(_ answers: [(Int, String, String)], events: Events) -> Next {
        let index = Mutex(0)
        return Next { exchange in
            events.add("sent")
            let (status, usage, body) = index.withLock { position in
                defer { position += 1 }
                return answers[min(position, answers.count - 1)]
            }
            return Response(
                status: status, headers: Headers([("X-Usage", usage)]), body: Array(body.utf8), url: exchange.url)
        }
    }

    static func exchange(_ method: String = "GET") -> Exchange {
        Exchange(method: method, url: "https://api.example.com/me", headers: Headers(), body: [], timeout: 30)
    }

    @Test("the quota used up: the next send waits the time given first, then goes")
    func waitsBeforeSending() async throws {
        let events = Events()
        let memory = UsageMemory()
        let stage = Self.stage(maxWait: 120, memory: memory, events: events)
        let next = Self.next([(200, "100/60", "{}"), (200, "40/0", "{}")], events: events)
        _ = try await stage.handle(Self.exchange(), next: next)
        #expect(memory.last?.percent == 100)
        _ = try await stage.handle(Self.exchange(), next: next)
        #expect(events.all == ["sent", "slept 60", "sent"])
        #expect(memory.last?.percent == 40)
        _ = try await stage.handle(Self.exchange(), next: next)
        #expect(events.all == ["sent", "slept 60", "sent", "sent"], "no wait once the usage dropped")
    }

    @Test("a wait longer than maxWait is RateLimited with the time, and nothing is sent")
    func refusesWithoutSending() async throws {
        let events = Events()
        let memory = UsageMemory()
        memory.record(Usage(figures: [:], percent: 100, regainAfter: 3600), now: 1_000_000)
        let stage = Self.stage(maxWait: 60, memory: memory, events: events)
        let error = try #require(
            await apiError { _ = try await stage.handle(Self.exchange(), next: Self.next([], events: events)) })
        #expect(error.kind == .rateLimited)
        #expect(error.retryAfter == 3600)
        #expect(error.resetAt == 1_003_600)
        #expect(error.message.contains("not sent") && error.message.contains("APIMACRO_MAX_WAIT is 60 s"))
        #expect(events.all.isEmpty)
    }

    @Test("used up with no time given: the request goes, the server decides")
    func noTimeGiven() async throws {
        let events = Events()
        let memory = UsageMemory()
        memory.record(Usage(figures: [:], percent: 100, regainAfter: nil), now: 1_000_000)
        _ = try await Self.stage(maxWait: 60, memory: memory, events: events).handle(
            Self.exchange(), next: Self.next([(200, "10/0", "{}")], events: events))
        #expect(events.all == ["sent"])
    }

    @Test("a rate-limit answer is waited out and asked again; a POST is not sent twice")
    func throttledAnswer() async throws {
        let events = Events()
        let stage = Self.stage(maxWait: 600, memory: UsageMemory(), events: events)
        let answers = [(400, "100/300", "throttled"), (200, "20/0", "{}")]
        let response = try await stage.handle(Self.exchange(), next: Self.next(answers, events: events))
        #expect(response.status == 200)
        #expect(events.all == ["sent", "slept 300", "sent"])
        let post = Events()
        let postStage = Self.stage(maxWait: 600, memory: UsageMemory(), events: post)
        let answer = try await postStage.handle(Self.exchange("POST"), next: Self.next(answers, events: post))
        #expect(answer.status == 400)
        #expect(post.all == ["sent"])
    }

    @Test("an API that keeps answering with its rate limit is asked at most four times")
    func boundedWaits() async throws {
        let events = Events()
        let stage = Self.stage(maxWait: 600, memory: UsageMemory(), events: events)
        let response = try await stage.handle(
            Self.exchange(), next: Self.next([(400, "100/10", "throttled")], events: events))
        #expect(response.status == 400)
        #expect(events.all.filter { $0 == "sent" }.count == 4)
    }

    @Test("the memory's wait counts from when the usage was reported, bounded, and ends once waited")
    func memory() {
        let memory = UsageMemory()
        #expect(memory.wait(now: 0) == nil)
        memory.record(Usage(figures: [:], percent: 120, regainAfter: 100), now: 1000)
        #expect(memory.wait(now: 1030) == 70)
        #expect(memory.wait(now: 1200) == nil)
        memory.record(Usage(figures: [:], percent: 100, regainAfter: 1e300), now: 1000)
        #expect(memory.wait(now: 1000) == RateLimitPolicy.longestWait)
        memory.waited()
        #expect(memory.wait(now: 1000) == nil)
        memory.record(Usage(figures: [:], percent: .nan, regainAfter: 100), now: 1000)
        #expect(memory.wait(now: 1000) == nil)
    }

    @Test("a client with a usage rule gets the stage right above its credentials")
    func order() {
        var configuration = ClientConfiguration(name: "test", baseURL: "https://api.example.com")
        configuration.usage = Self.rule
        let client = APIClient(
            configuration: configuration, transport: OfflineTransport(), log: ExchangeLog(logger: nil),
            redactor: Redactor(secrets: []))
        #expect(
            PipelineOrderTests.order(client) == [
                "StatusStage", "RateLimitStage", "RateLimitMemoryStage", "RedirectStage", "RetryStage", "UsageStage",
                "CredentialStage", "ExchangeLogStage",
            ])
        #expect(client.usage != nil)
    }

    @Test("an error answer the API calls transient is retried like a 503; its facts reach the error")
    func transientAndDetails() async throws {
        try await withLoopback { loop in
            var configuration = ClientConfiguration(name: "test", baseURL: loop.server.baseURL)
            configuration.isTransient = { JSONPath.value(in: $0.body, path: ["transient"]) as? Bool == true }
            configuration.errorDetails = { response in
                [
                    APIError.Detail(
                        "code", JSONPath.string(in: response.body, path: ["code"]).map { .string($0) } ?? .none)
                ]
            }
            configuration.sleep = { _ in }
            let client = APIClient(
                configuration: configuration, transport: loop.transport, log: loop.log, redactor: Redactor(secrets: []))
            loop.server.inject([.status(400, body: #"{"transient": true, "code": "2"}"#)], path: "/users/octocat")
            let response = try await client.send(Request("GET", "/users/octocat"))
            #expect(response.status == 200)
            #expect(loop.requests("/users/octocat").count == 2)
            loop.server.inject([.status(400, body: #"{"transient": false, "code": "100"}"#)], path: "/users/octocat")
            let error = await apiError { _ = try await client.send(Request("GET", "/users/octocat")) }
            #expect(error?.kind == .http)
            #expect(error?.details == [APIError.Detail("code", .string("100"))])
            #expect(loop.requests("/users/octocat").count == 3, "not transient: asked once")
        }
    }
}
