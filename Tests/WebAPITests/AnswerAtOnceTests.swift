import Foundation
import TestSupport
import Testing
import WebAPI

/// `APIClient.answerAtOnce`: a fresh cache hit answered on the calling thread without a task,
/// exactly as `send` answers it; everything else left for `send(prepared:)`.
@Suite("answers at once: a fresh cache hit without a task")
struct AnswerAtOnceTests {
    @Test("a fresh hit is answered at once, as send answers it, and counted once")
    func freshHit() async throws {
        try await withCache { cache in
            let log = ExchangeLog(logger: nil)
            let client = cache.client(try cache.store(), log: log)
            let request = Request("GET", "/cache/max-age/600")
            guard case .later(let miss) = try client.answerAtOnce(request) else {
                Issue.record("an empty cache answered at once")
                return
            }
            let first = try await client.send(prepared: miss)
            #expect(first.source == .network)
            guard case .answered(let hit) = try client.answerAtOnce(request) else {
                Issue.record("a fresh hit was not answered at once")
                return
            }
            let sent = try await client.send(request)
            #expect(hit.source == .cacheHit && sent.source == .cacheHit)
            #expect(hit.status == sent.status && hit.body == first.body && hit.body == sent.body && hit.url == sent.url)
            #expect(hit.headers.fields.map(\.name) == sent.headers.fields.map(\.name))
            #expect(hit.headers["Age"] != nil)
            #expect(log.requests == 1 && log.cacheHits == 2, "\(log.requests) \(log.cacheHits)")
            #expect(cache.loop.requests("/cache/max-age/600").count == 1)
        }
    }

    @Test("a revalidation goes the asynchronous way, with the entry read once for it")
    func revalidation() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let request = Request("GET", "/cache/etag/a")
            guard case .later(let miss) = try client.answerAtOnce(request) else {
                Issue.record("an empty cache answered at once")
                return
            }
            let first = try await client.send(prepared: miss)
            guard case .later(let stale) = try client.answerAtOnce(request) else {
                Issue.record("an entry without freshness was answered at once")
                return
            }
            let second = try await client.send(prepared: stale)
            #expect(first.source == .network && second.source == .revalidated && second.body == first.body)
            let requests = cache.loop.requests("/cache/etag/a")
            #expect(requests.count == 2 && requests.last?.header("if-none-match") == first.headers["ETag"])
        }
    }

    @Test("what was read for an exchange serves it once: sent again, it is looked up anew")
    func prefetchTakenOnce() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            guard case .later(let exchange) = try client.answerAtOnce(Request("GET", "/cache/etag/b")) else {
                Issue.record("an empty cache answered at once")
                return
            }
            // The read found nothing; the second send must see what the first one stored.
            let first = try await client.send(prepared: exchange)
            let second = try await client.send(prepared: exchange)
            #expect(first.source == .network && second.source == .revalidated)
            #expect(cache.loop.requests("/cache/etag/b").last?.header("if-none-match") == first.headers["ETag"])
        }
    }

    @Test("without a cache, or while a HAR file records, nothing is answered at once")
    func notAtOnce() async throws {
        try await withCache { cache in
            let plain = cache.client(
                ExchangeStore(
                    network: cache.loop.transport, cache: nil, recorder: nil, replay: nil, offline: false,
                    warn: { _ in }))
            _ = try await plain.send(Request("GET", "/cache/max-age/600"))
            guard case .later = try plain.answerAtOnce(Request("GET", "/cache/max-age/600")) else {
                Issue.record("a client without a cache answered at once")
                return
            }
            let recorder = HARRecorder(file: cache.directory.appendingPathComponent("run.har"), version: "test")
            let recording = cache.client(try cache.store(recorder: recorder))
            _ = try await recording.send(Request("GET", "/cache/max-age/60"))
            guard case .later(let exchange) = try recording.answerAtOnce(Request("GET", "/cache/max-age/60")) else {
                Issue.record("a recorded hit was answered at once, past the recorder")
                return
            }
            #expect(try await recording.send(prepared: exchange).source == .cacheHit)
            #expect(recorder.count == 2, "the recorder sees the hit as before")
        }
    }
}
