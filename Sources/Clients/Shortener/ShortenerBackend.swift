import Foundation
public import WebAPI

/// The services behind `apimacro.shortener`, and what differs between them: the default base
/// URL, the credential and how it travels, the login prompt, the cap on requests in flight and
/// where an answer keeps a link's facts (`shape`).
public enum ShortenerBackend: String, Sendable, CaseIterable {
    /// Bitly API v4 (hosted; the default).
    case bitly
    /// Shlink's REST API v3 (self-hosted: `APIMACRO_SHORTENER_URL` names the server).
    case shlink
    /// Google URL Shortener v1, shut down in 2019: kept as it was for recordings and seed macros.
    case google

    /// The backend called `text` (any case, spaces around ignored), or nil.
    public static func named(_ text: String) -> ShortenerBackend? {
        ShortenerBackend(rawValue: text.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// Why `text` names no backend, with the accepted names.
    static func problem(_ text: String) -> String {
        "'\(text)' is not a shortener backend; accepted: \(allCases.map(\.rawValue).joined(separator: ", "))"
    }

    /// The backend the settings in `view` choose: `APIMACRO_SHORTENER` when set, else Google's
    /// legacy API when the base URL ends in `/urlshortener/v1`, else Bitly; nil for a name that
    /// is no backend (refused with the settings' check at start).
    public static func selected(in view: SettingsView) -> ShortenerBackend? {
        if let name = view.value(Shortener.backend) { return named(name) }
        if let url = view.value(Shortener.url), isGoogleURL(url) { return .google }
        return .bitly
    }

    /// Whether `url` is Google's legacy API (its path ends in `/urlshortener/v1`).
    static func isGoogleURL(_ url: String) -> Bool {
        var path = URLComponents(string: url)?.path ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        return path.hasSuffix("/urlshortener/v1")
    }

    /// How messages name it.
    public var title: String {
        switch self {
        case .bitly: "Bitly"
        case .shlink: "Shlink"
        case .google: "the legacy Google URL Shortener"
        }
    }

    /// Where requests go when `APIMACRO_SHORTENER_URL` is unset; nil for Shlink, which a user
    /// runs on their own server.
    public var defaultBaseURL: String? {
        switch self {
        case .bitly: "https://api-ssl.bitly.com/v4"
        case .shlink: nil
        case .google: "https://www.googleapis.com/urlshortener/v1"
        }
    }

    /// The setting that holds its credential (over the stored login).
    public var credentialSetting: ClientSetting {
        self == .bitly ? Shortener.token : Shortener.key
    }

    /// What its credential is called (`a Bitly access token`).
    public var credentialName: String {
        switch self {
        case .bitly: "a Bitly access token"
        case .shlink: "a Shlink API key"
        case .google: "a Google API key"
        }
    }

    /// How its credential travels: Bitly `Authorization: Bearer`, Shlink `X-Api-Key`, Google `key=`.
    public func credential(_ secret: Secret) -> Credential {
        switch self {
        case .bitly: .bearer(secret)
        case .shlink: .header(name: "X-Api-Key", value: secret)
        case .google: .query(name: "key", value: secret)
        }
    }

    /// What `apimacro login shortener` asks for with this backend.
    public var login: LoginKind {
        .pastedKey(label: "your " + credentialName.dropFirst(2), variable: credentialSetting.variable)
    }

    /// The cap on requests in flight when `APIMACRO_SHORTENER_MAX_CONCURRENCY` is unset: Bitly
    /// allows five concurrent connections per address (and sends no rate-limit headers).
    public var defaultMaxConcurrency: Int? { self == .bitly ? 5 : nil }

    /// How its list of links comes in pages (`links()` and `api --paginate`).
    public var paging: Paging {
        switch self {
        case .bitly: BitlyRouter.paging
        case .shlink: ShlinkRouter.paging
        case .google: .none
        }
    }

    /// Where its answers keep a link's facts.
    public var shape: ShortLinkShape {
        switch self {
        case .bitly:
            // Bitly's `id` is the bitlink without a scheme (`bit.ly/2WujBe0`); its links are
            // served over https, whatever the `link` field of an old answer says.
            ShortLinkShape(
                id: ["id"], idIsBitlink: true, longURL: ["long_url"], createdAt: ["created_at"],
                clicks: ["total_clicks"])
        case .shlink:
            ShortLinkShape(
                id: ["shortUrl"], longURL: ["longUrl"], createdAt: ["dateCreated"],
                clicks: ["visitsSummary", "total"], olderClicks: ["visitsCount"])
        case .google:
            ShortLinkShape(
                id: ["id"], longURL: ["longUrl"], createdAt: ["created"],
                clicks: ["analytics", "allTime", "shortUrlClicks"], keepsAnswerKeys: true)
        }
    }
}

/// Where a backend's answer keeps a link's facts, as JSON paths: what `shorten`, `expand` and
/// `links` turn into the dict a macro sees (`id`, `longUrl`, `created_at`, `backend`, `raw`)
/// and where `clicks` finds the total.
public struct ShortLinkShape: Sendable {
    /// The short link.
    public let id: [String]
    /// The value at `id` is a bitlink (`bit.ly/abc`): the short URL is `https://` and it.
    public let idIsBitlink: Bool
    /// The long URL.
    public let longURL: [String]
    /// When the link was made (absent in some answers: then None).
    public let createdAt: [String]
    /// The total of clicks in `clicks`' answer.
    public let clicks: [String]
    /// Where an older version of the API kept that total (Shlink 2's `visitsCount`).
    public let olderClicks: [String]?
    /// The answer's own keys are kept in the dict too (the legacy Google shape: `kind`,
    /// `status`, as seed macros read them).
    public let keepsAnswerKeys: Bool

    init(
        id: [String], idIsBitlink: Bool = false, longURL: [String], createdAt: [String], clicks: [String],
        olderClicks: [String]? = nil, keepsAnswerKeys: Bool = false
    ) {
        self.id = id
        self.idIsBitlink = idIsBitlink
        self.longURL = longURL
        self.createdAt = createdAt
        self.clicks = clicks
        self.olderClicks = olderClicks
        self.keepsAnswerKeys = keepsAnswerKeys
    }

    /// The short URL for the text found at `id`: a bitlink becomes `https://` + it; a full URL stays.
    public func shortURL(_ found: String) -> String {
        guard idIsBitlink, !found.lowercased().hasPrefix("http://"), !found.lowercased().hasPrefix("https://") else {
            return found
        }
        return "https://" + found
    }
}
