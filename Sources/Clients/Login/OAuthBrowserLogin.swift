/// The settings of an OAuth app every login kind names alike, declared once: the implicit
/// grant's (`OAuthLogin`) and the authorization code's (`OAuthCodeLogin`) read the same
/// `APIMACRO_<NAME>_CLIENT_ID`, `_REDIRECT_URI` and `_AUTHORIZE_URL`.
extension ClientSetting {
    /// `APIMACRO_<NAME>_CLIENT_ID`: the registered app's client id (needed to log in).
    static func oauthClientID(of client: String) -> ClientSetting {
        ClientSetting(client: client, key: "client_id").described("the app's client ID, to log in")
    }

    /// `APIMACRO_<NAME>_REDIRECT_URI`: the redirect URI registered with the provider.
    static func oauthRedirectURI(of client: String) -> ClientSetting {
        ClientSetting.url(client: client, key: "redirect_uri").described("the redirect URI registered for the app")
    }

    /// `APIMACRO_<NAME>_AUTHORIZE_URL`: the provider's authorize page.
    static func oauthAuthorizeURL(of client: String) -> ClientSetting {
        ClientSetting.url(client: client, key: "authorize_url").described(
            "the provider's authorize page", default: "the provider's")
    }
}
