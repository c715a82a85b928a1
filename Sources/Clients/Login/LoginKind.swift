/// How `apimacro login NAME` (and the REPL's `:login NAME`) gets a client's credential,
/// which is then stored under the client's name.
public enum LoginKind: Sendable {
    /// The OAuth 2 implicit grant, with the app the settings describe.
    case oauthImplicit(OAuthLogin)
    /// The OAuth 2 authorization-code grant, with the app the settings describe (and its
    /// secret); the client redeems the code itself.
    case oauthCode(OAuthCodeLogin)
    /// The OAuth 2 device flow (GitHub's, as `gh auth login` uses it): a one-time code the
    /// user enters on the provider's page while apimacro polls for the token.
    case deviceFlow(OAuthDeviceLogin)
    /// A key the user pastes: `label` says what to paste (`your Google API key`), and
    /// `variable`, when set, wins over the stored key.
    case pastedKey(label: String, variable: String)

    /// `oauth2_implicit`, `oauth2_code`, `oauth2_device` or `key`, as the REPL reads it.
    public var kind: String {
        switch self {
        case .oauthImplicit: "oauth2_implicit"
        case .oauthCode: "oauth2_code"
        case .deviceFlow: "oauth2_device"
        case .pastedKey: "key"
        }
    }
}
