import Foundation
import Synchronization
import TestSupport
import Testing
import WebAPI

@Suite("rate limit as last seen in response headers")
struct RateLimitMemoryTests {
    @Test("a 403 rate-limit answer and a 404 update rateLimit too, not only successes (issue 14)")
    func errorsUpdateRateLimit() async throws {
        try await withLoopback { loop in
            let client = APIClient(
                configuration: ClientConfiguration(name: "github", baseURL: loop.server.baseURL, maxWait: 0),
                transport: loop.transport, log: loop.log, redactor: Redactor(secrets: []))
            #expect(client.rateLimit == nil)
            loop.server.inject([.forbiddenRateLimit(resetIn: 3600)], path: "/users/octocat")
            let error = await apiError { _ = try await client.send(Request("GET", "/users/octocat")) }
            #expect(error?.kind == .rateLimited, "\(String(describing: error))")
            #expect(client.rateLimit?.remaining == 0, "\(String(describing: client.rateLimit))")
            let missing = await apiError { _ = try await client.send(Request("GET", "/status/404")) }
            #expect(missing?.kind == .notFound)
            #expect(
                (client.rateLimit?.remaining ?? 0) > 0, "the 404's headers: \(String(describing: client.rateLimit))")
        }
    }
}

@Suite("a resource its last answer said is spent is waited on before sending")
struct RateLimitBucketTests {
    /// An answer naming `resource` with `remaining` left until `reset`.
    @Test("spent follows each resource's last answer: spent, refilled, spent again; the same URL or another")
    func spentFollowsAnswers() throws {
        let memory = RateLimitMemory()
        let now = 1_700_000_000.0
        func record(_ resource: String, _ remaining: Int, _ url: String) throws {
            let answer = Self.answer(resource: resource, remaining: remaining, reset: 1_700_000_010)
            memory.record(try #require(RateLimitInfo(headers: answer.headers)), url: url)
        }
        let search = "https://api.github.com/search/issues?q=x"
        let users = "https://api.github.com/users/octocat"
        try record("core", 5, users)
        #expect(memory.spent(before: users, now: now) == nil)
        try record("search", 0, search)
        try record("search", 0, search)
        #expect(memory.spent(before: search, now: now)?.resource == "search")
        #expect(memory.spent(before: users, now: now) == nil)
        try record("search", 3, search)
        #expect(memory.spent(before: search, now: now) == nil, "refilled")
        try record("core", 0, users)
        #expect(memory.spent(before: users, now: now)?.resource == "core")
        #expect(memory.spent(before: "https://api.github.com/search/code", now: now) == nil)
        try record("core", 1, users)
        #expect(memory.spent(before: users, now: now) == nil)
    }

    static func answer(resource: String, remaining: Int, reset: Int) -> Response {
        Response(
            status: 200,
            headers: Headers([
                ("x-ratelimit-limit", "30"), ("x-ratelimit-remaining", String(remaining)),
                ("x-ratelimit-reset", String(reset)), ("x-ratelimit-resource", resource),
            ]), body: [], url: "https://api.github.com/search/issues")
    }

    final class Sleeps: Sendable {
        let waits = Mutex<[Double]>([])
        let sent = Mutex(0)
    }

    /// Answers every exchange with a fresh search bucket, counting what is sent.
    struct Answering: Transport {
        let sleeps: Sleeps
        func send(_ exchange: Exchange) async throws -> Response {
            sleeps.sent.withLock { $0 += 1 }
            return RateLimitBucketTests.answer(resource: "search", remaining: 29, reset: 1_700_000_070)
        }
    }

    @Test("spent: the route's resource waits for its reset (or raises unsent past APIMACRO_MAX_WAIT); others go")
    func spentBucket() async throws {
        let memory = RateLimitMemory()
        let now = 1_700_000_000.0
        let info = try #require(
            RateLimitInfo(headers: Self.answer(resource: "search", remaining: 0, reset: 1_700_000_010).headers))
        memory.record(info, url: "https://api.github.com/search/issues?q=x")
        #expect(memory.spent(before: "https://api.github.com/search/code?q=y", now: now)?.resource == "search")
        #expect(memory.spent(before: "https://api.github.com/users/octocat", now: now) == nil)
        #expect(memory.spent(before: "https://api.github.com/search/code", now: 1_700_000_011) == nil, "reset passed")
        let sleeps = Sleeps()
        func stage(maxWait: Double) -> RateLimitStage {
            RateLimitStage(
                policy: RateLimitPolicy(maxWait: maxWait), api: "github", memory: memory,
                sleep: { seconds in sleeps.waits.withLock { $0.append(seconds) } }, now: { now })
        }
        let exchange = Exchange(
            method: "GET", url: "https://api.github.com/search/issues?q=z", headers: Headers([]), body: [], timeout: 30)
        _ = try await Pipeline(stages: [stage(maxWait: 60)], transport: Answering(sleeps: sleeps)).send(exchange)
        #expect(sleeps.waits.withLock { $0 } == [11] && sleeps.sent.withLock { $0 } == 1)
        let error = await apiError {
            _ = try await Pipeline(stages: [stage(maxWait: 5)], transport: Answering(sleeps: sleeps)).send(exchange)
        }
        #expect(error?.kind == .rateLimited && error?.resetAt == 1_700_000_010)
        #expect(error?.message.contains("the search rate limit is spent until") == true)
        #expect(sleeps.sent.withLock { $0 } == 1, "nothing sent")
        // A reset more than a day away is not believed.
        let far = try #require(
            RateLimitInfo(headers: Self.answer(resource: "core", remaining: 0, reset: 1_800_000_000).headers))
        memory.record(far, url: "https://api.github.com/users/a")
        #expect(memory.spent(before: "https://api.github.com/users/b", now: now) == nil)
    }
}
