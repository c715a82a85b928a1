/// A request resolved against its client and ready for the wire: an absolute
/// URL, the final headers and body bytes.
///
/// Stages pass it down and may change it.
public struct Exchange: Sendable {
    public var method: String
    /// Absolute `http(s)` URL.
    public var url: String { didSet { origin = Origin(url: url) } }
    public var headers: Headers
    public var body: [UInt8]
    /// Seconds before the request fails with `Timeout`.
    public var timeout: Double
    /// Whether an error status raises (the default) or comes back as a response
    /// (`Request.validatesStatus`, e.g., `apimacro.request(..., raise_for_status=False)`).
    public var validatesStatus = true
    /// What the call asks of the HTTP cache (`Request.cache`); nil: the headers' rules alone.
    public var cache: CacheChoice?
    /// Whether a retry cannot repeat a side effect.
    public var isIdempotent: Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS": true
        default: false
        }
    }
    /// Which attempt at the request this is (1: the first), as `RetryStage` counts them.
    public var attempt = 1
    /// How many attempts `RetryStage` may make (1 when it retries nothing: no stage, or a POST).
    public var attemptLimit = 1
    /// When the innermost waiting stage got it (`Pipeline.timed`).
    var stageEntered = ContinuousClock.now
    /// Milliseconds `RateLimitStage`, above the HAR recorder, waited before sending this attempt.
    var heldAbove = 0.0
    /// Set by `APIClient.answerAtOnce` for the cache stage: what it read when it could not
    /// answer at once, for the asynchronous way to use (`CachePrefetch`).
    var prefetch: CachePrefetch?

    public init(method: String, url: String, headers: Headers, body: [UInt8], timeout: Double) {
        self.init(method: method, url: url, origin: Origin(url: url), headers: headers, body: body, timeout: timeout)
    }

    /// An exchange whose `url`'s origin (`Origin(url:)`) is known already.
    init(method: String, url: String, origin: Origin?, headers: Headers, body: [UInt8], timeout: Double) {
        self.method = method
        self.url = url
        self.origin = origin
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// Scheme, host and port of the URL (lower-cased; default ports filled in), read once per
    /// URL: every stage and the transport ask for it.
    public private(set) var origin: Origin?
}
