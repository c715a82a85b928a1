import Foundation
public import WebAPI

/// The URL shortener client: one set of calls over whichever backend the configuration names.
///
/// Each call is built first (`shortenRequest`, `expandRequest`, `clicksRequest`,
/// `firstLinksPage`: every check a call makes, with no request sent when one fails) and then
/// sent (`send`), so a binding builds with the GIL held and sends without it, and
/// `apimacro.map` builds every call before sending any.
public final class ShortenerClient: Sendable {
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

    /// `shorten(long_url, domain=, slug=, tags=)`'s request: Bitly's `/shorten` (or `/bitlinks`
    /// for a slug or tags), Shlink's `/short-urls` with `findIfExists`, Google's `url`.
    public func shortenRequest(_ longURL: String, domain: String? = nil, slug: String? = nil, tags: [String] = [])
        throws -> Request
    {
        try Self.validate(longURL, argument: "shorten() long_url")
        try ready(for: "shorten")
        switch backend {
        case .bitly:
            guard slug != nil || !tags.isEmpty else {
                return BitlyRouter.shorten(longURL: longURL, domain: domain, group: configuration.group).request
            }
            return BitlyRouter.create(
                longURL: longURL, domain: domain, group: configuration.group, keyword: slug, tags: tags
            ).request
        case .shlink:
            return ShlinkRouter.create(longURL: longURL, domain: domain, slug: slug, tags: tags).request
        case .google:
            if let unsupported = [("domain", domain != nil), ("slug", slug != nil), ("tags", !tags.isEmpty)].first(
                where: \.1)
            {
                throw APIError(
                    .invalidRequest,
                    "shorten() argument '\(unsupported.0)' needs the bitly or shlink backend: the legacy Google "
                        + "API took only long_url", api: Shortener.name)
            }
            return GoogleShortenerRouter.shorten(longURL: longURL).request
        }
    }

    /// `expand(short_url)`'s request.
    public func expandRequest(_ shortURL: String) throws -> Request {
        try linkRequest(shortURL, call: "expand", bitly: BitlyRouter.expand, google: GoogleShortenerRouter.expand)
    }

    /// `clicks(short_url)`'s request: Bitly's click summary over all time, Shlink's short URL
    /// (its `visitsSummary`), Google's link with its analytics.
    public func clicksRequest(_ shortURL: String) throws -> Request {
        try linkRequest(shortURL, call: "clicks", bitly: BitlyRouter.clicks, google: GoogleShortenerRouter.clicks)
    }

    /// The request of a `call` about one short link: Bitly's and Shlink's need a back-half
    /// (`ShortLinkAddress`), Google's took the URL as it was.
    func linkRequest(
        _ shortURL: String, call: String, bitly: (ShortLinkAddress) -> BitlyRouter,
        google: (String) -> GoogleShortenerRouter
    ) throws -> Request {
        let argument = "\(call)() short_url"
        guard backend != .google else {
            try Self.validate(shortURL, argument: argument)
            try ready(for: call)
            return google(shortURL).request
        }
        let address = try ShortLinkAddress(shortURL, argument: argument)
        try ready(for: call)
        return backend == .bitly
            ? bitly(address).request : ShlinkRouter.shortURL(code: address.code, domain: shlinkDomain(address)).request
    }

    /// `links(limit=...)`'s first request (Bitly: the group's first page, or the account
    /// lookup that names the group; Shlink: page 1).
    ///
    /// Google's API listed links only for an OAuth login, which the legacy backend never had:
    /// an `AuthError` saying so, with no request.
    public func firstLinksPage(limit: Int?) throws -> Request {
        try ready(for: "links")
        switch backend {
        case .bitly:
            return BitlyRouter.firstLinksPage(group: configuration.group, limit: limit)
        case .shlink:
            return ShlinkRouter.firstPage(limit: limit)
        case .google:
            throw APIError(
                .auth,
                "shortener.links() needs the bitly or shlink backend: the legacy Google URL Shortener listed "
                    + "links only for an OAuth login, which apimacro's Google mode never had", api: Shortener.name)
        }
    }

    /// Sends a request this client built.
    public func send(_ request: Request) async throws -> Response {
        try await api.send(request)
    }

    /// The `domain` Shlink is asked about: the short URL's host, unless it is the API's own
    /// (then the server's default domain).
    func shlinkDomain(_ address: ShortLinkAddress) -> String? {
        guard let components = URLComponents(string: configuration.baseURL), let host = components.host?.lowercased()
        else { return address.host }
        let apiHost = components.port.map { "\(host):\($0)" } ?? host
        return address.host == apiHost ? nil : address.host
    }

    /// Throws what stops `call` before any request: a setting that makes no call possible,
    /// or a credential the call needs and nobody set (`AuthError` naming the variable and the
    /// login command).
    ///
    /// Google's legacy API needed its key only to shorten; a replay needs none.
    func ready(for call: String) throws {
        if let problem = configuration.problem { throw problem }
        guard api.credential == nil, api.needsCredentials, backend != .google || call == "shorten" else { return }
        if backend == .google {
            throw APIError(
                .auth, "shortener.shorten needs an API key: set \(Shortener.key.variable)", api: Shortener.name)
        }
        throw APIError(
            .auth,
            "shortener.\(call) needs \(backend.credentialName): "
                + "set \(backend.credentialSetting.variable) or run `apimacro login shortener`",
            api: Shortener.name)
    }
}
