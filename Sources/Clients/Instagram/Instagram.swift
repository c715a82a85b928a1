import Platform
import WebAPI

/// Instagram as apimacro knows it: its settings, where its token comes from and its login
/// (`descriptor`).
///
/// It has two backends, chosen by the base URL (`InstagramBackend`): the Instagram API with
/// Instagram Login on graph.instagram.com (the default: `InstagramGraphConfiguration`,
/// `InstagramGraphRouter`, `InstagramGraphEnvelope`, `InstagramGraphUsage`,
/// `InstagramGraphClient`, `InstagramLogin`), and the legacy v1 API, for a base URL ending in
/// `/v1` (`InstagramConfiguration`, `InstagramRouter`, `InstagramEnvelope`, `InstagramClient`).
public enum Instagram {
    /// The client's name.
    public static let name = "instagram"
    /// `APIMACRO_INSTAGRAM_URL` (`[instagram] url`): the API's base URL; one ending in `/v1`
    /// selects the legacy v1 API.
    public static let url = ClientSetting.url(client: name, key: "url").described(
        "the API's base URL (one ending in /v1: the legacy v1 API)", default: "https://graph.instagram.com")
    /// `APIMACRO_INSTAGRAM_TOKEN` (`[instagram] token`): the token, over the stored login.
    public static let token = ClientSetting(client: name, key: "token").described(
        "the token (else the stored login)")
    /// `APIMACRO_INSTAGRAM_API_VERSION` (`[instagram] api_version`): the Graph API version
    /// (`InstagramGraphConfiguration.defaultAPIVersion` unless set).
    public static let apiVersion = ClientSetting(
        client: name, key: "api_version", problem: InstagramGraphConfiguration.versionProblem
    ).described("the Graph API version", default: InstagramGraphConfiguration.defaultAPIVersion)

    /// How a macro logs in, for messages.
    static let inMacro = "instagram.authorize_url(), then instagram.complete_login(url)"

    /// Business Login for Instagram (the authorization-code grant, then the 60-day token):
    /// `APIMACRO_INSTAGRAM_CLIENT_ID`, `_CLIENT_SECRET`, `_REDIRECT_URI`, `_AUTHORIZE_URL`
    /// (default Meta's authorize page) and `_TOKEN_URL` (default
    /// `https://api.instagram.com/oauth/access_token`); with a `/v1` base URL, `login`.
    public static let businessLogin = OAuthCodeLogin(
        name: name, scope: InstagramLogin.scope, inMacro: inMacro,
        help:
            "prints Meta's authorize URL (an authorization code, its state checked), then reads the address "
            + "your browser was sent to (pasted, or --redirect-url URL), or with --listen PORT serves the "
            + "redirect URI on 127.0.0.1:PORT and catches it itself; the code is exchanged with "
            + "APIMACRO_INSTAGRAM_CLIENT_ID and APIMACRO_INSTAGRAM_CLIENT_SECRET for a 60-day token, which "
            + "apimacro refreshes by itself. --token - stores a token read from standard input instead (the "
            + "App Dashboard's Generate token). With a base URL ending in /v1, the legacy implicit grant.",
        defaultAuthorizeURL: { _ in InstagramLogin.defaultAuthorizeURL },
        defaultTokenURL: { _ in InstagramLogin.defaultTokenURL },
        implicit: { view in InstagramBackend.isLegacy(view) ? login : nil },
        pastedTokenLifetime: Double(InstagramTokenLife.lifetime),
        redeem: InstagramLogin.redeem)

    /// The legacy v1 API's OAuth 2 implicit grant: `APIMACRO_INSTAGRAM_CLIENT_ID`,
    /// `_REDIRECT_URI` and `_AUTHORIZE_URL` (default: the base URL without `/v1`, plus
    /// `/oauth/authorize/`).
    public static let login = OAuthLogin(
        name: name, inMacro: inMacro,
        defaultAuthorizeURL: { view in
            InstagramConfiguration.authorizeURL(forBase: view.value(url) ?? InstagramConfiguration.defaultBaseURL)
        })

    /// Instagram for `login`, `auth status`, `config.toml` and the setting checks: the token
    /// from `APIMACRO_INSTAGRAM_TOKEN`, else the one `apimacro login instagram` stored.
    public static let descriptor = ClientDescriptor(
        name: name, settings: [url, token, apiVersion] + businessLogin.settings,
        credentialSources: [.variable(token.variable), .storedLogin], login: .oauthCode(businessLogin),
        identity: { view in InstagramBackend.isLegacy(view) ? legacyIdentity : identity })

    /// `auth status --check` on the Graph API: `GET me` with the account's user name and type.
    public static let identity = IdentityCheck(
        InstagramGraphRouter.me(fields: "user_id,username,account_type").request
    ) { response in
        Identity(
            account: JSONPath.string(in: response.body, path: ["username"]) ?? "an account Instagram did not name",
            facts: JSONPath.string(in: response.body, path: ["account_type"]).map { ["\($0.lowercased()) account"] }
                ?? [])
    }

    /// `auth status --check` on the legacy v1 API: `GET users/self`, the user in `data`.
    static let legacyIdentity = IdentityCheck(InstagramRouter.me.request) { response in
        Identity(
            account: JSONPath.string(in: response.body, path: ["data", "username"])
                ?? "an account Instagram did not name")
    }
}

extension Instagram {
    /// An Instagram client as the settings chose its backend.
    public enum Client: Sendable {
        /// The Instagram API with Instagram Login.
        case graph(InstagramGraphClient)
        /// The legacy v1 API.
        case legacy(InstagramClient)

        /// The client, whichever it is.
        public var built: any BuiltClient {
            switch self {
            case .graph(let client): client
            case .legacy(let client): client
            }
        }
    }

    /// The Instagram client the settings in `view` describe, on `context`.
    ///
    /// The Graph API's (`graphClient`), or the legacy v1 API's for a base URL ending in `/v1`:
    /// the one place an Instagram client is made.
    public static func client(in view: SettingsView, on context: ClientContext) -> Client {
        switch InstagramBackend(view) {
        case .graph(let configuration): .graph(graphClient(configuration, on: context))
        case .legacy(let configuration): .legacy(legacyClient(configuration, on: context))
        }
    }

    /// The legacy v1 client for `configuration` on `context`.
    public static func legacyClient(_ configuration: InstagramConfiguration, on context: ClientContext)
        -> InstagramClient
    {
        InstagramClient(
            configuration: configuration, transport: context.transport, log: context.log, redactor: context.redactor)
    }

    /// The Graph client for `configuration` on `context`, keeping a stored token alive (its
    /// refresh stored, and learned so that it is redacted from then on).
    public static func graphClient(_ configuration: InstagramGraphConfiguration, on context: ClientContext)
        -> InstagramGraphClient
    {
        let entry = configuration.tokenIsStored ? (try? context.store.entry(for: name)) ?? nil : nil
        return InstagramGraphClient(
            configuration: configuration, transport: context.transport, log: context.log, redactor: context.redactor,
            tokens: InstagramGraphClient.TokenStore(
                store: context.store, entry: entry, network: context.network, remember: context.learned,
                warn: context.warn))
    }
}

/// Which API an Instagram client speaks, as its settings choose.
public enum InstagramBackend: Sendable {
    /// The Instagram API with Instagram Login (the default).
    case graph(InstagramGraphConfiguration)
    /// The legacy v1 API: a base URL ending in `/v1`.
    case legacy(InstagramConfiguration)

    /// The backend `view`'s settings choose.
    public init(_ view: SettingsView) {
        self = Self.isLegacy(view) ? .legacy(InstagramConfiguration(view)) : .graph(InstagramGraphConfiguration(view))
    }

    /// Whether `view`'s base URL ends in `/v1` (the legacy API).
    public static func isLegacy(_ view: SettingsView) -> Bool {
        isLegacy(baseURL: view.value(Instagram.url) ?? InstagramGraphConfiguration.defaultBaseURL)
    }

    /// Whether `baseURL` ends in `/v1` (any case; trailing slashes aside).
    public static func isLegacy(baseURL: String) -> Bool {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        return base.lowercased().hasSuffix("/v1")
    }
}
