import Platform
public import WebAPI

/// The Google URL Shortener v1 endpoints (shut down in 2019; the legacy backend), one case each.
public enum GoogleShortenerRouter: Sendable {
    /// `POST url` with `{"longUrl": …}`.
    case shorten(longURL: String)
    /// `GET url?shortUrl=…`.
    case expand(shortURL: String)
    /// `GET url?shortUrl=…&projection=ANALYTICS_CLICKS`: the link with its `analytics`.
    case clicks(shortURL: String)

    /// The request for this endpoint.
    public var request: Request {
        switch self {
        case .shorten(let longURL):
            Request("POST", "/url", body: ShortenerJSON.body([("longUrl", longURL)]))
        case .expand(let shortURL):
            Request("GET", "/url", query: [("shortUrl", shortURL)])
        case .clicks(let shortURL):
            Request("GET", "/url", query: [("shortUrl", shortURL), ("projection", "ANALYTICS_CLICKS")])
        }
    }
}

extension GoogleShortenerRouter: ShortenerService {
    public static let name = "google"
    public static let title = "the legacy Google URL Shortener"
    public static let defaultBaseURL: String? = "https://www.googleapis.com/urlshortener/v1"
    public static let credentialKind = ShortenerCredentialKind.key
    public static let credentialName = "a Google API key"
    /// `key=` in the query.
    public static func credential(_ secret: Secret) -> Credential { .query(name: "key", value: secret) }
    /// The API needed its key only to shorten; a replay needs none.
    public static func needsCredential(for call: String) -> Bool { call == "shorten" }
    /// It sent JSON without being asked.
    public static let defaultHeaders: [(String, String)] = []

    /// A base URL whose path ends in `/urlshortener/v1` is Google's.
    public static func isChosen(byBaseURL url: String) -> Bool {
        var path = URLComponents(string: url)?.path ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        return path.hasSuffix("/urlshortener/v1")
    }

    /// Its own keys are kept too (`kind`, `status`, as seed macros read them).
    public static let shape = ShortLinkShape(
        id: [["id"]], longURL: [["longUrl"]], createdAt: [["created"]],
        clicks: [["analytics", "allTime", "shortUrlClicks"]], keepsAnswerKeys: true)

    /// `POST url`; it took only the long URL.
    public static func shorten(_ link: NewShortLink, in configuration: ShortenerConfiguration) throws -> Request {
        if let refused = link.refusing(
            ["domain", "slug", "tags"], by: self, because: "the legacy Google API took only long_url")
        {
            throw refused
        }
        return GoogleShortenerRouter.shorten(longURL: link.longURL).request
    }

    /// The URL as it was given.
    public static func expand(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        GoogleShortenerRouter.expand(shortURL: shortURL).request
    }

    /// The link with its `analytics`.
    public static func clicks(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration)
        throws -> Request
    {
        GoogleShortenerRouter.clicks(shortURL: shortURL).request
    }

    /// None: the API listed links only for an OAuth login, which the legacy backend never had.
    public static func linksStart(limit: Int?, in configuration: ShortenerConfiguration) throws -> LinksStart {
        throw APIError(
            .auth,
            "shortener.links() is not offered by \(title): it listed links only for an OAuth login, which "
                + "apimacro's Google mode never had", api: Shortener.name)
    }

    /// `{"error": {"code", "message", "errors": [{"reason"}]}}` reads `message (reason)`.
    public static func errorMessage(_ response: Response) -> String? {
        let message = JSONPath.string(in: response.body, path: ["error", "message"])
        let reason = JSONPath.string(in: response.body, path: ["error", "errors", "0", "reason"])
        switch (message, reason) {
        case (let message?, let reason?): return "\(message) (\(reason))"
        default: return message ?? reason
        }
    }

    /// A key that is invalid or expired is `Unauthorized`.
    public static func errorKind(_ response: Response) -> APIError.Kind? {
        let reason = JSONPath.string(in: response.body, path: ["error", "errors", "0", "reason"])
        return ["keyInvalid", "keyExpired"].contains(reason ?? "") ? .unauthorized : nil
    }
}
