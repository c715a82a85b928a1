import Foundation
import Synchronization
import TestSupport
import Testing

@testable import WebAPI

/// The Redis connection, its faults and the shared cache's sealing, against a real `redis-server`.
@Suite("shared state: the Redis connection and its faults", .serialized)
struct SharedStateTests {
    /// Collects warnings.
    final class Warnings: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test("redis:// addresses: user, password, database, defaults; the password never printed")
    func addresses() throws {
        let full = try SharedStateAddress(
            parsing: "redis://ci:s3cr%40t@10.1.2.3:6380/4", source: "APIMACRO_SHARED_STATE")
        #expect(full.host == "10.1.2.3" && full.port == 6380 && full.database == 4 && full.user == "ci")
        #expect(full.password?.revealed == "s3cr@t")
        #expect(full.description == "redis://ci:REDACTED@10.1.2.3:6380/4")
        let bare = try SharedStateAddress(parsing: "redis://localhost", source: "X")
        #expect(
            bare.port == 6379 && bare.database == 0 && bare.password == nil
                && bare.description == "redis://localhost:6379/0")
        let passwordOnly = try SharedStateAddress(parsing: "redis://:pw-only-1@h:1/0", source: "X")
        #expect(passwordOnly.user == nil && passwordOnly.description == "redis://:REDACTED@h:1/0")
        for bad in [
            "http://u:pw-hidden-1@h/0", "redis://:pw-hidden-1@h/x", "redis:///0", "redis://u:pw-hidden-1@h:70000/0",
            "redis://user@h/0",
        ] {
            do {
                _ = try SharedStateAddress(parsing: bad, source: "APIMACRO_SHARED_STATE")
                Issue.record("\(bad) was accepted")
            } catch let error as APIError {
                #expect(
                    error.kind == .invalidRequest && error.message.hasPrefix("APIMACRO_SHARED_STATE: "),
                    "\(error.message)")
                #expect(!error.message.contains("pw-hidden-1"), "\(error.message)")
            }
        }
    }

    @Test("the governor's route: the first path segment, plain characters only")
    func routes() {
        #expect(GovernorStage.route(of: "https://api.github.com/search/issues?q=x") == "search")
        #expect(GovernorStage.route(of: "https://api.github.com/graphql") == "graphql")
        #expect(GovernorStage.route(of: "http://127.0.0.1:8080/users/octocat") == "users")
        #expect(GovernorStage.route(of: "https://h.example/?q=1") == "")
        #expect(GovernorStage.route(of: "https://h.example") == "")
        #expect(GovernorStage.route(of: "https://h.example/a%20b:c{x}/d") == "a20bcx")
        #expect(GovernorStage.resourceName("core\r\nx: y") == "corexy")
    }

    @Test("a wrong password is an error naming the setting, the password redacted; the right one connects")
    func wrongPassword() async throws {
        let redis = try await RedisServer.start(password: "the-right-one-1")
        defer { redis.stop() }
        let warnings = Warnings()
        let wrong = SharedState(
            address: SharedStateAddress(host: "127.0.0.1", port: redis.port, password: Secret("not-the-right-one-2")),
            warn: warnings.add)
        do {
            try wrong.connect()
            Issue.record("a wrong password connected")
        } catch let error as APIError {
            #expect(
                error.kind == .invalidRequest && error.message.contains("APIMACRO_SHARED_STATE"), "\(error.message)")
            #expect(
                !error.message.contains("not-the-right-one-2") && error.message.contains("REDACTED"), "\(error.message)"
            )
        }
        let right = SharedState(address: try SharedStateAddress(parsing: redis.url, source: "X"), warn: warnings.add)
        try right.connect()
        #expect(right.command([Array("PING".utf8)]) == .status("PONG"))
        #expect(warnings.all.isEmpty)
    }

    @Test("the database of the address is SELECTed: keys in /3 are not in /0")
    func selectsDatabase() async throws {
        let redis = try await RedisServer.start(password: "db-pw-1234")
        defer { redis.stop() }
        let address = { (database: Int) in
            SharedStateAddress(host: "127.0.0.1", port: redis.port, database: database, password: Secret("db-pw-1234"))
        }
        let three = SharedState(address: address(3), warn: { _ in })
        let zero = SharedState(address: address(0), warn: { _ in })
        #expect(three.command([Array("SET".utf8), Array("where".utf8), Array("three".utf8)]) == .status("OK"))
        #expect(three.command([Array("GET".utf8), Array("where".utf8)]) == .string(Array("three".utf8)))
        #expect(zero.command([Array("GET".utf8), Array("where".utf8)]) == .null)
        let missing = SharedState(address: address(99_999), warn: { _ in })
        #expect(throws: APIError.self) { try missing.connect() }
    }

    @Test("Redis lost mid-run: nil and one warning, however many calls; Redis back: used again")
    func lostAndBack() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let warnings = Warnings()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "APIMACRO_SHARED_STATE"), retryInterval: 0.05,
            warn: warnings.add)
        try shared.connect()
        let set = [Array("SET".utf8), Array("k".utf8), Array("v".utf8)]
        #expect(shared.command(set) == .status("OK"))
        redis.kill()
        for _ in 0..<5 { #expect(shared.command([Array("GET".utf8), Array("k".utf8)]) == nil) }
        #expect(warnings.all.count == 1, "\(warnings.all)")
        #expect(warnings.all.first?.contains("APIMACRO_SHARED_STATE") == true)
        try await redis.restart()
        // Back: after the retry interval the next call connects again (an event, waited for with a wide margin).
        let deadline = Date().addingTimeInterval(60)
        var answer: RedisReply?
        while answer == nil, Date() < deadline {
            answer = shared.command(set)
            if answer == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(answer == .status("OK"))
        #expect(warnings.all.count == 1, "still one warning: \(warnings.all)")
        // Scripts are sent again after the restart flushed them (NOSCRIPT → EVAL).
        let script = RedisScript("return 41 + tonumber(ARGV[1])")
        #expect(shared.evaluate(script, keys: [], arguments: [Array("1".utf8)]) == .integer(42))
        #expect(shared.evaluate(script, keys: [], arguments: [Array("2".utf8)]) == .integer(43))
        // A script posted without waiting for its answer, unknown to the server: sent in full when its NOSCRIPT is read.
        let setter = RedisScript("redis.call('SET', KEYS[1], ARGV[1]) return 1")
        shared.post(setter, keys: ["posted"], arguments: [Array("yes".utf8)])
        #expect(shared.command([Array("GET".utf8), Array("posted".utf8)]) == .string(Array("yes".utf8)))
        shared.post(setter, keys: ["posted"], arguments: [Array("again".utf8)])
        #expect(shared.command([Array("GET".utf8), Array("posted".utf8)]) == .string(Array("again".utf8)))
    }

    @Test("a shared cache entry opens only with the credential that stored it, and holds nothing in clear")
    func sealedEntries() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let shared = SharedState(address: try SharedStateAddress(parsing: redis.url, source: "X"), warn: { _ in })
        let tier = SharedCache(shared: shared)
        let text = "v2\nGET\nhttps://api.example.com/user\nauthorization: Bearer tok-one-123"
        let mine = tier.slot(keyText: text, material: "authorization: Bearer tok-one-123")
        let entry = SharedCache.Stored(
            status: 200, headers: Headers([("ETag", "\"abc\"")]), body: Array(#"{"login":"secret-body"}"#.utf8),
            varyNames: [],
            storedAt: 1_700_000_000, initialAge: 3, variant: "")
        tier.store(entry, in: mine)
        let loaded = tier.load(mine)
        #expect(
            loaded?.body == entry.body && loaded?.status == 200 && loaded?.headers["etag"] == "\"abc\""
                && loaded?.initialAge == 3)
        // Another credential derives another name and another sealing key.
        let theirs = tier.slot(keyText: text, material: "authorization: Bearer tok-two-456")
        #expect(theirs.key != mine.key && tier.load(theirs) == nil)
        let raw = shared.command([Array("GET".utf8), Array(mine.key.utf8)])?.bytes ?? []
        #expect(!raw.isEmpty && String(decoding: raw, as: UTF8.self).contains("secret-body") == false)
        #expect(!mine.key.contains("tok-one"))
        // The size bound: entries past it evict the oldest.
        let small = SharedCache(shared: shared, maximumBytes: 1_000)
        for index in 0..<20 {
            small.store(entry, in: small.slot(keyText: text + "\(index)", material: "m"))
        }
        let total = shared.command([Array("GET".utf8), Array(SharedCache.total.utf8)])?.integer ?? -1
        #expect(total > 0 && total <= 1_000, "\(total)")
        #expect(small.load(small.slot(keyText: text + "19", material: "m")) != nil)
        #expect(small.load(small.slot(keyText: text + "0", material: "m")) == nil)
    }
}
