/// The one error that flows up from WebAPI: a kind, the status, the redacted
/// URL, the body (at most 4 KiB) and retry information.
///
/// Its description never holds a secret (URLs are redacted before they get
/// here).
public struct APIError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong, in the terms of SPEC §3's exception table.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable {
            case network, timeout, http, notFound, unauthorized, forbidden, rateLimited, parse, auth, offline, cancelled
            case invalidRequest
        }
        private let code: Code

        public static let network = Kind(code: .network)
        public static let timeout = Kind(code: .timeout)
        public static let http = Kind(code: .http)
        public static let notFound = Kind(code: .notFound)
        public static let unauthorized = Kind(code: .unauthorized)
        public static let forbidden = Kind(code: .forbidden)
        public static let rateLimited = Kind(code: .rateLimited)
        public static let parse = Kind(code: .parse)
        public static let auth = Kind(code: .auth)
        public static let offline = Kind(code: .offline)
        /// The caller cancelled (Ctrl-C): never reported as a network error.
        public static let cancelled = Kind(code: .cancelled)
        /// The request itself is malformed (bad URL, bad value): a `ValueError` in Python.
        public static let invalidRequest = Kind(code: .invalidRequest)

        public var description: String { code.rawValue }
    }

    public let kind: Kind
    /// The human message (for Python: `str(exception)`).
    public let message: String
    public let status: Int?
    /// The URL, credentials redacted.
    public let url: String?
    /// The client name (`github`, …).
    public var api: String?
    /// The response text, truncated to 4 KiB.
    public let body: String?
    /// For rate limits: when the limit resets (epoch seconds).
    public let resetAt: Int?
    /// For rate limits: how long to wait, in seconds.
    public let retryAfter: Double?
    /// False for a network failure that sending again cannot cure (a body over the size cap,
    /// a decompression bomb): `RetryStage` gives up at once.
    public var isRetryable = true
    /// What the API's own error envelope says besides the message, each an attribute of the
    /// Python exception (Instagram's Graph API: `code`, `subcode`, `fbtrace_id`); empty for most.
    public var details: [Detail] = []

    /// One fact of an API's error envelope, named as the Python exception's attribute.
    public struct Detail: Sendable, Equatable {
        /// A value from an envelope: a number, a text, or absent (`None`).
        public enum Value: Sendable, Equatable {
            case int(Int)
            case string(String)
            case none
        }

        /// The attribute's name (`code`).
        public let name: String
        /// Its value.
        public let value: Value

        /// The fact `name` = `value`.
        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }
    /// The API's own list of what was wrong with the request, as JSON text (GitHub's 422
    /// `errors`: which field, which code), redacted; nil when the answer held none.
    ///
    /// A client declares where it is (`ClientConfiguration.errorList`); Python sees it as
    /// the exception's `errors` list.
    public var errorList: String?
    /// Whether a rate limit is one of the API's secondary limits (GitHub's "You have exceeded
    /// a secondary rate limit"), which no rate-limit header announces; Python's
    /// `RateLimited.secondary`.
    public var isSecondary = false

    public init(
        _ kind: Kind, _ message: String, status: Int? = nil, url: String? = nil, api: String? = nil,
        body: String? = nil, resetAt: Int? = nil, retryAfter: Double? = nil
    ) {
        self.kind = kind
        self.message = message
        self.status = status
        self.url = url
        self.api = api
        self.body = body.map { APIError.truncate($0) }
        self.resetAt = resetAt
        self.retryAfter = retryAfter
    }

    /// The most a body keeps: 4 KiB of UTF-8, cut at a character boundary.
    public static let bodyLimit = 4096

    static func truncate(_ text: String) -> String {
        guard text.utf8.count > bodyLimit else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: bodyLimit)
        while end > text.startIndex, !text.unicodeScalars.indices.contains(end) {
            end = text.utf8.index(before: end)
        }
        return String(text[..<end])
    }

    public var description: String { message }

    /// The error for a non-2xx response.
    public static func status(_ response: Response, api: String?, method: String, message: String?) -> APIError {
        let kind: Kind
        switch response.status {
        case 401: kind = .unauthorized
        case 403: kind = .forbidden
        case 404: kind = .notFound
        case 429: kind = .rateLimited
        default: kind = .http
        }
        let reason = HTTPStatus.reason(response.status)
        var text = "\(method) \(response.url) → \(response.status) \(reason)"
        if let message, !message.isEmpty { text += ": \(message)" }
        return APIError(kind, text, status: response.status, url: response.url, api: api, body: response.text)
    }
}

/// Reason phrases for the statuses users meet.
public enum HTTPStatus {
    /// "Not Found" for 404; "HTTP 418" for a status it does not name.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 422: "Unprocessable Entity"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "HTTP \(status)"
        }
    }
}
