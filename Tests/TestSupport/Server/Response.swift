import NIOHTTP1

/// An answer a route produces, before the server adds its common headers.
struct Response: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    /// A precomputed ETag for large cached bodies (else the server hashes the body).
    var etag: String?
    /// Wait this long before sending (scheduled on the event loop).
    var delayMilliseconds: Int
    /// A body that never ends (hostile routes); replaces `body`.
    var hostile: HostileBody?
    /// Whether the server adds its GitHub-style `x-ratelimit-*` headers (false for the APIs
    /// that send none, such as Bitly and Shlink; the budget mode adds its own regardless).
    var sendsRateLimitHeaders = true

    init(
        status: Int, headers: [(String, String)] = [], body: [UInt8] = [], etag: String? = nil,
        delayMilliseconds: Int = 0
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.etag = etag
        self.delayMilliseconds = delayMilliseconds
    }

    static let jsonContentType = "application/json; charset=utf-8"

    /// A JSON answer.
    static func json(_ value: JSON, status: Int = 200, headers: [(String, String)] = []) -> Response {
        Response(status: status, headers: [("Content-Type", jsonContentType)] + headers, body: value.bytes)
    }

    /// `{"message": message}` with this status.
    static func message(_ message: String, status: Int, headers: [(String, String)] = []) -> Response {
        json(.object([("message", .string(message))]), status: status, headers: headers)
    }

    /// The generic 404 `{"message":"Not Found"}`.
    static let notFound = message("Not Found", status: 404)

    /// A 400 naming what was wrong with the request.
    static func badRequest(_ why: String) -> Response { message(why, status: 400) }

    /// A text answer in UTF-8.
    static func text(_ text: String, contentType: String = "text/plain; charset=utf-8", status: Int = 200) -> Response {
        Response(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }

    /// The reason phrase HTTP gives `status` ("Not Found"), or "status N" for unknown codes.
    static func reasonPhrase(_ status: Int) -> String {
        let phrase = HTTPResponseStatus(statusCode: status).reasonPhrase
        return phrase.isEmpty ? "status \(status)" : phrase
    }

    /// The first header named `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// Replaces every header named `name` (case-insensitive) with one field.
    mutating func setHeader(_ name: String, _ value: String) {
        removeHeader(name)
        headers.append((name, value))
    }

    /// Adds the header only if none with that name is present.
    mutating func addDefaultHeader(_ name: String, _ value: String) {
        if header(name) == nil { headers.append((name, value)) }
    }

    /// Removes every header named `name` (case-insensitive).
    mutating func removeHeader(_ name: String) {
        headers.removeAll { $0.0.lowercased() == name.lowercased() }
    }
}

/// Strong validators: a quoted 128-bit FNV-1a hash of the body, as 32 hex digits.
enum ETag {
    static func of(_ bytes: [UInt8]) -> String {
        var first: UInt64 = 0xCBF2_9CE4_8422_2325
        var second: UInt64 = 0x8422_2325_CBF2_9CE4
        for byte in bytes {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            second = (second ^ UInt64(byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
        }
        return "\"" + hex(first) + hex(second) + "\""
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether an `If-None-Match` value (a list, possibly weak, or `*`) matches `etag`.
    static func matches(ifNoneMatch: String, etag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { candidate in
            var tag = candidate.trimmed(of: " \t")
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}

extension StringProtocol {
    /// The string without leading and trailing characters from `set`.
    func trimmed(of set: String) -> String {
        let characters = Set(set)
        var slice = Substring(self)
        while let first = slice.first, characters.contains(first) { slice.removeFirst() }
        while let last = slice.last, characters.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
