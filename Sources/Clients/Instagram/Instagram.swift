import Foundation
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
