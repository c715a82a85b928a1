import Platform
import Synchronization

/// The second cache tier: stored GET responses in Redis, behind each process's SQLite cache,
/// so one machine's fetch (or ETag) serves the others.
///
/// Keyed the same way as the local cache (method, URL, credentials, body), but with keys
/// every holder of the credential derives and nobody else can (`SharedCredential`): the
/// entry's name is HMAC(HKDF(credential, "name"), request) and its status, headers and body
/// are sealed with ChaChaPoly under HKDF(credential, "seal"), bound to the name. A Redis
/// operator sees neither tokens nor bodies, and cannot find which entry belongs to which
/// request without the credential. Requests without a secret the process knows (anonymous,
/// Basic auth alone, or headers that only look like credentials: `X-Client-Key: public-demo`,
/// `Cookie: consent=yes`) do not use the tier: their keys are computable, or guessable, by
/// whoever can write to Redis, who could then plant a forged answer
/// (`SharedCredential.cacheMaterial`, `SharedCredential.isSecret`).
///
/// Bounded: each entry lives `timeToLive` seconds at most, an entry over `maximumEntryBytes`
/// is not shared, and the tier's entries add up to at most `maximumBytes` (the oldest go first).
public struct SharedCache: Sendable {
    let shared: SharedState
    public let timeToLive: Int
    public let maximumBytes: Int
    public let maximumEntryBytes: Int

    public init(
        shared: SharedState, timeToLive: Int = 86_400, maximumBytes: Int = 64_000_000,
        maximumEntryBytes: Int = 1_000_000
    ) {
        self.shared = shared
        self.timeToLive = timeToLive
        self.maximumBytes = maximumBytes
        self.maximumEntryBytes = maximumEntryBytes
    }

    /// One request's place in the tier: its credential's keys and its entry's Redis key.
    struct Slot: Sendable {
        let credential: SharedCredential
        let key: String
    }

    /// What a shared entry holds.
    struct Stored: Sendable {
        var status: Int
        var headers: Headers
        var body: [UInt8]
        var varyNames: [String]
        var storedAt: Double
        var initialAge: Double
        /// The keyed hash of the request's `Vary` header values (hex; empty when none).
        var variant: String
    }

    /// The keys (all under one hash tag, one Redis Cluster slot).
    static let prefix = "{apimacro-cache}"
    static let index = prefix + ":index"
    static let sizes = prefix + ":sizes"
    static let total = prefix + ":bytes"

    /// How many slots were worked out (each looks up or derives a credential's keys and
    /// hashes a name): a local cache hit works out none (`CacheStageTests`).
    let slotsMade = Tally()

    /// A count that only grows.
    final class Tally: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }

    /// The slot of a request whose cache key text is `text` and credential material `material`.
    func slot(keyText text: String, material: String) -> Slot {
        slotsMade.add()
        let credential = shared.credential(material: material)
        return Slot(credential: credential, key: SharedCache.prefix + ":e:" + credential.name("entry\n" + text))
    }

    /// The shared variant of a request: a keyed hash of its values of `names`.
    static func variant(_ names: [String], _ headers: Headers, credential: SharedCredential) -> String {
        names.isEmpty ? "" : credential.name("variant\n" + CachePolicy.variantText(names, headers))
    }

    /// The entry in `slot`; nil when there is none, it does not open, it is larger than any
    /// entry this tier stores, or Redis is not usable.
    ///
    /// Reads at most one byte more than the largest sealed entry (`GETRANGE`): a value planted
    /// by a writer of Redis costs no more to read than a real entry, and never a reply up to the
    /// connection's 8 MiB bound.
    func load(_ slot: Slot) async -> Stored? {
        let largest = maximumEntryBytes + SharedCache.sealingOverhead
        guard slot.credential.isSecret, shared.isAvailable,
            let sealed = await shared.command([
                Array("GETRANGE".utf8), Array(slot.key.utf8), Array("0".utf8), Array(String(largest).utf8),
            ])?.bytes,
            !sealed.isEmpty, sealed.count <= largest,
            let plain = slot.credential.unseal(sealed, context: slot.key)
        else { return nil }
        return SharedCache.decode(plain)
    }

    /// What sealing adds to an entry: ChaChaPoly's nonce (12 bytes) and tag (16).
    static let sealingOverhead = 28

    /// Stores `entry` in `slot` (replacing what was there), within the bounds.
    ///
    /// Does nothing when Redis is not usable, the entry is too large to share, or the request
    /// carries no secret credential. With `waiting` false the script is posted and its answer
    /// not waited for (`SharedState.post`).
    func store(_ entry: Stored, in slot: Slot, waiting: Bool = true) async {
        guard slot.credential.isSecret, shared.isAvailable else { return }
        let plain = SharedCache.encode(entry)
        guard plain.count <= maximumEntryBytes, let sealed = try? slot.credential.seal(plain, context: slot.key) else {
            return
        }
        let keys = [slot.key, SharedCache.index, SharedCache.sizes, SharedCache.total]
        let arguments = [
            sealed, Array(String(timeToLive * 1000).utf8), Array(String(sealed.count).utf8),
            Array(String(maximumBytes).utf8),
        ]
        if waiting {
            _ = await shared.evaluate(SharedCache.storeScript, keys: keys, arguments: arguments)
        } else {
            await shared.post(SharedCache.storeScript, keys: keys, arguments: arguments)
        }
    }

    /// Forgets the entry in `slot` (after an unsafe method changed its URL).
    func remove(_ slot: Slot) async {
        guard slot.credential.isSecret, shared.isAvailable else { return }
        _ = await shared.evaluate(
            SharedCache.removeScript, keys: [slot.key, SharedCache.index, SharedCache.sizes, SharedCache.total],
            arguments: [])
    }

    static func encode(_ entry: Stored) -> [UInt8] {
        var out: [UInt8] = []
        func append(_ value: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        let head = HTTPCache.encode(status: entry.status, varyNames: entry.varyNames, headers: entry.headers)
        append(1)  // format
        append(entry.storedAt.bitPattern)
        append(entry.initialAge.bitPattern)
        append(UInt64(entry.variant.utf8.count))
        out += entry.variant.utf8
        append(UInt64(head.count))
        out += head
        out += entry.body
        return out
    }

    static func decode(_ bytes: [UInt8]) -> Stored? {
        var index = 0
        func number() -> UInt64? {
            guard index + 8 <= bytes.count else { return nil }
            defer { index += 8 }
            return bytes[index..<(index + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        func chunk() -> ArraySlice<UInt8>? {
            guard let count = number(), count <= UInt64(bytes.count - index) else { return nil }
            defer { index += Int(count) }
            return bytes[index..<(index + Int(count))]
        }
        guard number() == 1, let storedAt = number(), let initialAge = number(), let variant = chunk(),
            let head = chunk(),
            let (status, varyNames, headers) = HTTPCache.decode(Array(head))
        else { return nil }
        return Stored(
            status: status, headers: headers, body: Array(bytes[index...]), varyNames: varyNames,
            storedAt: Double(bitPattern: storedAt), initialAge: Double(bitPattern: initialAge),
            variant: String(decoding: variant, as: UTF8.self))
    }

    /// KEYS: entry, index (entry → expiry, Redis ms), sizes (entry → bytes), total bytes.
    ///
    /// ARGV: sealed value, time to live ms, its size, the bound. Drops expired entries from the
    /// bookkeeping, stores the entry, then evicts the entries that expire first until the total fits.
    static let storeScript = RedisScript(
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local function forget(k)
          local s = tonumber(redis.call('HGET', KEYS[3], k)) or 0
          redis.call('HDEL', KEYS[3], k)
          redis.call('ZREM', KEYS[2], k)
          return redis.call('DECRBY', KEYS[4], s)
        end
        for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)) do forget(k) end
        forget(KEYS[1])
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        redis.call('HSET', KEYS[3], KEYS[1], ARGV[3])
        redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), KEYS[1])
        local total = redis.call('INCRBY', KEYS[4], ARGV[3])
        local bound = tonumber(ARGV[4])
        while total > bound do
          local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
          if #oldest == 0 then break end
          redis.call('DEL', oldest[1])
          total = forget(oldest[1])
        end
        return total
        """)

    /// KEYS as `storeScript`: removes one entry and its bookkeeping.
    static let removeScript = RedisScript(
        """
        local s = tonumber(redis.call('HGET', KEYS[3], KEYS[1])) or 0
        redis.call('DEL', KEYS[1])
        redis.call('HDEL', KEYS[3], KEYS[1])
        redis.call('ZREM', KEYS[2], KEYS[1])
        return redis.call('DECRBY', KEYS[4], s)
        """)
}
