/// How `apimacro login NAME` (and the REPL's `:login NAME`) gets a client's credential,
/// which is then stored under the client's name.
public enum LoginKind: Sendable {
    /// The OAuth 2 implicit grant, with the app the settings describe.
    case oauthImplicit(OAuthLogin)
    /// A key the user pastes: `label` says what to paste (`your Google API key`), and
    /// `variable`, when set, wins over the stored key.
    case pastedKey(label: String, variable: String)

    /// `oauth2_implicit` or `key`, as the REPL reads it.
    public var kind: String {
        switch self {
        case .oauthImplicit: "oauth2_implicit"
        case .pastedKey: "key"
        }
    }
}
