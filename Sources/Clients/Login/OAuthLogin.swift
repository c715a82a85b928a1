import WebAPI

/// An OAuth 2 implicit-grant login of the client called `name`: its registered app is
/// described by the settings `APIMACRO_<NAME>_CLIENT_ID`, `APIMACRO_<NAME>_REDIRECT_URI`
/// (default `OAuthImplicitFlow.defaultRedirectURI`) and `APIMACRO_<NAME>_AUTHORIZE_URL`
/// (default `defaultAuthorizeURL`), the same for a built-in client and an `oauth2_implicit` plugin.
public struct OAuthLogin: OAuthBrowserLogin {
    /// The client's name, the login's (`apimacro login NAME`).
    public let name: String
    /// The scopes asked for (space-separated), if any.
    public let scope: String?
    /// The authorize URL when `APIMACRO_<NAME>_AUTHORIZE_URL` is unset (Instagram derives it
    /// from its base URL, a plugin takes its manifest's).
    public let defaultAuthorizeURL: @Sendable (SettingsView) -> String
    /// How a macro logs in instead, for messages (`OAuthImplicitFlow.inMacro`), if it can.
    public let inMacro: String?

    /// The login of the client called `name`.
    public init(
        name: String, scope: String? = nil, inMacro: String? = nil,
        defaultAuthorizeURL: @escaping @Sendable (SettingsView) -> String
    ) {
        self.name = name
        self.scope = scope
        self.inMacro = inMacro
        self.defaultAuthorizeURL = defaultAuthorizeURL
    }

    /// The three settings `OAuthBrowserLogin` names, for the client's descriptor.
    public var settings: [ClientSetting] { [clientID, redirectURI, authorizeURL] }

    /// The flow of the app `view` describes; `AuthError` when it names no client id.
    public func flow(in view: SettingsView) throws -> OAuthImplicitFlow {
        try flow(
            clientID: view.value(clientID), redirectURI: view.value(redirectURI),
            authorizeURL: view.value(authorizeURL) ?? defaultAuthorizeURL(view))
    }

    /// The flow of the app with these values (a nil `redirectURI` is the default one);
    /// `AuthError` when `clientID` is nil.
    public func flow(clientID: String?, redirectURI: String?, authorizeURL: String) throws -> OAuthImplicitFlow {
        guard let clientID else {
            throw APIError(
                .auth,
                "set \(self.clientID.variable) (and \(self.redirectURI.variable)) to your app's values to log in",
                api: name)
        }
        return browserFlow(clientID: clientID, redirectURI: redirectURI, authorizeURL: authorizeURL)
    }
}
