import Foundation
import Synchronization
import TestSupport
import Testing
import WebAPI

/// Lines written to stderr by the stages, collected.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var write: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
}

/// A temporary cache folder next to a loopback server.
struct CacheFixture {
    let loop: Loopback
    let directory: URL
    let warnings = Lines()

    init(_ loop: Loopback) {
        self.loop = loop
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-cache-\(UUID().uuidString)")
    }

    func store(offline: Bool = false, maximumBytes: Int = 100_000_000, recorder: HARRecorder? = nil) throws
        -> ExchangeStore
    {
        ExchangeStore(
            network: loop.transport,
            cache: try HTTPCache(directory: directory, secret: try secret(), maximumBytes: maximumBytes),
            recorder: recorder,
            replay: nil, offline: offline, warn: warnings.write)
    }

    /// The key folder stands for `APIMACRO_HOME`, apart from the cache folder as in real use.
    var home: URL { directory.appendingPathExtension("home") }

    func secret() throws -> CacheSecret { try CacheSecret(folder: home) }

    func client(_ store: ExchangeStore, credential: Credential? = nil, log: ExchangeLog? = nil) -> APIClient {
        APIClient(
            configuration: ClientConfiguration(name: "test", baseURL: loop.server.baseURL, credential: credential),
            transport: store, log: log ?? loop.log, redactor: Redactor(secrets: []))
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(at: home)
    }
}

func withCache(_ body: (CacheFixture) async throws -> Void) async throws {
    try await withLoopback { loop in
        let fixture = CacheFixture(loop)
        defer { fixture.remove() }
        try await body(fixture)
    }
}

@Suite("the HTTP cache against a real loopback server")
struct HTTPCacheTests {
    @Test("a second GET is conditional, gets a 304, and is answered from the cache")
    func revalidates() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let first = try await client.send(Request("GET", "/cache/etag/a"))
            let second = try await client.send(Request("GET", "/cache/etag/a"))
            #expect(first.source == .network)
            #expect(second.source == .revalidated)
            #expect(second.status == 200 && second.body == first.body && !second.body.isEmpty)
            let requests = cache.loop.requests("/cache/etag/a")
            #expect(requests.count == 2)
            #expect(requests[0].header("if-none-match") == nil)
            #expect(requests[1].header("if-none-match") == first.headers["ETag"])
            // The server counts a 304 as free, as GitHub does; the merged headers carry its count.
            #expect(second.headers["x-ratelimit-remaining"] == first.headers["x-ratelimit-remaining"])
        }
    }

    @Test("Last-Modified alone revalidates with If-Modified-Since")
    func lastModified() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let first = try await client.send(Request("GET", "/cache/last-modified"))
            let second = try await client.send(Request("GET", "/cache/last-modified"))
            #expect(second.source == .revalidated && second.body == first.body)
            #expect(
                cache.loop.requests("/cache/last-modified").last?.header("if-modified-since")
                    == "Tue, 15 Nov 1994 12:45:26 GMT")
        }
    }

    @Test("a fresh response (max-age) is served without any request")
    func fresh() async throws {
        try await withCache { cache in
            let log = ExchangeLog(logger: nil)
            let client = cache.client(try cache.store(), log: log)
            let first = try await client.send(Request("GET", "/cache/max-age/600"))
            let second = try await client.send(Request("GET", "/cache/max-age/600"))
            #expect(second.source == .cacheHit && second.body == first.body)
            #expect(cache.loop.requests("/cache/max-age/600").count == 1)
            #expect(log.requests == 1 && log.cacheHits == 1)
            // A new process (a new store on the same folder) sees it too.
            let other = cache.client(try cache.store())
            #expect(try await other.send(Request("GET", "/cache/max-age/600")).source == .cacheHit)
        }
    }

    @Test("Cache-Control: no-store is never stored")
    func noStore() async throws {
        try await withCache { cache in
            let store = try cache.store()
            let client = cache.client(store)
            let first = try await client.send(Request("GET", "/cache/no-store"))
            let second = try await client.send(Request("GET", "/cache/no-store"))
            #expect(
                first.text.contains("\"serial\":1") && second.text.contains("\"serial\":2"),
                "\(first.text) \(second.text)")
            #expect(second.source == .network)
            #expect(cache.loop.requests("/cache/no-store").allSatisfy { $0.header("if-none-match") == nil })
            #expect(try store.cache?.summary().entries == 0)
        }
    }

    @Test("Vary: another Accept-Language is another answer")
    func vary() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let english = try await client.send(Request("GET", "/cache/vary", headers: [("Accept-Language", "en")]))
            let french = try await client.send(Request("GET", "/cache/vary", headers: [("Accept-Language", "fr")]))
            let french2 = try await client.send(Request("GET", "/cache/vary", headers: [("Accept-Language", "fr")]))
            #expect(english.text.contains("\"en\"") && french.text.contains("\"fr\""))
            #expect(french.source == .network && french2.source == .cacheHit)
        }
    }

    @Test("the credential is part of the key, and never stored in clear")
    func credentialKey() async throws {
        try await withCache { cache in
            let store = try cache.store()
            let alice = cache.client(store, credential: .bearer(Secret("token-of-alice-123")))
            let bob = cache.client(store, credential: .bearer(Secret("token-of-bob-456")))
            _ = try await alice.send(Request("GET", "/cache/max-age/600"))
            let bobs = try await bob.send(Request("GET", "/cache/max-age/600"))
            #expect(bobs.source == .network, "another credential must not see alice's answer")
            #expect(try await alice.send(Request("GET", "/cache/max-age/600")).source == .cacheHit)
            for suffix in ["", "-wal"] {
                let bytes =
                    (try? Data(contentsOf: cache.directory.appendingPathComponent("cache.sqlite" + suffix))) ?? Data()
                #expect(bytes.range(of: Data("token-of-alice".utf8)) == nil)
                #expect(bytes.range(of: Data("token-of-bob".utf8)) == nil)
            }
        }
    }

    @Test("stale-if-error: 503s after every retry, or resets, serve the cached copy with one warning")
    func staleIfError() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let first = try await client.send(Request("GET", "/cache/etag/b"))
            cache.loop.server.inject(Array(repeating: .status(503), count: 4), path: "/cache/etag/b")
            let stale = try await client.send(Request("GET", "/cache/etag/b"))
            #expect(stale.source == .stale && stale.body == first.body)
            #expect(cache.loop.requests("/cache/etag/b").count == 5, "the retries ran before the cache answered")
            cache.loop.server.inject(Array(repeating: .reset, count: 4), path: "/cache/etag/b")
            let reset = try await client.send(Request("GET", "/cache/etag/b"))
            #expect(reset.source == .stale)
            let warnings = cache.warnings.all
            #expect(warnings.count == 2, "\(warnings)")
            #expect(
                warnings.first?.contains("503 Service Unavailable; using the cached copy from ") == true, "\(warnings)")
            // The age's unit is the clock's: a loaded machine may spend minutes on the retries.
            #expect(
                warnings.first?.contains(/from \d+ (s|min|h) ago$/) == true, "the age, with its unit: \(warnings)")
            #expect(warnings.last?.contains("no response; using the cached copy from") == true, "\(warnings)")
        }
    }

    @Test("--offline: OfflineError with an empty cache; any stored copy otherwise")
    func offline() async throws {
        try await withCache { cache in
            let offline = cache.client(try cache.store(offline: true))
            let error = await apiError { _ = try await offline.send(Request("GET", "/cache/etag/c")) }
            #expect(error?.kind == .offline)
            #expect(
                error?.message.contains("/cache/etag/c is not in the cache") == true, "\(String(describing: error))")
            #expect(cache.loop.requests("/cache/etag/c").isEmpty)
            _ = try await cache.client(try cache.store()).send(Request("GET", "/cache/etag/c"))
            let stored = try await offline.send(Request("GET", "/cache/etag/c"))
            #expect(stored.source == .stale && stored.status == 200)
            #expect(cache.loop.requests("/cache/etag/c").count == 1)
        }
    }

    @Test("over its bound, the least recently used entries go first")
    func eviction() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-lru-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try HTTPCache(
            directory: directory, secret: CacheSecret(bytes: Array(repeating: 7, count: 32)), maximumBytes: 10_000)
        func entry(_ key: String) -> HTTPCache.Entry {
            HTTPCache.Entry(
                key: Array(key.utf8), target: Array(key.utf8), status: 200, headers: Headers([("A", "b")]),
                body: Array(repeating: 65, count: 3000), storedAt: 0)
        }
        func stored(_ key: String, now: Double = 2000) async throws -> Bool {
            !(try await cache.entries(key: Array(key.utf8), now: now)).isEmpty
        }
        try await cache.store(entry("a"), now: 1)
        try await cache.store(entry("b"), now: 2)
        try await cache.store(entry("c"), now: 3)
        #expect(try await stored("a", now: 1000))  // a is used again: b is now the least recent
        try await cache.store(entry("d"), now: 1001)
        // Over the bound, entries go until the total is under 90 %: b, then c (a was used at 1000).
        #expect(try await !stored("b"))
        #expect(try await !stored("c"))
        #expect(try await stored("a"))
        #expect(try await stored("d"))
        #expect(try cache.summary().bytes <= 9_000)
        #expect(try cache.clear() == 2)
        #expect(try cache.summary() == HTTPCache.Summary(entries: 0, bytes: 0, oldest: nil, newest: nil))
    }
}
