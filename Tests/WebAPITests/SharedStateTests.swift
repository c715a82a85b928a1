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
        #expect(ResourceRoute.segment(of: "https://api.github.com/search/issues?q=x") == "search")
        #expect(ResourceRoute.segment(of: "https://api.github.com/graphql") == "graphql")
        #expect(ResourceRoute.segment(of: "http://127.0.0.1:8080/users/octocat") == "users")
        #expect(ResourceRoute.segment(of: "https://h.example/?q=1") == "")
        #expect(ResourceRoute.segment(of: "https://h.example") == "")
        #expect(ResourceRoute.segment(of: "https://h.example/a%20b:c{x}/d") == "a20bcx")
        #expect(ResourceRoute.resourceName("core\r\nx: y") == "corexy")
    }

    @Test("a wrong password is an error naming the setting, the password redacted; the right one connects")
    func wrongPassword() async throws {
        let redis = try await RedisServer.start(password: "the-right-one-1")
        defer { redis.stop() }
        let warnings = Warnings()
        let wrong = SharedState(
            address: SharedStateAddress(host: "127.0.0.1", port: redis.port, password: Secret("not-the-right-one-2")),
            timeout: 30, warn: warnings.add)
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
        let right = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 30, warn: warnings.add)
        try right.connect()
        #expect(await right.command([Array("PING".utf8)]) == .status("PONG"))
        #expect(warnings.all.isEmpty)
    }

    @Test("the database of the address is SELECTed: keys in /3 are not in /0")
    func selectsDatabase() async throws {
        let redis = try await RedisServer.start(password: "db-pw-1234")
        defer { redis.stop() }
        let address = { (database: Int) in
            SharedStateAddress(host: "127.0.0.1", port: redis.port, database: database, password: Secret("db-pw-1234"))
        }
        let three = SharedState(address: address(3), timeout: 30, warn: { _ in })
        let zero = SharedState(address: address(0), timeout: 30, warn: { _ in })
        #expect(await three.command([Array("SET".utf8), Array("where".utf8), Array("three".utf8)]) == .status("OK"))
        #expect(await three.command([Array("GET".utf8), Array("where".utf8)]) == .string(Array("three".utf8)))
        #expect(await zero.command([Array("GET".utf8), Array("where".utf8)]) == .null)
        let missing = SharedState(address: address(99_999), timeout: 30, warn: { _ in })
        #expect(throws: APIError.self) { try missing.connect() }
    }

    @Test("a server echoing the password in SELECT's error: the usage error shows it redacted")
    func selectErrorRedacted() async throws {
        // The fake accepts the handshake (AUTH), then SELECT's error carries the password back.
        let hostile = try HostileRedis.start(.raw("-ERR no database for hunter22-secret-pw\r\n"))
        let shared = SharedState(
            address: SharedStateAddress(
                host: "127.0.0.1", port: hostile.port, database: 7, password: Secret("hunter22-secret-pw")),
            timeout: 30, warn: { _ in })
        do {
            try shared.connect()
            Issue.record("a refused SELECT connected")
        } catch let error as APIError {
            #expect(error.message.contains("cannot use database 7"), "\(error.message)")
            #expect(!error.message.contains("hunter22-secret-pw"), "\(error.message)")
        }
    }

    @Test("Redis lost mid-run: nil and one warning, however many calls; Redis back: used again")
    func lostAndBack() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let warnings = Warnings()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "APIMACRO_SHARED_STATE"), timeout: 30,
            retryInterval: 0.05, warn: warnings.add)
        try shared.connect()
        let set = [Array("SET".utf8), Array("k".utf8), Array("v".utf8)]
        #expect(await shared.command(set) == .status("OK"))
        redis.kill()
        for _ in 0..<5 { #expect(await shared.command([Array("GET".utf8), Array("k".utf8)]) == nil) }
        #expect(warnings.all.count == 1, "\(warnings.all)")
        #expect(warnings.all.first?.contains("APIMACRO_SHARED_STATE") == true)
        try await redis.restart()
        // Back: after the retry interval the next call connects again (an event, waited for with a wide margin).
        let deadline = Date().addingTimeInterval(600)
        var answer: RedisReply?
        while answer == nil, Date() < deadline {
            answer = await shared.command(set)
            if answer == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(answer == .status("OK"))
        #expect(warnings.all.count == 1, "still one warning: \(warnings.all)")
        // Scripts are sent again after the restart flushed them (NOSCRIPT → EVAL).
        let script = RedisScript("return 41 + tonumber(ARGV[1])")
        #expect(await shared.evaluate(script, keys: [], arguments: [Array("1".utf8)]) == .integer(42))
        #expect(await shared.evaluate(script, keys: [], arguments: [Array("2".utf8)]) == .integer(43))
        // A script posted without waiting for its answer, unknown to the server: sent in full when its NOSCRIPT is read.
        let setter = RedisScript("redis.call('SET', KEYS[1], ARGV[1]) return 1")
        await shared.post(setter, keys: ["posted"], arguments: [Array("yes".utf8)])
        #expect(await shared.command([Array("GET".utf8), Array("posted".utf8)]) == .string(Array("yes".utf8)))
        await shared.post(setter, keys: ["posted"], arguments: [Array("again".utf8)])
        #expect(await shared.command([Array("GET".utf8), Array("posted".utf8)]) == .string(Array("again".utf8)))
    }

    @Test("a shared cache entry opens only with the credential that stored it, and holds nothing in clear")
    func sealedEntries() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 30, warn: { _ in })
        let tier = SharedCache(shared: shared)
        let text = "v2\nGET\nhttps://api.example.com/user\nauthorization: Bearer tok-one-123"
        let mine = tier.slot(keyText: text, material: "authorization: Bearer tok-one-123")
        let entry = SharedCache.Stored(
            status: 200, headers: Headers([("ETag", "\"abc\"")]), body: Array(#"{"login":"secret-body"}"#.utf8),
            varyNames: [],
            storedAt: 1_700_000_000, initialAge: 3, variant: "")
        await tier.store(entry, in: mine)
        let loaded = await tier.load(mine)
        #expect(
            loaded?.body == entry.body && loaded?.status == 200 && loaded?.headers["etag"] == "\"abc\""
                && loaded?.initialAge == 3)
        // Another credential derives another name and another sealing key.
        let theirs = tier.slot(keyText: text, material: "authorization: Bearer tok-two-456")
        #expect(theirs.key != mine.key)
        #expect(await tier.load(theirs) == nil)
        let raw = await shared.command([Array("GET".utf8), Array(mine.key.utf8)])?.bytes ?? []
        #expect(!raw.isEmpty && String(decoding: raw, as: UTF8.self).contains("secret-body") == false)
        #expect(!mine.key.contains("tok-one"))
        // The size bound: entries past it evict the oldest.
        let small = SharedCache(shared: shared, maximumBytes: 1_000)
        for index in 0..<20 {
            await small.store(entry, in: small.slot(keyText: text + "\(index)", material: "m"))
        }
        let total = await shared.command([Array("GET".utf8), Array(SharedCache.total.utf8)])?.integer ?? -1
        #expect(total > 0 && total <= 1_000, "\(total)")
        #expect(await small.load(small.slot(keyText: text + "19", material: "m")) != nil)
        #expect(await small.load(small.slot(keyText: text + "0", material: "m")) == nil)
    }

    /// Every key, field and member Redis holds, as text.
    func dump(_ shared: SharedState) -> String {
        var text = ""
        for key in shared.command([Array("KEYS".utf8), Array("*".utf8)])?.elements.compactMap(\.bytes) ?? [] {
            text += String(decoding: key, as: UTF8.self) + "\n"
            let type = shared.command([Array("TYPE".utf8), key])
            let read: [[UInt8]] =
                switch type {
                case .status("hash"): [Array("HGETALL".utf8), key]
                case .status("zset"): [Array("ZRANGE".utf8), key, Array("0".utf8), Array("-1".utf8)]
                default: [Array("GET".utf8), key]
                }
            for item in shared.command(read)?.elements ?? [] {
                text += String(decoding: item.bytes ?? [], as: UTF8.self) + "\n"
            }
        }
        return text
    }

    @Test("the governor keeps a keyed name of each route, never the path segment (a token in /bot<TOKEN>/…)")
    func routeNotInClear() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let loop = try await Loopback.start()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 10, warn: { _ in })
        let store = ExchangeStore(
            network: loop.transport, cache: nil, recorder: nil, replay: nil, offline: false, shared: shared,
            warn: { _ in })
        let api = APIClient(
            configuration: ClientConfiguration(
                name: "test", baseURL: loop.server.baseURL, credential: .bearer(Secret("ghp_routeToken0123")),
                timeout: 30, maxWait: 60),
            transport: store, log: loop.log, redactor: Redactor(secrets: []))
        _ = try? await api.send(Request("GET", "/bot123456:AAEroute-secret-7/getMe"))
        _ = try await api.send(Request("GET", "/users/octocat"))
        try await loop.close()
        let held = dump(shared)
        #expect(loop.server.requests.count == 2)
        // Both routes were recorded (the test looks at real state), under names that show nothing.
        #expect(held.split(separator: "\n").filter { $0.hasPrefix("route:") }.count == 2, "\(held)")
        #expect(!held.contains("route-secret") && !held.contains("bot123456") && !held.contains("users"), "\(held)")
        #expect(!held.contains("ghp_routeToken"))
    }

    @Test("no shared cache entry without a secret credential: anonymous or Basic alone, whose keys anyone can compute")
    func forgeableNotShared() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 10, warn: { _ in })
        let tier = SharedCache(shared: shared)
        let text = "v2\nGET\nhttps://api.example.com/public"
        let entry = SharedCache.Stored(
            status: 200, headers: Headers(), body: Array(#"{"answer":"real"}"#.utf8), varyNames: [],
            storedAt: 1_700_000_000, initialAge: 0, variant: "")
        var forgery = entry
        forgery.body = Array(#"{"answer":"forged"}"#.utf8)
        for material in ["", "authorization: Basic dTpwYXNzd29yZA==\ncredential basic u:password"] {
            let slot = tier.slot(keyText: text, material: material)
            // Whoever can write to Redis can derive this slot's keys (a fixed or guessable
            // material) and plant an answer: it must never be served.
            let sealed = try slot.credential.seal(SharedCache.encode(forgery), context: slot.key)
            #expect(await shared.command([Array("SET".utf8), Array(slot.key.utf8), sealed]) == .status("OK"))
            #expect(await tier.load(slot) == nil, "a forged entry was served for material \(material.debugDescription)")
            #expect(await shared.command([Array("FLUSHDB".utf8)]) == .status("OK"))
            // Nor is anything stored for such a request.
            await tier.store(entry, in: slot)
            #expect(await shared.command([Array("DBSIZE".utf8)]) == .integer(0), "\(material.debugDescription)")
        }
        // A token still shares.
        let token = tier.slot(keyText: text, material: "credential bearer ghp_sharedToken0123")
        await tier.store(entry, in: token)
        #expect(await tier.load(token)?.body == entry.body)
    }

    @Test("an error reply fails that command alone: Redis stays in use on the same connection, one warning")
    func errorReplyKeepsConnection() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let warnings = Warnings()
        // A lost Redis is not tried again for an hour: any call treated as a loss shows.
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "APIMACRO_SHARED_STATE"), timeout: 10,
            retryInterval: 3600, warn: warnings.add)
        try shared.connect()
        let id = await shared.command([Array("CLIENT".utf8), Array("ID".utf8)])
        #expect(id?.integer != nil)
        let failing = RedisScript("return redis.error_reply('ERR refused on purpose')")
        #expect(await shared.evaluate(failing, keys: ["k"], arguments: []) == nil)
        #expect(shared.isAvailable)
        #expect(await shared.command([Array("INCR".utf8), Array("a".utf8), Array("b".utf8)]) == nil)
        #expect(
            await shared.command([Array("CLIENT".utf8), Array("ID".utf8)]) == id, "the same connection, still pooled")
        #expect(
            warnings.all.count == 1 && warnings.all.first?.contains("refused on purpose") == true, "\(warnings.all)")
    }

    @Test("a reply that drips a byte at a time is bounded by the timeout for the whole command, not per read")
    func drippingReply() async throws {
        // The drip lasts 50 s; each byte comes long before a per-read timeout of 5 s would fire.
        let (outcome, warnings) = try await askRefused(.drip(bytes: 2000, milliseconds: 25), timeout: 5)
        #expect(outcome?.commandSeen == true && outcome?.hungUp == true, "\(String(describing: outcome))")
        #expect(warnings.count == 1 && warnings.first?.contains("no answer in time") == true, "\(warnings)")
    }

    @Test("a reply larger than the bound is refused as it arrives, not read to its end")
    func hugeReply() async throws {
        let (outcome, warnings) = try await askRefused(.huge(bytes: 200_000_000), timeout: 60)
        #expect(outcome?.commandSeen == true && outcome?.hungUp == true, "\(String(describing: outcome))")
        #expect((outcome?.sent ?? .max) < 200_000_000)
        #expect(warnings.count == 1 && warnings.first?.contains("a reply larger than") == true, "\(warnings)")
    }

    @Test(
        "replies read for commands sent without waiting share the next command's one deadline: k + 1 replies, one timeout"
    )
    func drainedRepliesShareOneDeadline() async throws {
        // Five replies of 12 bytes, a byte every 100 ms: 1.2 s each, at least 6 s in all (the
        // fake's own pauses, which load only lengthens). Each fits in the 3 s timeout; together
        // they do not, so the fifth must never be read.
        let hostile = try HostileRedis.start(.dripEach(replies: 5, bytes: 12, milliseconds: 100))
        let warnings = Warnings()
        let shared = SharedState(
            address: SharedStateAddress(host: "127.0.0.1", port: hostile.port), timeout: 3, warn: warnings.add)
        let script = RedisScript("return 1")
        for _ in 0..<4 { await shared.post(script, keys: [], arguments: []) }
        let reply = await shared.command([Array("GET".utf8), Array("k".utf8)])
        #expect(reply == nil, "the fifth reply was read: \(reply?.bytes?.count ?? 0) bytes")
        let outcome = hostile.result()
        #expect(outcome?.commandSeen == true && outcome?.hungUp == true, "\(String(describing: outcome))")
        #expect(
            warnings.all.count == 1 && warnings.all.first?.contains("no answer in time") == true, "\(warnings.all)")
    }

    @Test("Redis lost, its retry pause over: many callers at once make one try to connect, the others wait for it")
    func oneTryAfterLoss() async throws {
        let hold = try HostileRedisHold.start()
        defer { hold.stop() }
        let warnings = Warnings()
        // A retry pause of 0: once Redis is lost, the next caller may try at once.
        let shared = SharedState(
            address: SharedStateAddress(host: "127.0.0.1", port: hold.port), timeout: 60, retryInterval: 0,
            warn: warnings.add)
        // Lost at start: the handshake hangs until the fake closes the connection.
        let start = Task.detached { try shared.connect() }
        try await until("the connect at start") { hold.accepted == 1 }
        hold.release()
        try await start.value
        #expect(warnings.all.count == 1, "\(warnings.all)")
        hold.holdAgain()
        let callers = 8
        let replies = Task {
            await withTaskGroup(of: RedisReply?.self) { group in
                for _ in 0..<callers { group.addTask { await shared.command([Array("PING".utf8)]) } }
                var all: [RedisReply?] = []
                for await reply in group { all.append(reply) }
                return all
            }
        }
        // Either every caller tries to connect (a stampede) or one does and the others wait
        // for its outcome: both are events.
        try await until("the callers to connect or wait") {
            hold.accepted == 1 + callers || (hold.accepted == 2 && shared.waitingForTry == callers - 1)
        }
        hold.release()
        let answered = await replies.value
        #expect(answered.count == callers && answered.allSatisfy { $0 == nil })
        #expect(hold.accepted == 2, "\(hold.accepted - 1) connections tried at once after the pause")
        #expect(warnings.all.count == 1, "\(warnings.all)")
    }

    @Test(
        "commands waiting in Redis hold no thread of the cooperative pool: more of them than it has threads, and other tasks run"
    )
    func waitingCommandsLeaveThePoolFree() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 60, warn: { _ in })
        try shared.connect()
        // One more than the pool has threads, each waiting in Redis (BLPOP) until this test pushes.
        let waiters = ProcessInfo.processInfo.activeProcessorCount + 1
        let popped = Task {
            await withTaskGroup(of: RedisReply?.self) { group in
                for _ in 0..<waiters {
                    group.addTask { await shared.command(["BLPOP", "queue", "0"].map { Array($0.utf8) }) }
                }
                var all: [RedisReply?] = []
                for await reply in group { all.append(reply) }
                return all
            }
        }
        // This task needs a thread of the pool too: were they all blocked on sockets, it would
        // run only once the commands timed out (60 s), and nothing would be pushed.
        try await until("every BLPOP to wait in Redis") { blockedClients(shared) == waiters }
        let values = (1...waiters).map { Array(String($0).utf8) }
        #expect(await shared.command([Array("RPUSH".utf8), Array("queue".utf8)] + values) == .integer(Int64(waiters)))
        let replies = await popped.value
        #expect(replies.count == waiters && replies.allSatisfy { $0?.elements.count == 2 }, "\(replies)")
    }

    /// How many clients Redis has waiting in a blocking command (`INFO clients`).
    func blockedClients(_ shared: SharedState) -> Int {
        let info = String(
            decoding: shared.command([Array("INFO".utf8), Array("clients".utf8)])?.bytes ?? [], as: UTF8.self)
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("blocked_clients:") }
        return line.flatMap { Int($0.dropFirst("blocked_clients:".count)) } ?? -1
    }

    /// A client of the loopback server whose governor shares `shared` (no cache: every request is sent).
    func governed(
        _ loop: Loopback, _ shared: SharedState, maxWait: Double = 0, limits: GovernorLimits = GovernorLimits()
    ) -> APIClient {
        let store = ExchangeStore(
            network: loop.transport, cache: nil, recorder: nil, replay: nil, offline: false, shared: shared,
            limits: limits, warn: { _ in })
        return APIClient(
            configuration: ClientConfiguration(
                name: "test", baseURL: loop.server.baseURL, credential: .bearer(Secret("ghp_budgetToken0123")),
                timeout: 30, maxWait: maxWait),
            transport: store, log: loop.log, redactor: Redactor(secrets: []))
    }

    /// Sets the governor's stored `field` (`core:reset`) to `value`.
    func setGovernorField(_ shared: SharedState, _ field: String, _ value: String) throws {
        let keys = shared.command([Array("KEYS".utf8), Array("{apimacro:*".utf8)])?.elements.compactMap(\.bytes) ?? []
        let state = try #require(
            keys.first { key in shared.command([Array("HEXISTS".utf8), key, Array(field.utf8)])?.integer == 1 })
        _ = shared.command([Array("HSET".utf8), state, Array(field.utf8), Array(value.utf8)])
    }

    /// The governor's stored value of `field` (`core:remaining`), and its leases in flight.
    func governorState(_ shared: SharedState, _ field: String) -> (value: String?, leases: Int) {
        let keys = shared.command([Array("KEYS".utf8), Array("{apimacro:*".utf8)])?.elements.compactMap(\.bytes) ?? []
        var value: String?
        var leases = 0
        for key in keys {
            if String(decoding: key, as: UTF8.self).hasSuffix(":leases") {
                leases += Int(shared.command([Array("ZCARD".utf8), key])?.integer ?? 0)
            } else if let found = shared.command([Array("HGET".utf8), key, Array(field.utf8)])?.bytes {
                value = String(decoding: found, as: UTF8.self)
            }
        }
        return (value, leases)
    }

    @Test(
        "APIMACRO_MAX_RATE: a send takes the next slot in Redis's microseconds; a pace longer than APIMACRO_MAX_WAIT is refused unsent"
    )
    func sharedPace() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let loop = try await Loopback.start()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 10, warn: { _ in })
        /// Redis's clock in microseconds.
        func redisMicroseconds() async throws -> Int {
            let time = await shared.command([Array("TIME".utf8)])?.elements.compactMap(\.bytes).compactMap {
                Int(String(decoding: $0, as: UTF8.self))
            }
            let parts = try #require(time, "TIME answered")
            try #require(parts.count == 2)
            return parts[0] * 1_000_000 + parts[1]
        }
        // 4,000 a second: the next send 250 µs after this one (whole milliseconds made it 1 ms).
        let fast = governed(loop, shared, maxWait: 5, limits: GovernorLimits(maxRate: 4000))
        let before = try await redisMicroseconds()
        _ = try await fast.send(Request("GET", "/users/octocat", query: [("n", "1")]))
        let after = try await redisMicroseconds()
        let slot = try #require(governorState(shared, "pace_us").value.flatMap { Int($0) }, "the pace is stored")
        #expect(slot >= before + 250 && slot <= after + 250, "\(before) \(slot) \(after)")

        // One an hour: the first send waits at most what is left of the 250 µs, the second would
        // wait an hour, more than APIMACRO_MAX_WAIT: refused at once, never sent.
        let slow = governed(loop, shared, maxWait: 0.5, limits: GovernorLimits(maxRate: 1.0 / 3600))
        _ = try await slow.send(Request("GET", "/users/octocat", query: [("n", "2")]))
        let next = try #require(governorState(shared, "pace_us").value.flatMap { Int($0) })
        #expect(next >= after + 3_600_000_000, "the next slot an hour after the send")
        do {
            _ = try await slow.send(Request("GET", "/users/octocat", query: [("n", "3")]))
            Issue.record("a send an hour before its slot was let through")
        } catch let error as APIError {
            #expect(error.kind == .rateLimited, "\(error)")
            #expect(error.message.contains("for the pace or a probe shared by every apimacro process"), "\(error)")
        }
        try await loop.close()
        #expect(loop.server.requests.count == 2)
    }

    @Test("a Redis that answers every reservation 'again in 1 µs' cannot hold a request past APIMACRO_MAX_WAIT")
    func tinyWaitsEndByMaxWait() async throws {
        // Every reservation answered {1, 1}: 200,000 waits of 1 µs as asked fit in 0.2 s. Each
        // wait counts as long as it took: with sleeps of at least 5 ms, at most 40 of them.
        let hostile = try HostileRedis.start(.every(reply: "*2\r\n:1\r\n:1\r\n"))
        let shared = SharedState(
            address: SharedStateAddress(
                host: "127.0.0.1", port: hostile.port, database: 0, password: Secret("pw-tinyWaits")),
            timeout: 30, warn: { _ in })
        let sleeps = Mutex(0)
        let stage = GovernorStage(
            shared: shared, limits: GovernorLimits(), slot: CredentialSlot(.bearer(Secret("ghp_tinyWaits0123"))),
            baseURL: "https://api.example.com", maxWait: 0.2, api: nil,
            sleep: { _ in
                // Far past the bound: the old count (as asked) would go on to 200,000.
                let count = sleeps.withLock { count in
                    count += 1
                    return count
                }
                guard count <= 1000 else { throw CancellationError() }
                try await Task.sleep(for: .milliseconds(5))
            })
        let exchange = Exchange(
            method: "GET", url: "https://api.example.com/users/octocat", headers: Headers([]), body: [], timeout: 30)
        do {
            _ = try await stage.handle(
                exchange,
                next: Next { exchange in
                    Issue.record("a request was sent without a reservation")
                    return Response(status: 200, headers: Headers([]), body: [], url: exchange.url)
                })
            Issue.record("the request was neither sent nor refused")
        } catch let error as APIError {
            #expect(error.kind == .rateLimited, "\(error)")
            // Refused by the waits the fake's answers asked for, not by a failed reservation.
            #expect(error.message.contains("for the pace or a probe shared by every apimacro process"), "\(error)")
            #expect(error.message.contains("APIMACRO_MAX_WAIT is 0.2 s"), "\(error)")
        }
        // A busy machine's sleeps are longer: fewer of them, never more.
        let count = sleeps.withLock { $0 }
        #expect(count >= 1 && count <= 40, "\(count) waits")
    }

    @Test("a reset more than a day away (an epoch in milliseconds) is not believed: the next window's budget is used")
    func farResetNotBelieved() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let loop = try await Loopback.start()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 10, warn: { _ in })
        let api = governed(loop, shared)
        loop.server.setBudget(limit: 3, resetInMilliseconds: true, manualWindows: true)
        for index in 0..<3 { _ = try await api.send(Request("GET", "/users/octocat", query: [("n", "\(index)")])) }
        // The server's next window: it has budget again. A governor that believed the reset
        // (year 50000 and more) would refuse every request until then, unsent.
        loop.server.nextBudgetWindow(reset: Int(Date().timeIntervalSince1970) + 3600)
        let next = try await api.send(Request("GET", "/users/octocat", query: [("n", "3")]))
        try await loop.close()
        #expect(next.status == 200)
        #expect(loop.server.budgetReport.admitted == 4 && loop.server.budgetReport.refused == 0)
    }

    @Test("a late answer from the previous window does not lower the new window's budget")
    func staleWindowIgnored() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let loop = try await Loopback.start()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 10, warn: { _ in })
        let api = governed(loop, shared)
        // Window 1 lasts an hour by its headers (and on the server until the test says): however
        // slow the machine, its answers are all in window 1. It ends for the governor when the
        // test says so, below, not when a clock passes it.
        loop.server.setBudget(limit: 5, window: 3600, manualWindows: true)
        let firstReset = try #require(loop.server.budgetReset)
        for index in 0..<3 { _ = try await api.send(Request("GET", "/users/octocat", query: [("n", "\(index)")])) }
        #expect(governorState(shared, "core:reset").value == "\(firstReset)")
        // The 4th request spends window 1 (its answer says 1 left) but its answer is held back.
        loop.server.holdBudgetAnswers(next: 1)
        let late = Task { try await api.send(Request("GET", "/users/octocat", query: [("n", "late")])) }
        try await until("the server to see the 4th request") { loop.server.requests.count == 4 }
        // The first three leases are released by posted scripts: wait until Redis has run them
        // (only the held request's lease left), or window 2 would count them as in flight.
        try await until("the first three leases to be released") {
            governorState(shared, "core:remaining").leases == 1
        }
        // Window 1 has passed for the governor (its stored reset a second before Redis's now),
        // and the server's next answer starts window 2.
        let redisNow = await shared.command([Array("TIME".utf8)])?.elements.first?.bytes.flatMap {
            Int(String(decoding: $0, as: UTF8.self))
        }
        try setGovernorField(shared, "core:reset", "\(try #require(redisNow) - 1)")
        loop.server.nextBudgetWindow(reset: firstReset + 3600)
        _ = try await api.send(Request("GET", "/users/octocat", query: [("n", "4")]))
        // Window 2: 4 left by the server, less the one request still in flight.
        #expect(governorState(shared, "core:remaining").value == "3")
        loop.server.releaseBudgetAnswers()
        #expect(try await late.value.status == 200)
        try await until("the late answer's record") { governorState(shared, "core:remaining").leases == 0 }
        try await loop.close()
        #expect(
            governorState(shared, "core:remaining").value == "3",
            "the answer from window 1 (1 left) did not spend window 2")
    }

    /// Waits for `condition` (an event), polling; gives up after a minute.
    func until(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(600)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("gave up waiting for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("an update posted by a process that ends at once reaches a fresh Redis (the script sent in full)")
    func postedToFreshRedis() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let address = try SharedStateAddress(parsing: redis.url, source: "X")
        let setter = RedisScript("redis.call('SET', KEYS[1], ARGV[1]) return 1")
        do {
            // One short-lived process: posts once and is gone, never reading the answer.
            let short = SharedState(address: address, timeout: 10, warn: { _ in })
            await short.post(setter, keys: ["posted"], arguments: [Array("landed".utf8)])
        }
        let other = SharedState(address: address, timeout: 10, warn: { _ in })
        try await until("the posted update") {
            other.command([Array("GET".utf8), Array("posted".utf8)]) == .string(Array("landed".utf8))
        }
        #expect(await other.command([Array("GET".utf8), Array("posted".utf8)]) == .string(Array("landed".utf8)))
    }

    @Test(
        "an update posted holding waits, unwritten, for the next command and goes out before it, in order, NOSCRIPT too"
    )
    func heldUntilNextCommand() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let address = try SharedStateAddress(parsing: redis.url, source: "X")
        // Held for up to an hour: only the next command (or the process's end) writes it here.
        let shared = SharedState(address: address, timeout: 30, warn: { _ in }, holdLimit: .seconds(3600))
        let other = SharedState(address: address, timeout: 30, warn: { _ in })
        let setter = RedisScript("redis.call('SET', KEYS[1], ARGV[1]) return 1")
        let getter = RedisScript("return redis.call('GET', KEYS[1])")
        let bytes = { (text: String) in Array(text.utf8) }
        // A script this process has not seen Redis run goes in full, at once, even when it may be held.
        await shared.post(setter, keys: ["k"], arguments: [bytes("0")], holding: true)
        #expect(!shared.holdsUpdates)
        try await until("the first update") { other.command([bytes("GET"), bytes("k")]) == .string(bytes("0")) }
        await shared.post(setter, keys: ["k"], arguments: [bytes("1")], holding: true)
        await shared.post(setter, keys: ["k"], arguments: [bytes("2")], holding: true)
        #expect(shared.holdsUpdates)
        // Not written: Redis still has the first value (another connection's command after them).
        #expect(await other.command([bytes("GET"), bytes("k")]) == .string(bytes("0")))
        // The next command takes them along, before itself; their replies are read before its own.
        #expect(await shared.evaluate(getter, keys: ["k"], arguments: []) == .string(bytes("2")))
        #expect(!shared.holdsUpdates)
        #expect(await shared.evaluate(getter, keys: ["k"], arguments: []) == .string(bytes("2")))
        // Redis forgot the scripts: the held one's NOSCRIPT is sent again in full before the
        // next script (itself NOSCRIPT), in their order.
        _ = await other.command(["SCRIPT", "FLUSH"].map(bytes))
        await shared.post(setter, keys: ["k"], arguments: [bytes("3")], holding: true)
        #expect(shared.holdsUpdates)
        #expect(await shared.evaluate(getter, keys: ["k"], arguments: []) == .string(bytes("3")))
        // A plain command takes held updates along too.
        await shared.post(setter, keys: ["k"], arguments: [bytes("4")], holding: true)
        #expect(await shared.command([bytes("GET"), bytes("k")]) == .string(bytes("4")))

        // On a caller thread (a Python thread, as the governor runs) the held updates and the
        // next script go out in one write, the held ones first.
        let caller = TestCallerThread()
        let onCaller = SharedState(
            address: address, timeout: 30, warn: { _ in }, caller: caller.hook, holdLimit: .seconds(3600))
        let count = RedisScript("return redis.call('INCR', KEYS[1])")
        let double = RedisScript("return redis.call('SET', KEYS[1], 2 * tonumber(redis.call('GET', KEYS[1])))")
        let replies = try await caller.run {
            var seen: [RedisReply?] = []
            seen.append(await onCaller.evaluate(count, keys: ["n"], arguments: []))
            await onCaller.post(double, keys: ["n"], arguments: [], holding: true)
            await onCaller.post(double, keys: ["n"], arguments: [], holding: true)
            seen.append(await onCaller.evaluate(count, keys: ["n"], arguments: []))
            await onCaller.post(double, keys: ["n"], arguments: [], holding: true)
            let held = onCaller.holdsUpdates
            seen.append(await onCaller.evaluate(count, keys: ["n"], arguments: []))
            // Forgotten by Redis: the held script and the next one both NOSCRIPT, sent again in
            // full in their order.
            _ = await other.command(["SCRIPT", "FLUSH"].map { Array($0.utf8) })
            await onCaller.post(double, keys: ["n"], arguments: [], holding: true)
            seen.append(await onCaller.evaluate(count, keys: ["n"], arguments: []))
            seen.append(held ? .status("held") : nil)
            return seen
        }.value
        // 1; (1, sent in full at once) 2, 4 → 5; 10 → 11; 22 → 23.
        #expect(replies == [.integer(1), .integer(5), .integer(11), .integer(23), .status("held")])
        // Read on the caller's thread (waiting on its driver when a reply was not in yet; on a
        // busy machine every reply may already be there when it looks: no wait is then due).
        #expect(caller.hostedDriver && onCaller.evaluationsHandedOff == 0)
    }

    @Test("a held update goes out by itself within the hold limit, and at the process's end (atexit)")
    func heldWrittenLater() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let address = try SharedStateAddress(parsing: redis.url, source: "X")
        let other = SharedState(address: address, timeout: 30, warn: { _ in })
        let setter = RedisScript("redis.call('SET', KEYS[1], ARGV[1]) return 1")
        let bytes = { (text: String) in Array(text.utf8) }
        // The default limit (10 ms): written by the connection's thread, with no other command.
        let soon = SharedState(address: address, timeout: 30, warn: { _ in })
        await soon.post(setter, keys: ["a"], arguments: [bytes("first")])
        await soon.post(setter, keys: ["a"], arguments: [bytes("held")], holding: true)
        try await until("the held update, written by the connection's thread") {
            other.command([bytes("GET"), bytes("a")]) == .string(bytes("held"))
        }
        #expect(!soon.holdsUpdates)
        // An hour's limit: what the exit hook writes (RedisWorker.writeAllHeld, run by atexit).
        let parked = SharedState(address: address, timeout: 30, warn: { _ in }, holdLimit: .seconds(3600))
        await parked.post(setter, keys: ["b"], arguments: [bytes("first")])
        await parked.post(setter, keys: ["b"], arguments: [bytes("at exit")], holding: true)
        #expect(parked.holdsUpdates)
        RedisWorker.writeAllHeld()
        try await until("the update written at exit") {
            other.command([bytes("GET"), bytes("b")]) == .string(bytes("at exit"))
        }
        #expect(!parked.holdsUpdates)
    }

    @Test(
        "the governor holds back only a routine answer's record: not a probe's, not under a concurrency cap, not one that spent the budget"
    )
    func governorHoldsRoutineRecords() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let loop = try await Loopback.start()
        let address = try SharedStateAddress(parsing: redis.url, source: "X")
        let shared = SharedState(address: address, timeout: 10, warn: { _ in }, holdLimit: .seconds(3600))
        let api = governed(loop, shared)
        loop.server.setBudget(limit: 3, window: 3600, manualWindows: true)
        // The first request probes the unknown budget: its record goes at once.
        _ = try await api.send(Request("GET", "/users/octocat", query: [("n", "1")]))
        #expect(!shared.holdsUpdates)
        // A routine answer (budget left): held for the next command.
        _ = try await api.send(Request("GET", "/users/octocat", query: [("n", "2")]))
        #expect(shared.holdsUpdates)
        // The next request's reservation takes it along: 1 left after it by the server's count.
        _ = try await api.send(Request("GET", "/users/octocat", query: [("n", "3")]))
        // That answer spent the budget (0 left): written at once; the state read through the
        // same connection shows every record run and no lease left.
        #expect(!shared.holdsUpdates)
        let state = governorState(shared, "core:remaining")
        #expect(state.value == "0" && state.leases == 0, "\(state)")
        try await loop.close()

        // Under APIMACRO_MAX_CONCURRENCY a lease holds a slot: every record goes at once.
        let capped = try await Loopback.start()
        let cappedShared = SharedState(address: address, timeout: 10, warn: { _ in }, holdLimit: .seconds(3600))
        _ = await cappedShared.command([Array("FLUSHALL".utf8)])
        let cappedAPI = governed(capped, cappedShared, limits: GovernorLimits(maxConcurrency: 4))
        capped.server.setBudget(limit: 50, window: 3600, manualWindows: true)
        for index in 0..<3 {
            _ = try await cappedAPI.send(Request("GET", "/users/octocat", query: [("n", "\(index)")]))
            #expect(!cappedShared.holdsUpdates, "request \(index)")
        }
        try await capped.close()
    }

    @Test("an array reply that declares two billion elements is refused at once (hiredis would allocate and walk them)")
    func hugeArrayReply() async throws {
        let (outcome, warnings) = try await askRefused(.raw("*2000000000\r\n:1\r\n"), timeout: 60)
        #expect(outcome?.hungUp == true)
        #expect(warnings.count == 1 && warnings.first?.contains("more than 4096 elements") == true, "\(warnings)")
    }

    @Test(
        "on a caller thread (a Python thread) a script's reply is waited for there, with the call's sockets: the same replies, NOSCRIPT sent again in full"
    )
    func scriptsOnTheCallerThread() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let caller = TestCallerThread()
        let shared = SharedState(
            address: try SharedStateAddress(parsing: redis.url, source: "X"), timeout: 60, warn: { _ in },
            caller: caller.hook)
        try shared.connect()
        let count = RedisScript("return redis.call('INCR', KEYS[1])")
        let add = RedisScript("return redis.call('INCRBY', KEYS[1], 10)")
        let replies = try await caller.run {
            var seen: [RedisReply?] = []
            // A fresh Redis knows neither script: NOSCRIPT, then the text.
            seen.append(await shared.evaluate(count, keys: ["n"], arguments: []))
            await shared.post(add, keys: ["n"], arguments: [])
            seen.append(await shared.evaluate(count, keys: ["n"], arguments: []))
            // Forgotten by Redis, not by this process: the posted call and the awaited one both
            // come back NOSCRIPT and are sent again in full, in their order.
            _ = await shared.command(["SCRIPT", "FLUSH"].map { Array($0.utf8) })
            await shared.post(add, keys: ["n"], arguments: [])
            seen.append(await shared.evaluate(count, keys: ["n"], arguments: []))
            return seen
        }.value
        #expect(replies == [.integer(1), .integer(12), .integer(23)])
        // The replies were read on the caller's thread, with its driver (no transfer ran in this
        // call); whether it had to wait for one depends on the machine's speed, not checked.
        #expect(caller.hostedDriver && shared.evaluationsHandedOff == 0)
    }

    @Test(
        "on a caller thread a script goes out before the reply of a command posted ahead of it is read: one wait for both"
    )
    func scriptNotHeldBehindAPostedReply() async throws {
        // The fake answers the posted command only once the next one has arrived: a client that
        // reads the posted reply before it writes the script (two waits a request) gets nothing
        // until its 30 s timeout.
        let hostile = try HostileRedis.start(.answerTogether(commands: 2, replies: ":1\r\n:2\r\n", thenRead: false))
        let warnings = Warnings()
        let caller = TestCallerThread()
        let shared = SharedState(
            address: SharedStateAddress(host: "127.0.0.1", port: hostile.port), timeout: 30, warn: warnings.add,
            caller: caller.hook)
        let reply = try await caller.run {
            await shared.post(RedisScript("return 1"), keys: ["k"], arguments: [])
            return await shared.evaluate(RedisScript("return 2"), keys: ["k"], arguments: [])
        }.value
        #expect(reply == .integer(2), "\(String(describing: reply)) \(warnings.all)")
        #expect(hostile.result()?.allSeen == true)
        #expect(caller.hostedDriver)
        #expect(warnings.all.isEmpty, "\(warnings.all)")
    }

    @Test(
        "a posted script's NOSCRIPT read after the next script's answer: the posted one goes again in full, the answer kept"
    )
    func postedNoScriptAfterTheAnswer() async throws {
        // Another client loaded the awaited script between the two (a race after SCRIPT FLUSH):
        // the posted update must still reach Redis, as if it had arrived a moment later.
        let hostile = try HostileRedis.start(
            .answerTogether(commands: 3, replies: ":0\r\n-NOSCRIPT No matching script.\r\n:2\r\n", thenRead: true))
        let warnings = Warnings()
        let caller = TestCallerThread()
        let shared = SharedState(
            address: SharedStateAddress(host: "127.0.0.1", port: hostile.port), timeout: 30, warn: warnings.add,
            caller: caller.hook)
        let posted = RedisScript("return 'the posted update'")
        let reply = try await caller.run {
            // The first post goes in full; the second by its digest (this process has seen it).
            await shared.post(posted, keys: ["k"], arguments: [])
            await shared.post(posted, keys: ["k"], arguments: [])
            return await shared.evaluate(RedisScript("return 2"), keys: ["k"], arguments: [])
        }.value
        #expect(reply == .integer(2), "\(String(describing: reply)) \(warnings.all)")
        let outcome = hostile.result()
        #expect(outcome?.allSeen == true)
        let next = String(decoding: outcome?.next ?? [], as: UTF8.self)
        #expect(next.contains("$4\r\nEVAL\r\n") && next.contains("the posted update"), "\(next)")
        #expect(warnings.all.isEmpty, "\(warnings.all)")
    }

    @Test("on a caller thread too, a dripping reply is bounded by the timeout and a huge one by its size")
    func hostileRepliesOnTheCallerThread() async throws {
        for (answer, timeout, reason) in [
            (HostileRedis.Answer.drip(bytes: 2000, milliseconds: 25), 5.0, "no answer in time"),
            (.huge(bytes: 200_000_000), 60, "a reply larger than"),
        ] {
            let hostile = try HostileRedis.start(answer)
            let warnings = Warnings()
            let caller = TestCallerThread()
            let shared = SharedState(
                address: SharedStateAddress(host: "127.0.0.1", port: hostile.port), timeout: timeout,
                warn: warnings.add, caller: caller.hook)
            let reply = try await caller.run {
                await shared.evaluate(RedisScript("return 1"), keys: ["k"], arguments: [])
            }.value
            #expect(reply == nil, "read \(String(describing: reply))")
            let outcome = hostile.result()
            #expect(outcome?.commandSeen == true && outcome?.hungUp == true, "\(String(describing: outcome))")
            #expect(caller.hostedDriver)
            #expect(warnings.all.count == 1 && warnings.all.first?.contains(reason) == true, "\(warnings.all)")
        }
    }

    /// Sends one `GET k` to a fake Redis answering with `answer`, expects no reply to come
    /// of it, and returns what the fake saw and the warnings printed.
    func askRefused(
        _ answer: HostileRedis.Answer, timeout: Double, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (outcome: HostileRedis.Outcome?, warnings: [String]) {
        let hostile = try HostileRedis.start(answer)
        let warnings = Warnings()
        let shared = SharedState(
            address: SharedStateAddress(host: "127.0.0.1", port: hostile.port), timeout: timeout, warn: warnings.add)
        let reply = await shared.command([Array("GET".utf8), Array("k".utf8)])
        let refused = reply == nil
        #expect(refused, "read \(reply?.bytes?.count ?? 0) bytes", sourceLocation: sourceLocation)
        return (hostile.result(), warnings.all)
    }
}
