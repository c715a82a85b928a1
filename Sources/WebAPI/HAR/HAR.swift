public import Platform

/// An HTTP Archive (HAR 1.2, http://www.softwareishard.com/blog/har-12-spec/).
///
/// Written by `--record`, read by `--replay`. Reading is tolerant: only an
/// entry's method, URL and status are required, and the fields browsers add
/// (`pages`, `_initiator`, `_resourceType`, …) are ignored.
public struct HAR: Codable, Sendable {
    public var log: Log

    public init(log: Log) { self.log = log }

    /// The archive's root.
    public struct Log: Codable, Sendable {
        public var version: String?
        public var creator: Creator?
        public var entries: [Entry]
    }

    /// The program that wrote the file.
    public struct Creator: Codable, Sendable {
        public var name: String
        public var version: String
    }

    /// One exchange.
    public struct Entry: Codable, Sendable {
        public var startedDateTime: String?
        /// Milliseconds from the request to the end of the response.
        public var time: Double?
        public var request: Request
        public var response: Response
        public var cache: Cache?
        public var timings: Timings?
        /// apimacro writes where the answer came from (`network`, `cache hit`, …).
        public var comment: String?
    }

    /// A request.
    public struct Request: Codable, Sendable {
        public var method: String
        public var url: String
        public var httpVersion: String?
        public var cookies: [NameValue]?
        public var headers: [NameValue]?
        public var queryString: [NameValue]?
        public var postData: PostData?
        public var headersSize: Int?
        public var bodySize: Int?
    }

    /// A response.
    public struct Response: Codable, Sendable {
        public var status: Int
        public var statusText: String?
        public var httpVersion: String?
        public var cookies: [NameValue]?
        public var headers: [NameValue]?
        public var content: Content?
        public var redirectURL: String?
        public var headersSize: Int?
        public var bodySize: Int?
    }

    /// A header, cookie or query parameter (cookies' other fields are ignored).
    public struct NameValue: Codable, Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A request body.
    public struct PostData: Codable, Sendable {
        public var mimeType: String?
        public var text: String?
        /// apimacro's extension: `base64` when `text` holds a binary body.
        public var encoding: String?
    }

    /// A response body, decoded (`encoding: base64` for binary bodies).
    public struct Content: Codable, Sendable {
        public var size: Int?
        public var mimeType: String?
        public var text: String?
        public var encoding: String?
    }

    /// The entry's cache state (apimacro writes an empty object).
    public struct Cache: Codable, Sendable {}

    /// Phases of the exchange in milliseconds (-1: not applicable).
    ///
    /// apimacro writes `blocked` as everything before the transfer (its waits and the pipeline's
    /// own time), `connect` with `ssl` inside it as HAR 1.2 says, and the parts of `blocked` in
    /// its own fields: `_queued` (a place among the requests in flight), `_throttled` (a rate
    /// limit, pace or governor), `_retried` (earlier attempts and their backoff) and `_retries`.
    public struct Timings: Codable, Sendable {
        public var blocked: Double?
        public var dns: Double?
        public var connect: Double?
        public var send: Double?
        public var wait: Double?
        public var receive: Double?
        public var ssl: Double?
        public var queued: Double?
        public var throttled: Double?
        public var retried: Double?
        public var retries: Int?

        enum CodingKeys: String, CodingKey {
            case blocked, dns, connect, send, wait, receive, ssl
            case queued = "_queued"
            case throttled = "_throttled"
            case retried = "_retried"
            case retries = "_retries"
        }

        public init(
            blocked: Double? = nil, dns: Double? = nil, connect: Double? = nil, send: Double? = nil,
            wait: Double? = nil, receive: Double? = nil, ssl: Double? = nil
        ) {
            self.blocked = blocked
            self.dns = dns
            self.connect = connect
            self.send = send
            self.wait = wait
            self.receive = receive
            self.ssl = ssl
        }

        /// The timings of an exchange that took `total` milliseconds, with `timing`'s phases
        /// (a transfer's, or none for an answer from the cache or a recording): what the phases
        /// leave of `total` is `blocked`, so the non-negative ones add up to `total`.
        public init(total: Double, timing: WebAPI.Response.Timing) {
            func phase(_ value: Double) -> Double { value < 0 ? -1 : value }
            let connect = timing.connect < 0 ? -1 : timing.connect + max(0, timing.ssl)
            let transfer = [timing.dns, connect, timing.send, timing.wait, timing.receive].map { max(0, $0) }
                .reduce(0, +)
            let rounded = { (value: Double) in (value * 1000).rounded() / 1000 }
            self.init(
                blocked: rounded(max(0, total - transfer)), dns: phase(timing.dns), connect: connect,
                send: max(0, timing.send), wait: max(0, timing.wait), receive: max(0, timing.receive),
                ssl: phase(timing.ssl))
            if timing.queued > 0 { queued = timing.queued }
            if timing.throttled > 0 { throttled = timing.throttled }
            // The first attempt's own passage through the retry stage is no retry.
            if timing.retries > 0 {
                retried = timing.retried
                retries = timing.retries
            }
        }
    }
}

extension HAR {
    /// Reads a HAR file; a file that cannot be read or is not a HAR is an
    /// `invalidRequest` error naming it (a usage error for the command line).
    public static func read(_ file: URL) throws -> HAR {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw APIError(.invalidRequest, "cannot read the HAR file \(file.path): \(SystemErrorText.reason(error))")
        }
        return try decode(data, name: file.path)
    }

    /// Decodes a HAR document; `name` (its path) goes in the error message.
    public static func decode(_ data: Data, name: String) throws -> HAR {
        do {
            return try JSONDecoder().decode(HAR.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw APIError(.invalidRequest, "\(name) is not a HAR file: \(path(context.codingPath + [key])) is missing")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw APIError(.invalidRequest, "\(name) is not a HAR file: \(path(context.codingPath)) has the wrong type")
        } catch {
            throw APIError(.invalidRequest, "\(name) is not a HAR file (not JSON)")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined().trimmingScalars { $0 == "." }
    }

    /// The body of a response or request: `text`, base64-decoded when marked so.
    static func bytes(text: String?, encoding: String?) -> [UInt8] {
        guard let text else { return [] }
        if encoding?.lowercased() == "base64", let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) {
            return Array(data)
        }
        return Array(text.utf8)
    }
}
