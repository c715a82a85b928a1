import Platform
public import WebAPI

/// An OAuth 2 authorization-code login (RFC 6749 §4.1) of the client called `name`: the browser
/// step of `OAuthImplicitFlow` with `response_type=code` and its `state` checked, then the code
/// redeemed by the client itself (`redeem`: Instagram exchanges it at its token URL, then for a
/// 60-day token).
///
/// Its app is described by `APIMACRO_<NAME>_CLIENT_ID`, `_CLIENT_SECRET` (a secret: never
/// printed, logged or recorded), `_REDIRECT_URI` (default `OAuthImplicitFlow.defaultRedirectURI`),
/// `_AUTHORIZE_URL` and `_TOKEN_URL` (defaults: the client's).
public struct OAuthCodeLogin: OAuthBrowserLogin {
    /// The client's name, the login's (`apimacro login NAME`).
    public let name: String
    /// The scopes asked for (comma- or space-separated, as the provider takes them), if any.
    public let scope: String?
    /// How a macro logs in instead, for messages, if it can.
    public let inMacro: String?
    /// `login --help`'s line for this client, after its name.
    public let help: String
    /// The authorize URL when `APIMACRO_<NAME>_AUTHORIZE_URL` is unset.
    public let defaultAuthorizeURL: @Sendable (SettingsView) -> String
    /// The token URL (where the code is redeemed) when `APIMACRO_<NAME>_TOKEN_URL` is unset.
    public let defaultTokenURL: @Sendable (SettingsView) -> String
    /// The implicit-grant login to use instead when the settings choose a backend that logs in
    /// so (Instagram's legacy v1 API); nil when there is none.
    public let implicit: (@Sendable (SettingsView) -> OAuthLogin?)?
    /// How long a token stored with `apimacro login NAME --token -` is taken to live (seconds),
    /// when the provider's pasted tokens have a known lifetime; nil when not known.
    public let pastedTokenLifetime: Double?
    /// Turns a code into the token to store, sending through `transport` (its exchanges
    /// written to `log`: `-v` in a macro, silent for `apimacro login`).
    public let redeem: Redeem

    /// How a code becomes a token.
    public typealias Redeem =
        @Sendable (
            _ code: Secret, _ app: OAuthCodeApp, _ transport: any Transport, _ log: ExchangeLog
        ) async throws -> IssuedToken

    /// The login of the client called `name`.
    public init(
        name: String, scope: String? = nil, inMacro: String? = nil, help: String,
        defaultAuthorizeURL: @escaping @Sendable (SettingsView) -> String,
        defaultTokenURL: @escaping @Sendable (SettingsView) -> String,
        implicit: (@Sendable (SettingsView) -> OAuthLogin?)? = nil, pastedTokenLifetime: Double? = nil,
        redeem: @escaping Redeem
    ) {
        self.name = name
        self.scope = scope
        self.inMacro = inMacro
        self.help = help
        self.defaultAuthorizeURL = defaultAuthorizeURL
        self.defaultTokenURL = defaultTokenURL
        self.implicit = implicit
        self.pastedTokenLifetime = pastedTokenLifetime
        self.redeem = redeem
    }

    /// `APIMACRO_<NAME>_CLIENT_SECRET`: the registered app's secret.
    public var clientSecret: ClientSetting {
        ClientSetting(client: name, key: "client_secret").described("the app's secret, to log in")
    }
    /// `APIMACRO_<NAME>_TOKEN_URL`: where the code is redeemed.
    public var tokenURL: ClientSetting {
        ClientSetting.url(client: name, key: "token_url").described(
            "where the login's code is redeemed", default: "the provider's")
    }
    /// The client ID, secret, redirect URI, authorize URL and token URL, for the client's descriptor.
    public var settings: [ClientSetting] { [clientID, clientSecret, redirectURI, authorizeURL, tokenURL] }

    /// The browser step of the app `view` describes; `AuthError` naming what is missing when
    /// it lacks a client id or secret (checked before any URL is printed).
    public func flow(in view: SettingsView) throws -> OAuthImplicitFlow {
        _ = try app(in: view)
        var flow = browserFlow(
            clientID: view.value(clientID) ?? "", redirectURI: view.value(redirectURI),
            authorizeURL: view.value(authorizeURL) ?? defaultAuthorizeURL(view))
        flow.responseType = "code"
        return flow
    }

    /// The app `view` describes, for redeeming a code; `AuthError` when it names no client id or secret.
    public func app(in view: SettingsView) throws -> OAuthCodeApp {
        guard let id = view.value(clientID), let secret = view.value(clientSecret) else {
            throw APIError(
                .auth,
                "set \(clientID.variable) and \(clientSecret.variable) (and \(redirectURI.variable)) "
                    + "to your app's values to log in", api: name)
        }
        return OAuthCodeApp(
            clientID: id, clientSecret: Secret(secret),
            redirectURI: view.value(redirectURI) ?? OAuthImplicitFlow.defaultRedirectURI,
            tokenURL: view.value(tokenURL) ?? defaultTokenURL(view), view: view)
    }
}

/// The app a code is redeemed for: what `OAuthCodeLogin.redeem` sends besides the code.
public struct OAuthCodeApp: Sendable {
    /// The client id.
    public var clientID: String
    /// The client secret (prints `REDACTED`).
    public var clientSecret: Secret
    /// The redirect URI the browser step used (the token URL checks it is the same).
    public var redirectURI: String
    /// Where the code is redeemed.
    public var tokenURL: String
    /// The settings (for the client's base URL, timeouts).
    public var view: SettingsView

    /// The app `clientID` with `clientSecret`, its code redeemed at `tokenURL`.
    public init(clientID: String, clientSecret: Secret, redirectURI: String, tokenURL: String, view: SettingsView) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURI = redirectURI
        self.tokenURL = tokenURL
        self.view = view
    }
}

/// A token a login obtained, with what the provider said of it.
public struct IssuedToken: Sendable {
    /// The token (prints `REDACTED`).
    public let token: Secret
    /// When it expires (epoch seconds), when the provider said.
    public let expiresAt: Int?
    /// The scope granted, when the provider said.
    public let scope: String?
    /// The token that renews it (a GitHub App's user token), when the provider gave one.
    public let refreshToken: Secret?
    /// When `refreshToken` expires (epoch seconds), when the provider said.
    public let refreshExpiresAt: Int?

    /// A token expiring at `expiresAt`, renewed with `refreshToken` when given.
    public init(
        token: Secret, expiresAt: Int? = nil, scope: String? = nil, refreshToken: Secret? = nil,
        refreshExpiresAt: Int? = nil
    ) {
        self.token = token
        self.expiresAt = expiresAt
        self.scope = scope
        self.refreshToken = refreshToken
        self.refreshExpiresAt = refreshExpiresAt
    }
}
