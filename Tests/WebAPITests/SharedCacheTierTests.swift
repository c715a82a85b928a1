import Foundation
import Synchronization
import TestSupport
import Testing

@testable import WebAPI

/// The cache stage's use of the shared tier, and the tier's reads, against a real `redis-server`.
@Suite("the shared cache tier from the cache stage", .serialized)
struct SharedCacheTierTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// Counts what reaches the network below the stage.
    final class Network: Sendable {
        let count = Atomic<Int>(0)
        let headers: Headers
        init(_ headers: Headers) { self.headers = headers }
        var next: Next {
            Next { exchange in
                self.count.add(1, ordering: .relaxed)
                return Response(status: 200, headers: self.headers, body: Array("{}".utf8), url: exchange.url)
            }
        }
    }

    /// A cache stage over a fresh cache in `folder`, with the shared tier on `redis`, for a
    /// client whose credential is the bearer `token`.
    func stage(token: String, redis: RedisServer, folder: URL) throws -> (SharedState, CacheStage) {
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 30, warn: { _ in })
        let cache = try HTTPCache(directory: folder, secret: CacheSecret(bytes: Array(repeating: 3, count: 32)))
        let stage = CacheStage(
            cache: cache, offline: false, slot: CredentialSlot(.bearer(Secret(token))),
            baseURL: "https://api.example.com", log: ExchangeLog(logger: nil), warn: { _ in }, shared: shared)
        return (shared, stage)
    }

    func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-tier-\(UUID().uuidString)")
    }

    @Test("a local hit works out no shared-tier slot (no credential keys, no names); a miss does")
    func localHitMakesNoSlot() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, stage) = try stage(token: "tok-tier-1", redis: redis, folder: folder)
        let network = Network(Headers([("Cache-Control", "max-age=600")]))
        let exchange = Exchange(
            method: "GET", url: "https://api.example.com/user", headers: Headers([]), body: [], timeout: 30)
        let tally = try #require(stage.shared?.cache.slotsMade)
        let first = try await stage.handle(exchange, next: network.next)
        #expect(first.source == .network)
        let afterMiss = tally.value
        #expect(afterMiss >= 1, "a miss asks the shared tier")
        let second = try await stage.handle(exchange, next: network.next)
        #expect(second.source == .cacheHit)
        #expect(tally.value == afterMiss, "a local hit worked out a shared-tier slot")
        #expect(network.count.load(ordering: .relaxed) == 1)
    }

    @Test("a 304 of this process's own copy sends nothing to Redis; the first answer was shared")
    func notModifiedUploadsNothing() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (shared, stage) = try stage(token: "tok-tier-304", redis: redis, folder: folder)
        let exchange = Exchange(
            method: "GET", url: "https://api.example.com/etag", headers: Headers([]), body: [], timeout: 30)
        // Always revalidated (no-cache), with a validator.
        let first = Network(Headers([("Cache-Control", "no-cache"), ("ETag", "\"v1\"")]))
        _ = try await stage.handle(exchange, next: first.next)
        let keys = { shared.command([Array("KEYS".utf8), Array("{apimacro-cache}:e:*".utf8)])?.elements ?? [] }
        #expect(keys().count == 1, "the first answer is shared")
        _ = await shared.command([Array("FLUSHDB".utf8)])
        let notModified = Next { exchange in
            #expect(exchange.headers["If-None-Match"] == "\"v1\"")
            return Response(status: 304, headers: Headers([("ETag", "\"v1\"")]), body: [], url: exchange.url)
        }
        let revalidated = try await stage.handle(exchange, next: notModified)
        #expect(revalidated.source == .revalidated && revalidated.body == Array("{}".utf8))
        #expect(keys().isEmpty, "a 304 of a local copy re-uploaded the entry")
    }

    @Test(
        "a header that only looks like a credential keys nothing in the shared tier: an entry forged for it is not served",
        arguments: [("X-Client-Key", "public-demo"), ("Cookie", "consent=yes"), ("X-Api-Key", "plugin-static-key")])
    func lookalikeNotShared(name: String, value: String) async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 30, warn: { _ in })
        // A client with no credential of its own (the http client, a plugin whose static header this is).
        let stage = CacheStage(
            cache: try HTTPCache(directory: folder, secret: CacheSecret(bytes: Array(repeating: 5, count: 32))),
            offline: false, slot: CredentialSlot(nil), baseURL: "https://api.example.com",
            log: ExchangeLog(logger: nil),
            warn: { _ in }, shared: shared)
        let exchange = Exchange(
            method: "GET", url: "https://api.example.com/public", headers: Headers([(name, value)]), body: [],
            timeout: 30)
        // A writer of Redis derives the slot such a request had from public text alone, and seals a
        // fresh answer for it.
        let planted = SharedCache(shared: shared).slot(
            keyText: CacheStage.keyText(for: exchange, credentialHeader: nil),
            material: SharedCredential.material(wire: exchange, credential: nil, attached: false))
        let forgery = SharedCache.Stored(
            status: 200, headers: Headers([("Cache-Control", "max-age=600")]), body: Array(#"{"forged":true}"#.utf8),
            varyNames: [], storedAt: Date().timeIntervalSince1970, initialAge: 0, variant: "")
        let sealed = try planted.credential.seal(SharedCache.encode(forgery), context: planted.key)
        #expect(await shared.command([Array("SET".utf8), Array(planted.key.utf8), sealed]) == .status("OK"))
        let network = Network(Headers([("Cache-Control", "max-age=600")]))
        let response = try await stage.handle(exchange, next: network.next)
        #expect(response.source == .network && response.body == Array("{}".utf8), "the forged answer was served")
        #expect(network.count.load(ordering: .relaxed) == 1)
        // Nor does the real answer go to Redis: the planted value is all it holds.
        let keys = await shared.command([Array("KEYS".utf8), Array("{apimacro-cache}:e:*".utf8)])?.elements ?? []
        #expect(keys.count == 1, "\(keys.count) entries")
    }

    @Test("a header holding a secret the process knows (a token from the environment) still shares between processes")
    func knownSecretShared() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let token = "env-SECRET-token-0123"
        let exchange = Exchange(
            method: "GET", url: "https://other.example.com/data",
            headers: Headers([("Authorization", "Bearer \(token)")]), body: [], timeout: 30)
        var sources: [Response.Source] = []
        for process in 0..<2 {
            let folder = temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let shared = SharedState(
                address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 30, warn: { _ in })
            let stage = CacheStage(
                cache: try HTTPCache(
                    directory: folder, secret: CacheSecret(bytes: Array(repeating: UInt8(9 + process), count: 32))),
                offline: false, slot: CredentialSlot(nil, redactor: Redactor(secrets: [token])),
                baseURL: "https://api.example.com", log: ExchangeLog(logger: nil), warn: { _ in }, shared: shared)
            let network = Network(Headers([("Cache-Control", "max-age=600")]))
            sources.append(try await stage.handle(exchange, next: network.next).source)
        }
        #expect(sources == [.network, .sharedHit])
    }

    @Test("a value in Redis larger than any entry is read only up to the entry bound: a miss, Redis still in use")
    func oversizedValueBounded() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let warnings = Lines()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 30, warn: warnings.add)
        let tier = SharedCache(shared: shared)
        let slot = tier.slot(keyText: "v2\nGET\nhttps://h.example/x", material: "authorization: Bearer tok-big-1")
        // 9 MiB planted by a writer of Redis: past the connection's 8 MiB reply bound.
        let planted = [UInt8](repeating: 0x41, count: 9 * 1024 * 1024)
        #expect(await shared.command([Array("SET".utf8), Array(slot.key.utf8), planted]) == .status("OK"))
        #expect(await tier.load(slot) == nil)
        #expect(warnings.all.isEmpty, "\(warnings.all)")
        #expect(shared.isAvailable)
        // A real entry in its place still loads.
        let entry = SharedCache.Stored(
            status: 200, headers: Headers([]), body: Array("ok".utf8), varyNames: [], storedAt: 1, initialAge: 0,
            variant: "")
        await tier.store(entry, in: slot)
        #expect(await tier.load(slot)?.body == Array("ok".utf8))
    }
}
