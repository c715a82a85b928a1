import WebAPI

/// One place a client's credential may come from, named as `auth status` prints it.
///
/// A client lists its sources in the order they win (`ClientDescriptor.credentialSources`);
/// its configuration takes the first that holds a credential (`ClientDescriptor.credential(in:)`).
public struct CredentialSource: Sendable {
    /// How `auth status` names it: `env APIMACRO_GITHUB_TOKEN`, `stored login`.
    public let name: String
    /// Whether it is the credential `apimacro login` stored (`auth status` reads the store for it).
    public let isStoredLogin: Bool
    /// The environment variable it reads, when it is one (for messages: `github reads …`).
    public let variable: String?
    /// Every variable it reads (`variable`, or a basic login's user and password), so that
    /// `auth status` can say which of them `config.toml` set.
    public let variables: [String]
    /// The credential this source holds in `view`, if any.
    public let read: @Sendable (SettingsView) -> Secret?

    /// A source named `name` that `read` looks into; `variables` are those it reads (default:
    /// `variable`'s).
    public init(
        name: String, isStoredLogin: Bool = false, variable: String? = nil, variables: [String]? = nil,
        read: @escaping @Sendable (SettingsView) -> Secret?
    ) {
        self.name = name
        self.isStoredLogin = isStoredLogin
        self.variable = variable
        self.variables = variables ?? variable.map { [$0] } ?? []
        self.read = read
    }

    /// The environment variable `variable` (unset or empty holds nothing).
    public static func variable(_ variable: String) -> CredentialSource {
        CredentialSource(name: "env \(variable)", variable: variable) { $0.value(variable).map(Secret.init) }
    }

    /// What `apimacro login NAME` stored.
    public static let storedLogin = CredentialSource(name: "stored login", isStoredLogin: true) {
        $0.storedCredential
    }
}
