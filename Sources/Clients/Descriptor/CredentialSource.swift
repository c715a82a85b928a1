public import WebAPI

/// What looking in one credential source found: a credential, nothing, or a problem worth
/// saying (a file that may not be read, a program that did not answer).
public struct CredentialLookup: Sendable {
    /// The credential, if the source holds one.
    public var secret: Secret?
    /// Why the source could not be read, if it could not (for `auth status` and a warning).
    public var problem: String?
    /// Where exactly it was found (a file's path), for `auth status`.
    public var detail: String?
    /// Whether the sources after this one are not looked into, even though it holds nothing:
    /// the client uses this source whatever it found (a GitHub App whose key cannot be read).
    public var isFinal: Bool

    /// A lookup's result.
    public init(secret: Secret? = nil, problem: String? = nil, detail: String? = nil, isFinal: Bool = false) {
        self.secret = secret
        self.problem = problem
        self.detail = detail
        self.isFinal = isFinal
    }
}

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
    /// Whether it is read only when a request first needs it, not when the client is made: it
    /// runs a program or reads another tool's files (GitHub's `gh` sources).
    public let isDeferred: Bool
    /// Looks into the source in `view`.
    public let lookUp: @Sendable (SettingsView) -> CredentialLookup

    /// A source named `name` that `lookUp` looks into; `variables` are those it reads (default:
    /// `variable`'s).
    public init(
        name: String, isStoredLogin: Bool = false, variable: String? = nil, variables: [String]? = nil,
        isDeferred: Bool = false, lookUp: @escaping @Sendable (SettingsView) -> CredentialLookup
    ) {
        self.name = name
        self.isStoredLogin = isStoredLogin
        self.variable = variable
        self.variables = variables ?? variable.map { [$0] } ?? []
        self.isDeferred = isDeferred
        self.lookUp = lookUp
    }

    /// A source named `name` whose credential `read` finds (it has no problems to report).
    public init(
        name: String, isStoredLogin: Bool = false, variable: String? = nil, variables: [String]? = nil,
        read: @escaping @Sendable (SettingsView) -> Secret?
    ) {
        self.init(name: name, isStoredLogin: isStoredLogin, variable: variable, variables: variables) {
            CredentialLookup(secret: read($0))
        }
    }

    /// The credential this source holds in `view`, if any.
    public func read(_ view: SettingsView) -> Secret? { lookUp(view).secret }

    /// The environment variable `variable` (unset or empty holds nothing).
    public static func variable(_ variable: String) -> CredentialSource {
        CredentialSource(name: "env \(variable)", variable: variable) { $0.value(variable).map(Secret.init) }
    }

    /// What `apimacro login NAME` stored.
    public static let storedLogin = CredentialSource(name: "stored login", isStoredLogin: true) {
        $0.storedCredential
    }
}
