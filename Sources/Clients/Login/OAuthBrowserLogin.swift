/// What the two logins through the browser share, the implicit grant's (`OAuthLogin`) and the
/// authorization code's (`OAuthCodeLogin`): the client's name, the app settings named after it
/// (`APIMACRO_<NAME>_CLIENT_ID`, `_REDIRECT_URI` and `_AUTHORIZE_URL`) and the browser step
/// those settings describe.
public protocol OAuthBrowserLogin: Sendable {
    /// The client's name, the login's (`apimacro login NAME`).
    var name: String { get }
    /// The scopes asked for, if any.
    var scope: String? { get }
    /// How a macro logs in instead, for messages (`OAuthImplicitFlow.inMacro`), if it can.
    var inMacro: String? { get }
    /// The authorize URL when `APIMACRO_<NAME>_AUTHORIZE_URL` is unset.
    var defaultAuthorizeURL: @Sendable (SettingsView) -> String { get }
}

extension OAuthBrowserLogin {
    /// `APIMACRO_<NAME>_CLIENT_ID`: the registered app's client id (needed to log in).
    public var clientID: ClientSetting {
        ClientSetting(client: name, key: "client_id").described("the app's client ID, to log in")
    }
    /// `APIMACRO_<NAME>_REDIRECT_URI`: the redirect URI registered with the provider.
    public var redirectURI: ClientSetting {
        ClientSetting.url(client: name, key: "redirect_uri").described("the redirect URI registered for the app")
    }
    /// `APIMACRO_<NAME>_AUTHORIZE_URL`: the provider's authorize page.
    public var authorizeURL: ClientSetting {
        ClientSetting.url(client: name, key: "authorize_url").described(
            "the provider's authorize page", default: "the provider's")
    }

    /// The browser step (`response_type=token`) for the app `clientID` with `redirectURI`
    /// (nil: `OAuthImplicitFlow.defaultRedirectURI`), at the provider's `authorizeURL`.
    func browserFlow(clientID: String, redirectURI: String?, authorizeURL: String) -> OAuthImplicitFlow {
        OAuthImplicitFlow(
            authorizeURL: authorizeURL, clientID: clientID,
            redirectURI: redirectURI ?? OAuthImplicitFlow.defaultRedirectURI, scope: scope, name: name,
            inMacro: inMacro)
    }
}
