import Platform

/// One HTTP request, as a client or a macro describes it: everything the old
/// iOS clients let a caller set per request.
///
/// Unset fields take the client's defaults (`ClientConfiguration`).
public struct Request: Sendable {
    /// `GET`, `POST`, … (upper case).
    public var method: String
    /// An absolute `http(s)` URL, or a path relative to the client's base URL.
    public var target: String
    /// Query parameters, appended in order after any already in `target`.
    public var query: [(String, String)]
    /// Extra headers; they override the client's default headers of the same name.
    public var headers: [(String, String)]
    /// The body.
    public var body: Body
    /// HTTP basic credentials for this request only.
    public var basicAuth: BasicAuth?
    /// The deadline for this request (default: the client's, 30 s).
    public var timeout: Double?
    /// Whether a non-2xx status becomes an `APIError` (default true).
    public var validatesStatus: Bool
    /// What this call asks of the HTTP cache (`cache=`); nil: the bound `CacheChoice.current`,
    /// else the headers' own rules.
    public var cache: CacheChoice?
    /// The URL of the page whose answer named `target` (a `Link: rel="next"` or a `next_url`),
    /// or nil for a target the caller chose: a server-chosen target must keep to `SchemeRule`.
    public var linkedFrom: String?

    public init(
        _ method: String = "GET", _ target: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: Body = .none, basicAuth: BasicAuth? = nil, timeout: Double? = nil, validatesStatus: Bool = true
    ) {
        self.method = method.uppercased()
        self.target = target
        self.query = query
        self.headers = headers
        self.body = body
        self.basicAuth = basicAuth
        self.timeout = timeout
        self.validatesStatus = validatesStatus
    }

    /// Whether a retry cannot repeat a side effect (GET, HEAD, OPTIONS).
    public var isIdempotent: Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS": true
        default: false
        }
    }

    /// A request body.
    public enum Body: Sendable {
        case none
        /// JSON bytes, sent as `application/json`.
        case json([UInt8])
        /// Form fields, sent as `application/x-www-form-urlencoded`.
        case form([(String, String)])
        /// Fields and files, sent as `multipart/form-data`.
        case multipart([MultipartPart])
        /// Bytes sent as they are, with an optional content type.
        case raw([UInt8], contentType: String?)
    }

    /// HTTP basic credentials.
    public struct BasicAuth: Sendable {
        public let user: String
        public let password: Secret
        public init(user: String, password: Secret) {
            self.user = user
            self.password = password
        }
    }
}

/// One part of a multipart body.
public struct MultipartPart: Sendable {
    public let name: String
    public let filename: String?
    public let contentType: String?
    public let data: [UInt8]

    public init(name: String, filename: String? = nil, contentType: String? = nil, data: [UInt8]) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.data = data
    }
}

extension Request.Body {
    /// The bytes and content type to send.
    ///
    /// `boundary` is asked for only by a multipart body (a fresh one per request, made only then).
    func encoded(boundary: @autoclosure () -> String) -> (bytes: [UInt8], contentType: String?) {
        switch self {
        case .none:
            return ([], nil)
        case .json(let bytes):
            return (bytes, "application/json")
        case .form(let fields):
            return (Array(FormEncoding.encode(fields).utf8), "application/x-www-form-urlencoded")
        case .raw(let bytes, let contentType):
            return (bytes, contentType)
        case .multipart(let parts):
            let boundary = boundary()
            var out: [UInt8] = []
            func add(_ text: String) { out.append(contentsOf: text.utf8) }
            for part in parts {
                add("--\(boundary)\r\n")
                var disposition = "Content-Disposition: form-data; name=\"\(FormEncoding.quoted(part.name))\""
                if let filename = part.filename { disposition += "; filename=\"\(FormEncoding.quoted(filename))\"" }
                add(disposition + "\r\n")
                if let type = part.contentType ?? (part.filename != nil ? "application/octet-stream" : nil) {
                    add("Content-Type: \(type)\r\n")
                }
                add("\r\n")
                out.append(contentsOf: part.data)
                add("\r\n")
            }
            add("--\(boundary)--\r\n")
            return (out, "multipart/form-data; boundary=\(boundary)")
        }
    }
}

/// `application/x-www-form-urlencoded` and URL query encoding.
public enum FormEncoding {
    /// Percent-encodes one query or form component.
    ///
    /// What Foundation's `addingPercentEncoding` with the unreserved characters allowed gives (its UTF-8 bytes,
    /// `%XX` in capitals), worked on the bytes: Foundation's took ~9 k instructions a call,
    /// two calls a request (`users/{login}`).
    public static func escape(_ text: String) -> String {
        var text = text
        let plain = text.withUTF8 { bytes in !bytes.contains(where: { !isUnreserved($0) }) }
        return plain ? text : text.percentEncoded(allowing: isUnreserved)
    }

    /// RFC 3986's unreserved characters: `A-Z a-z 0-9 - . _ ~` (the characters left as they are).
    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Percent-encodes one path segment (so `../x` or `a/b` stay one segment).
    ///
    /// A segment of exactly `.` or `..` becomes `%2E` / `%2E%2E`, so it is never a dot
    /// segment that a server or proxy would resolve (`/users/..` is `/`).
    public static func pathSegment(_ text: String) -> String {
        if text == "." || text == ".." { return String(repeating: "%2E", count: text.count) }
        return escape(text)
    }

    /// `a=1&b=two%20words`.
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Escapes a quoted-string value in a header parameter.
    static func quoted(_ text: String) -> String {
        text.replacingLiteral("\\", with: "\\\\").replacingLiteral("\"", with: "\\\"")
            .replacingLiteral("\r", with: "").replacingLiteral("\n", with: "")
    }
}
