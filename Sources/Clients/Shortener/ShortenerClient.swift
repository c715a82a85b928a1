import Platform
public import WebAPI

/// The URL shortener client: one set of calls over whichever backend the configuration names.
///
/// Each call is built first (`shortenRequest`, `expandRequest`, `clicksRequest`,
/// `linksStart`: every check a call makes, with no request sent when one fails) and then
/// sent (`send`), so a binding builds with the GIL held and sends without it, and
/// `apimacro.map` builds every call before sending any.
public final class ShortenerClient: BuiltClient {
    /// The connection to the pipeline (credential, redactor, cap on requests in flight).
    public let api: APIClient
    /// The settings it was made with.
    public let configuration: ShortenerConfiguration

    /// Bitly's plan and platform limits, which refuse a request they leave no room for
    /// (`shortener.rate_limit`); nil with the other backends.
    public let limits: BitlyLimits?

    /// A client for `configuration` on `transport`.
    public init(configuration: ShortenerConfiguration, transport: any Transport, log: ExchangeLog, redactor: Redactor) {
        self.configuration = configuration
        var client = configuration.client
        let limits =
            configuration.backend == .bitly
            ? BitlyLimits(group: configuration.group, baseURL: configuration.baseURL) : nil
        client.gate = limits
        let api = APIClient(configuration: client, transport: transport, log: log, redactor: redactor)
        limits?.connect { [weak api] request in
            guard let api else { throw APIError(.cancelled, "the shortener client is gone", api: Shortener.name) }
            return try await api.send(request)
        }
        self.api = api
        self.limits = limits
    }

    /// The backend this client speaks.
    public var backend: ShortenerBackend { configuration.backend }

    /// How its backend's list of links comes in pages.
    public var paging: Paging { backend.paging }

    /// `ValueError` (an invalid request) unless `text` is an absolute http(s) URL; checked before any request.
    public static func validate(_ text: String, argument: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty
        else {
            throw notAURL(text, argument: argument)
        }
    }

    /// The error for a string that is not an absolute http(s) URL.
    static func notAURL(_ text: String, argument: String) -> APIError {
        APIError(
            .invalidRequest, "\(argument) must be an absolute http(s) URL, not \(text.debugDescription)",
            api: Shortener.name)
    }

    /// `shorten(long_url, domain=, slug=, tags=)`'s request, as the backend makes it (Bitly's
    /// `/shorten` or `/bitlinks`, Shlink's `/short-urls` with `findIfExists`, Google's `url`).
    public func shortenRequest(_ longURL: String, domain: String? = nil, slug: String? = nil, tags: [String] = [])
        throws -> Request
    {
        try Self.validate(longURL, argument: "shorten() long_url")
        let link = NewShortLink(longURL: longURL, domain: domain, slug: slug, tags: tags)
        return try ready(for: "shorten", try backend.service.shorten(link, in: configuration))
    }

    /// `expand(short_url)`'s request.
    public func expandRequest(_ shortURL: String) throws -> Request {
        let argument = "expand() short_url"
        try Self.validate(shortURL, argument: argument)
        return try ready(for: "expand", try backend.service.expand(shortURL, argument: argument, in: configuration))
    }

    /// `clicks(short_url)`'s request: every click on the link, all time (Bitly's click summary,
    /// Shlink's short URL with its `visitsSummary`, Google's link with its analytics).
    public func clicksRequest(_ shortURL: String) throws -> Request {
        let argument = "clicks() short_url"
        try Self.validate(shortURL, argument: argument)
        return try ready(for: "clicks", try backend.service.clicks(shortURL, argument: argument, in: configuration))
    }

    /// `links(limit=...)`'s first request (Bitly: the group's first page, or the account
    /// lookup that names the group; Shlink: page 1), or the backend's reason it lists none.
    public func linksStart(limit: Int?) throws -> LinksStart {
        let start = try backend.service.linksStart(limit: limit, in: configuration)
        _ = try ready(for: "links", start.request)
        return start
    }

    /// Sends a request this client built.
    public func send(_ request: Request) async throws -> Response {
        try await api.send(request)
    }

    /// `request`, unless something stops `call` before any request: a setting that makes no
    /// call possible, or a credential the call needs and nobody set (`AuthError` naming the
    /// variable and the login command).
    func ready(for call: String, _ request: Request) throws -> Request {
        if let problem = configuration.problem { throw problem }
        guard api.credential == nil, api.needsCredentials, backend.service.needsCredential(for: call) else {
            return request
        }
        throw APIError(
            .auth,
            "shortener.\(call) needs \(backend.credentialName): "
                + "set \(backend.credentialSetting.variable) or run `apimacro login shortener`",
            api: Shortener.name)
    }
}
