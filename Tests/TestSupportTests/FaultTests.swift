import Foundation
import Testing

@testable import TestSupport

@Suite struct FaultTests {
    @Test func statusFaultIsUsedOnceThenTheRouteAnswers() async throws {
        try await withServer { server in
            server.inject(
                [.status(503, body: #"{"message":"down"}"#, headers: [("Retry-After", "1")]), .status(502)],
                path: "/users/octocat")
            let first = try fetch(server.baseURL + "/users/octocat?x=1")
            #expect(first.status == 503)
            #expect(first.text == #"{"message":"down"}"#)
            #expect(first.header("retry-after") == "1")
            #expect(try fetch(server.baseURL + "/text").status == 200)
            let second = try fetch(server.baseURL + "/users/octocat")
            #expect(second.status == 502)
            #expect(second.text == #"{"message":"Bad Gateway"}"#)
            #expect(try fetch(server.baseURL + "/users/octocat").status == 200)
        }
    }

    @Test func resetClosesWithoutAResponse() async throws {
        try await withServer { server in
            server.inject([.reset], path: "/users/octocat")
            let error = #expect(throws: RawHTTPError.self) {
                _ = try fetch(server.baseURL + "/users/octocat")
            }
            #expect(error == .reset || error == .closedBeforeResponse)
            let after = try fetch(server.baseURL + "/users/octocat")
            #expect(after.status == 200)
            #expect(server.requests.count == 2)
        }
    }

    @Test func delayAnswersLater() async throws {
        try await withServer { server in
            server.inject([.delay(milliseconds: 300)], path: "/text")
            let clock = ContinuousClock()
            let start = clock.now
            let response = try fetch(server.baseURL + "/text")
            #expect(clock.now - start >= .milliseconds(290))
            #expect(response.text == "héllo wörld\n")
        }
    }

    @Test func truncatedSendsHalfTheBody() async throws {
        try await withServer { server in
            server.inject([.truncated], path: "/bytes/1000")
            #expect(throws: RawHTTPError.truncated(status: 200, expected: 1000, received: 500)) {
                _ = try fetch(server.baseURL + "/bytes/1000")
            }
            let complete = try fetch(server.baseURL + "/bytes/1000")
            #expect(complete.body.count == 1000)
        }
    }

    @Test func rateLimitedIs429WithRetryAfter() async throws {
        try await withServer { server in
            server.inject([.rateLimited(retryAfter: 7), .rateLimited(retryAfter: nil)], path: "/users/octocat")
            // Each reset is the answer's moment plus the wait: bracketed by the clock read before
            // the request and after the answer, so no margin for load is needed.
            var before = epochNow()
            let first = try fetch(server.baseURL + "/users/octocat")
            var after = epochNow()
            #expect(first.status == 429)
            #expect(first.header("retry-after") == "7")
            #expect(first.header("x-ratelimit-remaining") == "0")
            let reset = try #require(first.header("x-ratelimit-reset").flatMap { Int($0) })
            #expect((before + 7)...(after + 7) ~= reset, "\(reset) not in \(before)...\(after) + 7")
            before = epochNow()
            let second = try fetch(server.baseURL + "/users/octocat")
            after = epochNow()
            #expect(second.status == 429)
            #expect(second.header("retry-after") == nil)
            let secondReset = try #require(second.header("x-ratelimit-reset").flatMap { Int($0) })
            #expect((before + 60)...(after + 60) ~= secondReset, "\(secondReset) not in \(before)...\(after) + 60")
        }
    }

    @Test func forbiddenRateLimitIsGitHubs403() async throws {
        try await withServer { server in
            server.inject([.forbiddenRateLimit(resetIn: 30)], path: "/users/octocat")
            let before = epochNow()
            let response = try fetch(server.baseURL + "/users/octocat")
            let after = epochNow()
            #expect(response.status == 403)
            #expect(response.header("x-ratelimit-remaining") == "0")
            let reset = try #require(response.header("x-ratelimit-reset").flatMap { Int($0) })
            #expect((before + 30)...(after + 30) ~= reset, "\(reset) not in \(before)...\(after) + 30")
            let body = try response.object()
            #expect((body["message"] as? String)?.hasPrefix("API rate limit exceeded for 127.0.0.1.") == true)
            #expect(
                body["documentation_url"] as? String
                    == "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting")
        }
    }

    /// The statuses of `count` sequential requests under a random fault mode with `seed`.
    private func statuses(seed: UInt64, count: Int) async throws -> [Int] {
        var result: [Int] = []
        try await withServer { server in
            server.setRandomFaults(seed: seed, rates: [(.status(503), 0.3), (.rateLimited(retryAfter: 1), 0.2)])
            for _ in 0..<count { result.append(try fetch(server.baseURL + "/text").status) }
            server.setRandomFaults(nil)
            for _ in 0..<5 { #expect(try fetch(server.baseURL + "/text").status == 200) }
        }
        return result
    }

    @Test func randomFaultsAreDeterministicPerSeed() async throws {
        let first = try await statuses(seed: 42, count: 60)
        let again = try await statuses(seed: 42, count: 60)
        let other = try await statuses(seed: 7, count: 60)
        #expect(first == again)
        #expect(first != other)
        #expect(first.contains(200) && first.contains(503) && first.contains(429))
        let faulted = first.filter { $0 != 200 }.count
        #expect((15...45).contains(faulted))
    }
}
