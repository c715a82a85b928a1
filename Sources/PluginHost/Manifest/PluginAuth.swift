/// How a plugin's client authenticates (`auth = { kind = … }` in plugin.toml).
///
/// Secrets come from environment variables or `apimacro login NAME`, never from the manifest.
public enum PluginAuth: Sendable, Equatable {
    /// No credential.
    case none
    /// A key in a query parameter: `?param=KEY`, the key from `env`.
    case queryKey(param: String, env: String)
    /// A key in a header: `header: KEY`, the key from `env`.
    case headerKey(header: String, env: String)
    /// `Authorization: Bearer TOKEN`, the token from `env`.
    case bearer(env: String)
    /// HTTP basic: the user from `userEnv`, the password from `env`.
    case basic(userEnv: String, env: String)
    /// An OAuth 2 implicit-grant token obtained by `apimacro login NAME`.
    case oauth2Implicit(OAuth2Implicit)

    /// The kinds a manifest may name, in the order the README lists them.
    public static let kinds = ["none", "query_key", "header_key", "bearer", "basic", "oauth2_implicit"]

    /// The manifest's name for this kind.
    public var kind: String {
        switch self {
        case .none: "none"
        case .queryKey: "query_key"
        case .headerKey: "header_key"
        case .bearer: "bearer"
        case .basic: "basic"
        case .oauth2Implicit: "oauth2_implicit"
        }
    }

    /// The settings of an `oauth2_implicit` auth.
    public struct OAuth2Implicit: Sendable, Equatable {
        /// The provider's authorize endpoint (`https://foursquare.com/oauth2/authenticate`).
        public var authorizeURL: String
        /// The query parameter that carries the token (`oauth_token`); nil sends `Authorization: Bearer`.
        public var param: String?
        /// The scopes to ask for, if any.
        public var scope: String?
    }
}
