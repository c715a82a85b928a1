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
