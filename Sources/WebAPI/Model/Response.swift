import Platform

/// HTTP headers: ordered, repeatable, looked up without regard to case.
public struct Headers: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Headers of these fields as they are (no copy into labelled pairs).
    init(fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    /// The first value of `name`, any case.
    public subscript(name: String) -> String? {
        fields.first { Headers.sameName($0.name, name) }?.value
    }

    /// Every value of `name`, any case.
    public func values(_ name: String) -> [String] {
        var found: [String] = []
        for field in fields where Headers.sameName(field.name, name) { found.append(field.value) }
        return found
    }

    /// Replaces every field of `name` with one value.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field of `name`.
    public mutating func remove(_ name: String) {
        guard fields.contains(where: { Headers.sameName($0.name, name) }) else { return }
        fields.removeAll { Headers.sameName($0.name, name) }
    }

    /// Whether two field names are the same, ASCII letters compared without regard to case
    /// (RFC 9110 §5.1: names are tokens); no lower-cased copies are made.
    static func sameName(_ a: String, _ b: String) -> Bool {
        let (a, b) = (a.utf8, b.utf8)
        guard a.count == b.count else { return false }
        let compared = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in sameName(x, y) }
        }
        if let compared, let compared { return compared }
        return a.elementsEqual(b, by: sameByte)
    }

    /// `sameName` of two names of the same length, eight bytes at a time.
    ///
    /// Equal words pass, words that differ even with every byte's 0x20 bit set (ASCII case)
    /// fail at once, and only the rest are compared byte by byte. Most lookups compare names of
    /// one length that differ (`x-ratelimit-limit` and `x-ratelimit-reset`) or that are the
    /// same bytes.
    private static func sameName(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = x.count
        var index = 0
        if count >= 8, let left = x.baseAddress, let right = y.baseAddress {
            let (left, right) = (UnsafeRawPointer(left), UnsafeRawPointer(right))
            let caseBits: UInt64 = 0x2020_2020_2020_2020
            while index + 8 <= count {
                let p = left.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let q = right.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if p != q {
                    guard p | caseBits == q | caseBits else { return false }
                    for at in index..<(index + 8) where !sameByte(x[at], y[at]) { return false }
                }
                index += 8
            }
        }
        while index < count {
            guard sameByte(x[index], y[index]) else { return false }
            index += 1
        }
        return true
    }

    /// Whether two field lists are the same names and values, byte for byte, in order: not
    /// String's ==, which takes canonically equivalent text as equal ("e\u{301}" and "é", a
    /// Kelvin sign and K), while the wire and the keys derived from a request see bytes.
    static func sameBytes(_ a: [(name: String, value: String)], _ b: [(name: String, value: String)]) -> Bool {
        guard a.count == b.count else { return false }
        for index in a.indices {
            guard sameBytes(a[index].name, b[index].name), sameBytes(a[index].value, b[index].value) else {
                return false
            }
        }
        return true
    }

    /// Whether two strings are the same UTF-8 bytes.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        let (a, b) = (a.utf8, b.utf8)
        guard a.count == b.count else { return false }
        // A native string's bytes in place (no copy to make it mutable, as `withUTF8` needs).
        let compared = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in
                guard let left = x.baseAddress, let right = y.baseAddress else { return true }  // both empty
                return memcmp(left, right, x.count) == 0
            }
        }
        if let compared, let compared { return compared }
        return a.elementsEqual(b)
    }

    /// Whether two bytes of a field name are the same letter in any case, or the same byte.
    @inline(__always)
    private static func sameByte(_ x: UInt8, _ y: UInt8) -> Bool {
        if x == y { return true }
        let folded = x | 0x20
        return folded == y | 0x20 && folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "z")
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// A response as it came back, after redirects.
public struct Response: Sendable {
    /// The status code.
    public let status: Int
    /// The response headers.
    public let headers: Headers
    /// The body, decompressed.
    public let body: [UInt8]
    /// The URL that answered (after redirects), with credentials redacted.
    public let url: String
    /// How the response was obtained (for `-v` and statistics).
    public var source: Source
    /// Where the time went: the transport's phases and the pipeline's waits (for the HAR's `timings`).
    public var timing = Timing()

    public init(status: Int, headers: Headers, body: [UInt8], url: String, source: Source = .network) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.source = source
    }

    /// Where a response came from.
    public enum Source: String, Sendable {
        case network
        case cacheHit = "cache hit"
        /// From the cache shared by every process (`APIMACRO_SHARED_STATE`), fetched by another one.
        case sharedHit = "shared cache hit"
        case revalidated = "revalidated (304)"
        case stale
        case replay
    }

    /// Where an exchange's time went, in milliseconds, for the HAR's `timings` and the report's
    /// waterfall: libcurl's phases of the transfer that answered (-1 when it did not happen: a
    /// reused connection has no DNS, connect or TLS; an answer from the cache has none at all), and
    /// what the pipeline's stages waited before sending it (`Pipeline` measures them).
    public struct Timing: Sendable, Equatable {
        /// Name resolution.
        public var dns = -1.0
        /// The TCP connect (TLS excluded).
        public var connect = -1.0
        /// The TLS handshake.
        public var ssl = -1.0
        /// Sending the request.
        public var send = -1.0
        /// From the request sent to the first byte of the answer (time to first byte).
        public var wait = -1.0
        /// Receiving the answer.
        public var receive = -1.0
        /// Waiting for a place among the client's requests in flight.
        public var queued = 0.0
        /// Waiting for a rate limit, the secondary-limit pace, the shared governor or usage.
        public var throttled = 0.0
        /// Earlier attempts and the backoff between them, before the one that answered.
        public var retried = 0.0
        /// How many attempts came before the one that answered.
        public var retries = 0

        public init() {}

        /// Time from the link's entry to its last call of the stage below (`Pipeline`).
        var sinceStageEntry = 0.0
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: body, as: UTF8.self) }
}
