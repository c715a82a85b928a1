import Platform
public import WebAPI

/// One service behind `apimacro.shortener`: everything that differs between them, declared
/// by its router (`BitlyRouter`, `ShlinkRouter`, `GoogleShortenerRouter`) and registered in
/// `ShortenerBackend.services`.
///
/// A new backend is its router file conforming to this and one line in that list: the
/// settings' check, the credential it reads, `login`, `auth status --check`, the errors,
/// `links()`, `api --paginate`, the docstrings and the help texts all come from here.
public protocol ShortenerService: Sendable {
    /// Its name in `APIMACRO_SHORTENER` (lower case).
    static var name: String { get }
    /// How messages name it (`Bitly`).
    static var title: String { get }
    /// Where requests go when `APIMACRO_SHORTENER_URL` is unset; nil for a server its users run.
    static var defaultBaseURL: String? { get }
    /// A base URL to show in the message that asks for one (default `https://s.example.com`).
    static var exampleBaseURL: String { get }
    /// Which setting holds its credential: `Shortener.token` or `Shortener.key`.
    static var credentialKind: ShortenerCredentialKind { get }
    /// What its credential is called (`a Bitly access token`).
    static var credentialName: String { get }
    /// How its credential travels.
    static func credential(_ secret: Secret) -> Credential
    /// Whether `call` (`shorten`, `expand`, `clicks`, `links`) needs the credential (default: every call).
    static func needsCredential(for call: String) -> Bool
    /// The cap on requests in flight when `APIMACRO_SHORTENER_MAX_CONCURRENCY` is unset (default none).
    static var defaultMaxConcurrency: Int? { get }
    /// The headers every request carries (default `Accept: application/json`).
    static var defaultHeaders: [(String, String)] { get }
    /// Whether `APIMACRO_SHORTENER_URL` alone chooses it when `APIMACRO_SHORTENER` is unset (default no).
    static func isChosen(byBaseURL url: String) -> Bool
    /// Where its answers keep a link's facts.
    static var shape: ShortLinkShape { get }
    /// How its list of links comes in pages (`links()` and `api --paginate`; default: none).
    static var paging: Paging { get }
    /// `shorten(...)`'s request; an argument it cannot take is an `APIError` (an invalid request).
    static func shorten(_ link: NewShortLink, in configuration: ShortenerConfiguration) throws -> Request
    /// `expand(short_url)`'s request (`shortURL` is an http(s) URL; `argument` names it in errors).
    static func expand(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration) throws
        -> Request
    /// `clicks(short_url)`'s request: every click on the link, all time.
    static func clicks(_ shortURL: String, argument: String, in configuration: ShortenerConfiguration) throws
        -> Request
    /// `links(limit=...)`'s first request, or an error saying why the service lists none.
    static func linksStart(limit: Int?, in configuration: ShortenerConfiguration) throws -> LinksStart
    /// The message of an error body, naming the field at fault; nil to go by the status.
    static func errorMessage(_ response: Response) -> String?
    /// The error kind an error body names; nil to go by the status.
    static func errorKind(_ response: Response) -> APIError.Kind?
    /// How `auth status --check` asks who the credential belongs to; nil when it cannot.
    static var identity: IdentityCheck? { get }
}

extension ShortenerService {
    public static var exampleBaseURL: String { "https://s.example.com" }
    public static func needsCredential(for call: String) -> Bool { true }
    public static var defaultMaxConcurrency: Int? { nil }
    public static var defaultHeaders: [(String, String)] { [("Accept", "application/json")] }
    public static func isChosen(byBaseURL url: String) -> Bool { false }
    public static var paging: Paging { .none }
    public static var identity: IdentityCheck? { nil }
}

/// Which of the shortener's credential settings a service reads.
public enum ShortenerCredentialKind: Sendable {
    /// `APIMACRO_SHORTENER_TOKEN` (`Shortener.token`): an access token.
    case token
    /// `APIMACRO_SHORTENER_KEY` (`Shortener.key`): an API key.
    case key

    /// The titles of the services that read it, as a phrase (`Shlink or Bitly`).
    var services: String {
        let titles = ShortenerBackend.allCases.filter { $0.service.credentialKind == self }.map(\.title)
        // Joined by hand: `joined` over the `ArraySlice` of `dropLast()` is not specialised, and
        // the runtime's look-ups of its generic parts cost 0.3 M instructions at every start.
        var phrase = ""
        for (index, title) in titles.enumerated() {
            if index > 0 { phrase += index == titles.count - 1 ? " or " : ", " }
            phrase += title
        }
        return phrase
    }
}

/// What `shorten(long_url, *, domain=None, slug=None, tags=None)` asks for.
public struct NewShortLink: Sendable {
    /// The long URL (an absolute http(s) URL, checked).
    public var longURL: String
    /// The short link's domain, when not the account's default.
    public var domain: String?
    /// A custom back-half.
    public var slug: String?
    /// Tags, in order.
    public var tags: [String]

    /// A request for `longURL`'s short link.
    public init(longURL: String, domain: String? = nil, slug: String? = nil, tags: [String] = []) {
        self.longURL = longURL
        self.domain = domain
        self.slug = slug
        self.tags = tags
    }

    /// An invalid-request error naming the first of `arguments` that is given, which `service`
    /// does not take (`why`); nil when none is given.
    public func refusing(_ arguments: Set<String>, by service: any ShortenerService.Type, because why: String)
        -> APIError?
    {
        let given = [("domain", domain != nil), ("slug", slug != nil), ("tags", !tags.isEmpty)]
        guard let refused = given.first(where: { $0.1 && arguments.contains($0.0) }) else { return nil }
        return APIError(
            .invalidRequest, "shorten() argument '\(refused.0)' is not taken by \(service.title): \(why)",
            api: Shortener.name)
    }
}

/// The services behind `apimacro.shortener`, each a `ShortenerService`, and the one list of them.
public struct ShortenerBackend: Sendable, Hashable, CustomStringConvertible {
    /// What the service is and does.
    public let service: any ShortenerService.Type

    /// The backend `service` is.
    public init(_ service: any ShortenerService.Type) {
        self.service = service
    }

    /// Every backend, in the order messages list them; Bitly, the first, is the default.
    static let services: [any ShortenerService.Type] = [
        BitlyRouter.self,
        ShlinkRouter.self,
        GoogleShortenerRouter.self,
        YOURLSRouter.self,
    ]

    /// Every backend, in the order messages list them.
    public static let allCases = services.map(ShortenerBackend.init)
    /// Bitly API v4 (hosted; the default).
    public static let bitly = ShortenerBackend(BitlyRouter.self)
    /// Shlink's REST API v3 (self-hosted: `APIMACRO_SHORTENER_URL` names the server).
    public static let shlink = ShortenerBackend(ShlinkRouter.self)
    /// Google URL Shortener v1, shut down in 2019: kept as it was for recordings and seed macros.
    public static let google = ShortenerBackend(GoogleShortenerRouter.self)
    /// The backend when `APIMACRO_SHORTENER` names none: the first.
    public static var standard: ShortenerBackend { allCases[0] }

    public static func == (left: ShortenerBackend, right: ShortenerBackend) -> Bool {
        left.rawValue == right.rawValue
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// Its name in `APIMACRO_SHORTENER`.
    public var rawValue: String { service.name }
    public var description: String { rawValue }

    /// The backend called `text` (any case, spaces around ignored), or nil.
    public static func named(_ text: String) -> ShortenerBackend? {
        let name = text.trimmingWhitespace().lowercased()
        return allCases.first { $0.rawValue == name }
    }

    /// `items` joined by `separator`, as `joined(separator:)` does: the settings' descriptions
    /// are built at every start, where the unspecialised `joined` costs the runtime 0.3 M
    /// instructions of generic look-ups the first time.
    static func listing(_ items: [String], _ separator: String) -> String {
        var text = ""
        for (index, item) in items.enumerated() {
            if index > 0 { text += separator }
            text += item
        }
        return text
    }

    /// Why `text` names no backend, with the accepted names.
    static func problem(_ text: String) -> String {
        "'\(text)' is not a shortener backend; accepted: \(allCases.map(\.rawValue).joined(separator: ", "))"
    }

    /// The backend the settings in `view` choose: `APIMACRO_SHORTENER` when set, else one whose
    /// base URL `APIMACRO_SHORTENER_URL` is (Google's legacy `/urlshortener/v1`), else the
    /// default; nil for a name that is no backend (refused with the settings' check at start).
    public static func selected(in view: SettingsView) -> ShortenerBackend? {
        if let name = view.value(Shortener.backend) { return named(name) }
        if let url = view.value(Shortener.url),
            let chosen = allCases.first(where: { $0.service.isChosen(byBaseURL: url) })
        {
            return chosen
        }
        return standard
    }

    /// How messages name it.
    public var title: String { service.title }
    /// Where requests go when `APIMACRO_SHORTENER_URL` is unset; nil for a server its users run.
    public var defaultBaseURL: String? { service.defaultBaseURL }
    /// The setting that holds its credential (over the stored login).
    public var credentialSetting: ClientSetting { service.credentialKind == .token ? Shortener.token : Shortener.key }
    /// What its credential is called (`a Bitly access token`).
    public var credentialName: String { service.credentialName }
    /// How its credential travels.
    public func credential(_ secret: Secret) -> Credential { service.credential(secret) }

    /// What `apimacro login shortener` asks for with this backend.
    public var login: LoginKind {
        // `String(...)`: a `Substring` appended to a `String` goes through the unspecialised
        // `append(contentsOf:)`, whose generic parts the runtime looks up first (0.3 M instructions).
        .pastedKey(label: "your " + String(credentialName.dropFirst(2)), variable: credentialSetting.variable)
    }

    /// The cap on requests in flight when `APIMACRO_SHORTENER_MAX_CONCURRENCY` is unset.
    public var defaultMaxConcurrency: Int? { service.defaultMaxConcurrency }
    /// How its list of links comes in pages (`links()` and `api --paginate`).
    public var paging: Paging { service.paging }
    /// Where its answers keep a link's facts.
    public var shape: ShortLinkShape { service.shape }
}

/// Where a backend's answers keep a link's facts, as JSON paths: what `shorten`, `expand` and
/// `links` turn into the dict a macro sees (`id`, `longUrl`, `created_at`, `backend`, `raw`)
/// and where `clicks` finds the total.
///
/// Each fact may sit at several paths (a service whose calls answer in different shapes, an
/// older version of an API): the first path that holds it wins.
public struct ShortLinkShape: Sendable {
    /// The short link.
    public let id: [[String]]
    /// The value at `id` is a bitlink (`bit.ly/abc`): the short URL is `https://` and it.
    public let idIsBitlink: Bool
    /// The long URL.
    public let longURL: [[String]]
    /// When the link was made (absent in some answers: then None).
    public let createdAt: [[String]]
    /// The total of clicks in `clicks`' answer (Shlink 2 kept it in `visitsCount`).
    public let clicks: [[String]]
    /// The answer's own keys are kept in the dict too (the legacy Google shape: `kind`,
    /// `status`, as seed macros read them).
    public let keepsAnswerKeys: Bool
    /// A path only a 2xx answer that failed holds (YOURLS's `code`, beside `status: fail`): the
    /// error for such an answer without a link quotes the backend's error message.
    public let failure: [String]?

    init(
        id: [[String]], idIsBitlink: Bool = false, longURL: [[String]], createdAt: [[String]], clicks: [[String]],
        keepsAnswerKeys: Bool = false, failure: [String]? = nil
    ) {
        self.id = id
        self.idIsBitlink = idIsBitlink
        self.longURL = longURL
        self.createdAt = createdAt
        self.clicks = clicks
        self.keepsAnswerKeys = keepsAnswerKeys
        self.failure = failure
    }

    /// The first of `paths` at which `read` finds a value.
    public static func first<Value>(_ paths: [[String]], _ read: ([String]) -> Value?) -> Value? {
        for path in paths {
            if let found = read(path) { return found }
        }
        return nil
    }

    /// How messages name where `paths` look (`shorturl or longurl`).
    public static func describe(_ paths: [[String]]) -> String {
        paths.map { $0.joined(separator: ".") }.joined(separator: " or ")
    }

    /// The short URL for the text found at `id`: a bitlink becomes `https://` + it; a full URL stays.
    public func shortURL(_ found: String) -> String {
        guard idIsBitlink, !found.lowercased().hasPrefix("http://"), !found.lowercased().hasPrefix("https://") else {
            return found
        }
        return "https://" + found
    }
}
