import Foundation
import TestSupport
import Testing

@testable import WebAPI

/// A decision on a stored entry that holds at every clock (`CachePolicy.decision(asked:…)`'s
/// `timeless`) is made once for the same stored headers and directives (`CacheStage`'s
/// `DecisionMemo`): it must be the decision `decide` gives at any clock, and a stored entry
/// changed by another connection is decided anew.
@Suite("cache decisions that hold at every clock")
struct CacheDecisionMemoTests {
    /// Stored responses of every freshness kind (none, max-age, Expires, no-cache,
    /// must-revalidate, validators or none).
    static let storedHeaders: [[(String, String)]] = [
        [("ETag", "\"a\"")],
        [("ETag", "\"a\""), ("Last-Modified", "Tue, 15 Nov 1994 12:45:26 GMT")],
        [("Last-Modified", "Tue, 15 Nov 1994 12:45:26 GMT")],
        [],
        [("Content-Type", "application/json")],
        [("ETag", "\"a\""), ("Cache-Control", "max-age=60")],
        [("ETag", "\"a\""), ("Cache-Control", "max-age=0")],
        [("ETag", "\"a\""), ("Cache-Control", "no-cache, max-age=600")],
        [("ETag", "\"a\""), ("Cache-Control", "max-age=60, must-revalidate")],
        [("ETag", "\"a\""), ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Expires", "Sun, 06 Nov 1994 08:50:37 GMT")],
        [("ETag", "\"a\""), ("Expires", "0")],
        [("ETag", "\"a\""), ("Expires", "Sun, 06 Nov 1994 08:50:37 GMT")],
    ]

    /// Requests' directives of every kind the decision reads.
    static let requestHeaders: [[(String, String)]] = [
        [],
        [("Cache-Control", "max-age=0")],
        [("Cache-Control", "max-age=30")],
        [("Cache-Control", "max-stale")],
        [("Cache-Control", "max-stale=30")],
        [("Cache-Control", "min-fresh=30")],
        [("Cache-Control", "no-cache")],
        [("Pragma", "no-cache")],
        [("Cache-Control", "only-if-cached")],
        [("Cache-Control", "only-if-cached, max-stale")],
    ]

    @Test("a timeless decision is decide's at every clock, before and after, online and offline")
    func timelessHolds() {
        let storedAt = 784_111_777.0
        let clocks = [
            storedAt - 86_400, storedAt - 1, storedAt, storedAt + 0.5, storedAt + 29, storedAt + 59.9, storedAt + 60,
            storedAt + 61, storedAt + 3_600, storedAt + 1e9,
        ]
        var timeless = 0
        var timed = 0
        for stored in Self.storedHeaders {
            for initialAge in [0.0, 5.0, 90.0] {
                let entry = CachePolicy.Stored(
                    status: 200, headers: Headers(stored), storedAt: storedAt, initialAge: initialAge)
                for request in Self.requestHeaders {
                    for disconnected in [false, true] {
                        for now in clocks {
                            let asked = CachePolicy.RequestDirectives(Headers(request))
                            let made = CachePolicy.decision(
                                asked: asked, stored: entry, now: now, disconnected: disconnected)
                            #expect(
                                made.decision
                                    == CachePolicy.decide(
                                        request: Headers(request), stored: entry, now: now, disconnected: disconnected))
                            guard made.timeless else {
                                timed += 1
                                continue
                            }
                            timeless += 1
                            for later in clocks {
                                #expect(
                                    CachePolicy.decide(
                                        request: Headers(request), stored: entry, now: later,
                                        disconnected: disconnected) == made.decision,
                                    "\(stored) \(request) age \(initialAge) offline \(disconnected): \(now) → \(later)")
                            }
                        }
                    }
                }
            }
        }
        #expect(timeless > 100 && timed > 100, "\(timeless) timeless, \(timed) not")
    }

    @Test("nothing stored, a fresh entry, one served stale: no decision is kept for later")
    func notTimeless() {
        let fresh = CachePolicy.Stored(
            status: 200, headers: Headers([("Cache-Control", "max-age=60")]), storedAt: 1000, initialAge: 0)
        #expect(!CachePolicy.decision(asked: .init(Headers()), stored: nil, now: 1000, disconnected: false).timeless)
        #expect(!CachePolicy.decision(asked: .init(Headers()), stored: fresh, now: 1010, disconnected: false).timeless)
        // Stale now, and revalidated: a clock set back would make it fresh again.
        #expect(!CachePolicy.decision(asked: .init(Headers()), stored: fresh, now: 1100, disconnected: false).timeless)
        let revalidated = CachePolicy.Stored(
            status: 200, headers: Headers([("ETag", "\"a\"")]), storedAt: 1000, initialAge: 0)
        #expect(
            CachePolicy.decision(asked: .init(Headers()), stored: revalidated, now: 1010, disconnected: false)
                == (.revalidate(["If-None-Match": "\"a\""]), true))
        // Offline, a stored copy is served, with its age: not kept.
        #expect(
            !CachePolicy.decision(asked: .init(Headers()), stored: revalidated, now: 1010, disconnected: true).timeless)
    }

    @Test("an entry revalidated each time, then stored fresh by another connection, is a hit at once")
    func changedByAnotherConnection() async throws {
        try await withCache { cache in
            let path = "/cache/etag/memo"
            cache.loop.server.inject(
                [
                    .status(200, body: #"{"v": 1}"#), .status(200, body: #"{"v": 1}"#),
                    .status(200, body: #"{"v": 1}"#),
                    .status(200, body: #"{"v": 2}"#, headers: [("Cache-Control", "max-age=600")]),
                ], path: path)
            let client = cache.client(try cache.store())
            let request = Request("GET", path)
            let first = try await client.send(request)
            // Revalidated twice: the second time on the decision kept from the first.
            for _ in 0..<2 {
                guard case .later(let stale) = try client.answerAtOnce(request) else {
                    Issue.record("an entry without freshness was answered at once")
                    return
                }
                let revalidated = try await client.send(prepared: stale)
                #expect(revalidated.source == .revalidated && revalidated.body == first.body)
            }
            // Another cache on the same file (another connection) stores a fresh answer.
            let other = cache.client(try cache.store())
            let stored = try await other.send(request)
            #expect(stored.source == .network && stored.body == Array(#"{"v": 2}"#.utf8))
            guard case .answered(let hit) = try client.answerAtOnce(request) else {
                Issue.record("the fresh entry the other connection stored was not answered at once")
                return
            }
            #expect(hit.source == .cacheHit && hit.body == stored.body)
            let requests = cache.loop.requests(path)
            #expect(requests.count == 4, "the hit sent nothing")
            #expect(requests.dropFirst().allSatisfy { $0.header("if-none-match") == first.headers["ETag"] })
        }
    }

    @Test("a credential spelt in two Unicode forms keys two entries: the remembered key is byte for byte")
    func keysByteForByte() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            // "café" precomposed and decomposed: equal as Strings, other bytes on the wire.
            let composed = Request("GET", "/cache/max-age/600", headers: [("X-Api-Key", "caf\u{e9}")])
            let decomposed = Request("GET", "/cache/max-age/600", headers: [("X-Api-Key", "cafe\u{301}")])
            let first = try await client.send(composed)
            let again = try await client.send(composed)
            let other = try await client.send(decomposed)
            #expect(first.source == .network && again.source == .cacheHit)
            #expect(other.source == .network, "the other spelling is another credential: not the first one's entry")
            #expect(cache.loop.requests("/cache/max-age/600").count == 2)
        }
    }
}
