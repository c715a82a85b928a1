/// Instagram (the v1 API) as apimacro knows it: its settings, where its token comes from and
/// its OAuth login (`descriptor`); `InstagramConfiguration` reads them, `InstagramRouter`
/// builds each endpoint's request, `InstagramEnvelope` says where an answer's data, status
/// and next page are, and `InstagramClient` sends the requests.
public enum Instagram {
    /// The client's name.
    public static let name = "instagram"
    /// `APIMACRO_INSTAGRAM_URL` (`[instagram] url`): the API's base URL.
    public static let url = ClientSetting.url(client: name, key: "url")
    /// `APIMACRO_INSTAGRAM_TOKEN` (`[instagram] token`): the token, over the stored login.
    public static let token = ClientSetting(client: name, key: "token")
    /// The OAuth 2 implicit grant: `APIMACRO_INSTAGRAM_CLIENT_ID`, `_REDIRECT_URI` and
    /// `_AUTHORIZE_URL` (default: the base URL without `/v1`, plus `/oauth/authorize/`).
    public static let login = OAuthLogin(
        name: name, inMacro: "instagram.authorize_url(), then instagram.complete_login(url)",
        defaultAuthorizeURL: { view in
            InstagramConfiguration.authorizeURL(forBase: view.value(url) ?? InstagramConfiguration.defaultBaseURL)
        })

    /// Instagram for `login`, `auth status`, `config.toml` and the setting checks: the token
    /// from `APIMACRO_INSTAGRAM_TOKEN`, else the one `apimacro login instagram` stored.
    public static let descriptor = ClientDescriptor(
        name: name, settings: [url, token] + login.settings,
        credentialSources: [.variable(token.variable), .storedLogin], login: .oauthImplicit(login))
}
