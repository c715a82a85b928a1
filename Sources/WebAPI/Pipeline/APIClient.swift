import Logging
import Platform
import Synchronization

/// One API's connection to the pipeline: resolves requests against the base
/// URL, sends them through the stages, and remembers the last rate-limit
/// headers.
///
/// Every client (GitHub, Instagram, plugins) is built on one.
public final class APIClient: Sendable {
    public let configuration: ClientConfiguration
    private let credentialSlot: CredentialSlot
    private let pipeline: Pipeline
    private let lastRateLimit: RateLimitMemory
    /// The usage the API last reported, for a configuration with a `UsageRule`; nil otherwise.
    public let usage: UsageMemory?
    /// `configuration.defaultHeaders`, made into `Headers` once.
    private let defaultHeaders: Headers
    /// False while a HAR file answers (`--replay`): its recordings hold no credentials and
    /// need none, so a client that requires one lets its calls through.
    public let needsCredentials: Bool
    /// Whether the configuration's base URL is an http(s) URL (`SchemeRule`), decided once.
    private let baseURLIsHTTP: Bool
    /// The last URL prepared and its origin.
    private let lastOrigin = Mutex<(url: String, origin: Origin?)>(("", nil))

    /// A client on `transport`, whose pipeline `Pipeline.init(client:…)` puts together.
    ///
    /// `rateLimits` is shared by clients that count against one limit (GitHub REST and GraphQL);
    /// by default each client remembers its own.
    ///
    /// `provider`, when given, is asked for the credential before each request (a token read on
    /// first use, or renewed as it expires); it is not asked while a HAR file answers.
    public init(
        configuration: ClientConfiguration, transport: any Transport, log: ExchangeLog, redactor: Redactor,
        rateLimits: RateLimitMemory = RateLimitMemory(), provider: (any CredentialProvider)? = nil
    ) {
        self.configuration = configuration
        lastRateLimit = rateLimits
        defaultHeaders = Headers(configuration.defaultHeaders)
        needsCredentials = !((transport as? ExchangeStore)?.answersFromRecording ?? false)
        baseURLIsHTTP = SchemeRule.violation(configuration.baseURL, from: nil) == nil
        let slot = CredentialSlot(configuration.credential, redactor: redactor, provider: provider)
        credentialSlot = slot
        let usage = configuration.usage.map { _ in UsageMemory() }
        self.usage = usage
        pipeline = Pipeline(
            client: configuration, slot: slot, transport: transport, log: log, rateLimits: rateLimits, usage: usage)
    }

    /// Redacts everything this client knows to be secret, its current credential included.
    public var redactor: Redactor { credentialSlot.redactor }

    /// The credential now (a login may set it later).
    public var credential: Credential? { credentialSlot.value }

    /// Sets or clears the credential (after a login or logout).
    public func setCredential(_ credential: Credential?) { credentialSlot.set(credential) }

    /// The stages in front of the transport, outermost first.
    var stages: [any Stage] { pipeline.stages }

    /// The rate limit as last seen in response headers, or nil before the first response
    /// (always nil when the configuration does not remember it).
    public var rateLimit: RateLimitInfo? { lastRateLimit.value }

    /// Sends a request and returns the response.
    ///
    /// Errors are `APIError`s whose URLs and messages are redacted.
    public nonisolated(nonsending) func send(_ request: Request) async throws -> Response {
        try await send(prepared: try prepare(request))
    }

    /// What `answerAtOnce` gives: the answer, or the exchange to send (`send(prepared:)`).
    public enum AtOnceAnswer: Sendable {
        case answered(Response)
        /// The request prepared (`prepare`), with what was looked up for it already; nothing
        /// else was done for it.
        case later(Exchange)
    }

    /// `send(_:)`'s answer, on the calling thread and without a task, when the pipeline gives it
    /// without waiting for anything (a fresh cache hit: `Stage.answerAtOnce`); otherwise the
    /// prepared exchange, for `send(prepared:)`, which answers it as `send(_:)` would.
    ///
    /// Errors are `send(_:)`'s, redacted alike.
    public func answerAtOnce(_ request: Request) throws -> AtOnceAnswer {
        var exchange = try prepare(request)
        guard pipeline.answersAtOnce else { return .later(exchange) }
        exchange.prefetch = CachePrefetch()
        do {
            if needsCredentials, !credentialSlot.resolveAtOnce(for: exchange.url) { return .later(exchange) }
            guard let response = try pipeline.answerAtOnce(exchange) else { return .later(exchange) }
            return .answered(finished(response, exchange))
        } catch is AtOnce.Unfinished {
            exchange.prefetch = nil
            return .later(exchange)
        } catch let error as APIError {
            throw redacted(error, exchange: exchange)
        }
    }

    /// Sends an exchange `prepare` (or `answerAtOnce`) made and returns the response.
    ///
    /// Errors are `APIError`s whose URLs and messages are redacted.
    public nonisolated(nonsending) func send(prepared exchange: Exchange) async throws -> Response {
        do {
            if needsCredentials { try await credentialSlot.resolve(for: exchange.url) }
            return finished(try await pipeline.send(exchange), exchange)
        } catch let error as APIError {
            throw redacted(error, exchange: exchange)
        } catch is CancellationError {
            throw cancelled(exchange)
        }
    }

    /// The error for a call cancelled before an answer (made here, not inlined in the async
    /// frame of `send(prepared:)`).
    @inline(never)
    private func cancelled(_ exchange: Exchange) -> APIError {
        APIError(
            .cancelled, "\(exchange.method) \(redactor.redactURL(exchange.url)): cancelled", api: configuration.name)
    }

    /// The pipeline's `response` to `exchange` as the caller gets it: its poll interval noted,
    /// an echoed credential redacted from the body, its URL redacted.
    @inline(never)
    private func finished(_ response: Response, _ exchange: Exchange) -> Response {
        PollInterval.note(response.headers, url: exchange.url)
        var body = response.body
        if configuration.redactsEchoedCredential, let credential = credentialSlot.value {
            for form in Set(credential.wireForms.flatMap { [$0, FormEncoding.escape($0)] }) {
                body = Self.replacing(Array(form.utf8), in: body)
            }
        }
        return Response(
            status: response.status, headers: response.headers, body: body,
            url: redactor.redactURL(response.url), source: response.source)
    }

    /// `body` with every occurrence of `secret` (4 bytes or more) replaced by `REDACTED`.
    static func replacing(_ secret: [UInt8], in body: [UInt8]) -> [UInt8] {
        guard secret.count >= 4, body.count >= secret.count, let first = secret.first else { return body }
        var out: [UInt8] = []
        var index = 0
        var copied = 0
        let last = body.count - secret.count
        while index <= last {
            if body[index] == first, body[index..<(index + secret.count)].elementsEqual(secret) {
                if out.isEmpty { out.reserveCapacity(body.count) }
                out.append(contentsOf: body[copied..<index])
                out.append(contentsOf: "REDACTED".utf8)
                index += secret.count
                copied = index
            } else {
                index += 1
            }
        }
        guard copied > 0 else { return body }
        out.append(contentsOf: body[copied...])
        return out
    }

    /// `error`, raised by the caller about `request` (`apimacro api`'s failed answer), redacted
    /// as `send` redacts its own errors: the client's secrets and credential, and the
    /// credentials `request` carries by name (`X-Api-Key`), which the server's message may echo.
    public func redacted(_ error: APIError, for request: Request) -> APIError {
        let exchange =
            (try? prepare(request))
            ?? Exchange(method: request.method, url: "", headers: Headers(), body: [], timeout: 0)
        return redacted(error, exchange: exchange)
    }

    /// The same error with every URL and text redacted (also the credentials `exchange` carries
    /// by name, which an error body may echo) and the client named.
    @inline(never)
    func redacted(_ error: APIError, exchange: Exchange) -> APIError {
        let redactor = redactor.adding(credentialsOf: exchange)
        var redacted = APIError(
            error.kind, redactor.redact(redactURLs(in: error.message, redactor)), status: error.status,
            url: error.url.map { redactor.redactURL($0) }, api: error.api ?? configuration.name,
            body: error.body.map { redactor.redact($0) }, resetAt: error.resetAt, retryAfter: error.retryAfter)
        redacted.isRetryable = error.isRetryable
        redacted.details = error.details.map { detail in
            guard case .string(let text) = detail.value else { return detail }
            return APIError.Detail(detail.name, .string(redactor.redact(text)))
        }
        redacted.errorList = error.errorList.map { redactor.redact($0) }
        redacted.isSecondary = error.isSecondary
        return redacted
    }

    /// Redacts sensitive query parameters in every URL found in `text`.
    func redactURLs(in text: String, _ redactor: Redactor) -> String {
        text.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.hasPrefix("http://") || word.hasPrefix("https://") ? redactor.redactURL(String(word)) : String(word)
        }.joined(separator: " ")
    }

    /// Resolves a request into an exchange: absolute URL, headers, body.
    public func prepare(_ request: Request) throws -> Exchange {
        if let previous = request.linkedFrom, SchemeRule.scheme(of: request.target) != nil {
            // A next-page URL the server chose: http(s) only, never from https down to plain http
            // on a host other than loopback.
            try SchemeRule.check(
                request.target, from: previous, what: "next page link", method: request.method, redactor: redactor)
        }
        let url = try url(of: request)
        var headers = defaultHeaders
        for (name, value) in request.headers { headers.set(name, value) }
        let (body, contentType) = request.body.encoded(boundary: "apimacro-" + UUID().uuidString)
        if let contentType, headers["Content-Type"] == nil { headers.set("Content-Type", contentType) }
        var exchange = Exchange(
            method: request.method, url: url, origin: origin(of: url), headers: headers, body: body,
            timeout: request.timeout ?? configuration.timeout)
        exchange.validatesStatus = request.validatesStatus
        exchange.cache = request.cache ?? CacheChoice.current
        if let auth = request.basicAuth {
            guard let origin = exchange.origin, origin.isSecureForCredentials else {
                throw APIError(
                    .auth,
                    "refusing to send credentials over plain http to \(exchange.origin?.host ?? url): use https",
                    url: redactor.redactURL(url), api: configuration.name)
            }
            // The password and its base64 may come back in a body (an echo): this client's
            // redactor (-v, errors, HAR) knows them from now on.
            credentialSlot.remember(BasicAuthorization.wireForms(user: auth.user, password: auth.password.revealed))
            exchange.headers.set(
                "Authorization", BasicAuthorization.header(user: auth.user, password: auth.password.revealed))
        }
        return exchange
    }

    /// `Origin(url: url)`, worked out once for a run of requests to one URL (a loop of calls).
    private func origin(of url: String) -> Origin? {
        if let known = lastOrigin.withLock({ $0.url == url ? Optional($0.origin) : nil }) { return known }
        let origin = Origin(url: url)
        lastOrigin.withLock { $0 = (url, origin) }
        return origin
    }

    /// The URL `request` goes to: its target made absolute (`absoluteURL`), its query appended.
    public func url(of request: Request) throws -> String {
        let url = try absoluteURL(request.target)
        guard !request.query.isEmpty else { return url }
        return url + (url.contains("?") ? "&" : "?") + FormEncoding.encode(request.query)
    }

    /// `target` if it is an absolute http(s) URL, else the base URL joined with it.
    func absoluteURL(_ target: String) throws -> String {
        if Self.startsWithHTTP(target) {
            guard Origin(url: target) != nil else {
                throw APIError(
                    .invalidRequest, "not a valid URL: \(redactor.redactURL(target))", api: configuration.name)
            }
            return target
        }
        if Self.containsSchemeSeparator(target) {
            throw APIError(
                .invalidRequest, "only http and https URLs are supported, not \(redactor.redactURL(target))",
                api: configuration.name)
        }
        guard !configuration.baseURL.isEmpty else {
            throw APIError(.invalidRequest, "\(target) is not an absolute http(s) URL", api: configuration.name)
        }
        // The base URL comes from a manifest or an `APIMACRO_*_URL` variable: http(s) only
        // (checked once, when the client is made).
        guard baseURLIsHTTP else {
            throw APIError(
                .invalidRequest,
                "the base URL of \(configuration.name), \(redactor.redactURL(configuration.baseURL)), is not an http(s) URL: "
                    + "set it to one such as https://api.example.com", api: configuration.name)
        }
        return configuration.baseURL + (target.utf8.first == UInt8(ascii: "/") ? target : "/" + target)
    }

    /// Whether `target` starts with `http://` or `https://`, in any case.
    static func startsWithHTTP(_ target: String) -> Bool {
        var bytes = target.utf8.prefix(8).makeIterator()
        for expected in "http".utf8 {
            guard let byte = bytes.next(), byte | 0x20 == expected else { return false }
        }
        var byte = bytes.next()
        if let letter = byte, letter | 0x20 == UInt8(ascii: "s") { byte = bytes.next() }
        return byte == UInt8(ascii: ":") && bytes.next() == UInt8(ascii: "/") && bytes.next() == UInt8(ascii: "/")
    }

    /// Whether `target` holds `://` anywhere.
    ///
    /// A native string's bytes are read in place (String.UTF8View's iterator took ~40
    /// instructions a byte, on every call's path).
    static func containsSchemeSeparator(_ target: String) -> Bool {
        func scan(_ bytes: some Sequence<UInt8>) -> Bool {
            var colon = 0
            for byte in bytes {
                switch (byte, colon) {
                case (UInt8(ascii: ":"), _): colon = 1
                case (UInt8(ascii: "/"), 1): colon = 2
                case (UInt8(ascii: "/"), 2): return true
                default: colon = 0
                }
            }
            return false
        }
        return target.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(target.utf8)
    }
}
