import Foundation
import Synchronization
import Testing
import WebAPI

/// A clock that only moves when the pacer sleeps: decisions are counted, never timed.
final class VirtualClock: Sendable {
    private let time = Mutex(1_700_000_000.0)
    private let slept = Mutex<[Double]>([])

    var now: Double { time.withLock { $0 } }
    var sleeps: [Double] { slept.withLock { $0 } }

    func advance(_ seconds: Double) {
        time.withLock { $0 += seconds }
        slept.withLock { $0.append(seconds) }
    }

    /// A pacer for `limits` on this clock.
    func pacer(_ limits: SecondaryLimits) -> SecondaryPacer {
        SecondaryPacer(limits: limits, now: { [self] in now }, sleep: { [self] in advance($0) })
    }
}

@Suite("the pace of secondary limits, per credential, on a virtual clock")
struct SecondaryPaceTests {
    /// GitHub's shape with small numbers: writes 1 s apart, 3 creations a minute and 5 an
    /// hour, 10 points a minute per endpoint (reads 1, writes 5).
    static let limits = SecondaryLimits(
        maxInFlight: 100, writeGap: 1,
        contentCreation: [.init(requests: 3, seconds: 60), .init(requests: 5, seconds: 3600)], defaultWait: 60,
        isMutating: { $0.method != "GET" }, createsContent: { $0.method == "POST" },
        cost: { .init(endpoint: $0.method + " " + $0.url, points: $0.method == "GET" ? 1 : 5, perMinute: 10) },
        recognizes: { $0.status == 403 && $0.text.contains("secondary rate limit") })

    static func exchange(_ method: String, _ path: String) -> Exchange {
        Exchange(method: method, url: "https://api.example.com" + path, headers: Headers([]), body: [], timeout: 30)
    }

    /// Admits and finishes one request; the waits it was given.
    static func send(
        _ pacer: SecondaryPacer, _ exchange: Exchange, key: String = "token-a", maxWait: Double = 100_000,
        answer: Response? = nil
    ) async throws -> [SecondaryPacer.Wait] {
        let waits = Mutex<[SecondaryPacer.Wait]>([])
        let ticket = try await pacer.admit(
            exchange, key: key, maxWait: maxWait, describe: "\(exchange.method) \(exchange.url)", api: "test",
            note: { wait in waits.withLock { $0.append(wait) } })
        pacer.finish(ticket, answer: answer ?? Response(status: 200, headers: Headers([]), body: [], url: exchange.url))
        return waits.withLock { $0 }
    }

    @Test("writes: a gap after each; creations within their minute and hour; past APIMACRO_MAX_WAIT unsent")
    func writes() async throws {
        let clock = VirtualClock()
        let pacer = clock.pacer(Self.limits)
        var reasons: [[SecondaryPacer.Wait.Reason]] = []
        for number in 0..<6 {
            reasons.append(try await Self.send(pacer, Self.exchange("POST", "/issues/\(number)")).map(\.reason))
        }
        // The first goes at once; the next ones wait for the gap, the 4th for the minute's 3 to
        // be a minute old, the 6th for the hour's 5 to be an hour old.
        #expect(reasons[0] == [] && reasons[1] == [.writeGap] && reasons[2] == [.writeGap])
        #expect(reasons[3] == [.contentCreation] && reasons[4] == [.writeGap] && reasons[5] == [.contentCreation])
        #expect(clock.sleeps == [1, 1, 58, 1, 3539], "the minute's window, then the hour's")
        #expect(clock.now - 1_700_000_000 == 3600)
        // A PATCH creates nothing: only the gap.
        #expect(try await Self.send(pacer, Self.exchange("PATCH", "/issues/1")).map(\.reason) == [.writeGap])
        // Another token has its own lane.
        #expect(try await Self.send(pacer, Self.exchange("POST", "/issues/9"), key: "token-b").isEmpty)
        // A wait past APIMACRO_MAX_WAIT is a secondary RateLimited, and nothing is booked.
        let before = pacer.report.admitted
        let error = await apiError {
            for number in 0..<5 { _ = try await Self.send(pacer, Self.exchange("POST", "/x/\(number)"), maxWait: 30) }
        }
        #expect(error?.kind == .rateLimited && error?.isSecondary == true)
        #expect(error?.message.contains("nothing was sent") == true)
        #expect(pacer.report.refused == 1 && pacer.report.admitted - before < 5)
    }

    @Test("an endpoint's points a minute: the 11th read waits, another endpoint does not")
    func points() async throws {
        let clock = VirtualClock()
        let pacer = clock.pacer(Self.limits)
        for _ in 0..<10 { #expect(try await Self.send(pacer, Self.exchange("GET", "/users/a")).isEmpty) }
        #expect(try await Self.send(pacer, Self.exchange("GET", "/users/b")).isEmpty)
        #expect(try await Self.send(pacer, Self.exchange("GET", "/users/a")).map(\.reason) == [.endpointPoints])
        #expect(clock.sleeps == [60])
        #expect(pacer.report.waits == ["the endpoint's points per minute": 1] && pacer.report.admitted == 12)
    }

    @Test("an answer saying a secondary limit was hit holds the lane for Retry-After, else the default")
    func hold() async throws {
        let clock = VirtualClock()
        let pacer = clock.pacer(Self.limits)
        let secondary = Response(
            status: 403, headers: Headers([("retry-after", "7")]),
            body: Array(#"{"message":"You have exceeded a secondary rate limit."}"#.utf8), url: "")
        _ = try await Self.send(pacer, Self.exchange("GET", "/a"), answer: secondary)
        #expect(try await Self.send(pacer, Self.exchange("GET", "/b")).map(\.seconds) == [7])
        let bare = Response(status: 403, headers: Headers([]), body: secondary.body, url: "")
        _ = try await Self.send(pacer, Self.exchange("GET", "/c"), answer: bare)
        #expect(try await Self.send(pacer, Self.exchange("GET", "/d")).map(\.seconds) == [60])
        // A hostile Retry-After of a year holds the lane an hour at most.
        let year = Response(status: 403, headers: Headers([("retry-after", "31536000")]), body: secondary.body, url: "")
        _ = try await Self.send(pacer, Self.exchange("GET", "/g"), answer: year)
        #expect(try await Self.send(pacer, Self.exchange("GET", "/h")).map(\.seconds) == [3600])
        // A plain 403 holds nothing.
        let forbidden = Response(status: 403, headers: Headers([]), body: Array(#"{"message":"no"}"#.utf8), url: "")
        _ = try await Self.send(pacer, Self.exchange("GET", "/e"), answer: forbidden)
        #expect(try await Self.send(pacer, Self.exchange("GET", "/f")).isEmpty)
    }

    @Test(
        "the policy: a secondary 403 without Retry-After waits the default; past APIMACRO_MAX_WAIT it fails as secondary"
    )
    func policy() {
        let body = Array(#"{"message":"You have exceeded a secondary rate limit."}"#.utf8)
        let plain = Response(status: 403, headers: Headers([]), body: body, url: "")
        let withRetry = Response(status: 403, headers: Headers([("retry-after", "3")]), body: body, url: "")
        let policy = RateLimitPolicy(maxWait: 60, secondary: Self.limits)
        #expect(policy.decide(plain, now: 0, canRetry: true) == .wait(60))
        #expect(policy.decide(withRetry, now: 0, canRetry: true) == .wait(3))
        #expect(
            RateLimitPolicy(maxWait: 5, secondary: Self.limits).decide(plain, now: 0, canRetry: true)
                == .fail(retryAfter: 60, resetAt: nil, secondary: true))
        // Without the client's rule the same 403 is no rate limit (a Forbidden).
        #expect(RateLimitPolicy(maxWait: 60).decide(plain, now: 0, canRetry: true) == .proceed)
    }
}
