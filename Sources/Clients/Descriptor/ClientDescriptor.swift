public import WebAPI

/// A client as the rest of apimacro sees it, built-in or a plugin: its name, its settings
/// (each a `config.toml` key), where its credential comes from, and how `apimacro login`
/// gets one.
///
/// A built-in client declares its descriptor in its own folder (`GitHub.descriptor`); a
/// plugin's is made from its manifest (PluginHost's `PluginManifest.descriptor`). `login`,
/// `logout`, `auth status`, `config.toml`'s key check, the checks of the settings' values,
/// the REPL's `:login` and the help texts read descriptors, never a client's name.
public struct ClientDescriptor: Sendable {
    /// The client's name: `apimacro.NAME`, the `api` of its errors, its `[NAME]` table in
    /// `config.toml`, its stored credential, and a name no plugin may take.
    public let name: String
    /// Every `APIMACRO_<NAME>_*` setting it reads, in the order `config.toml` messages list
    /// their keys; empty for a plugin, whose table takes any key.
    public let settings: [ClientSetting]
    /// Where its credential comes from, in the order they win; empty when it has none.
    public let credentialSources: [CredentialSource]
    /// How `apimacro login NAME` gets a credential; nil when it does not.
    public let login: LoginKind?
    /// What `apimacro login NAME` says when there is no login (a plugin with basic auth); nil
    /// for the general answer, which lists the logins there are.
    public let noLogin: String?
    /// The login as the settings make it, when they change what it asks for (the shortener's
    /// backend decides whether it is a Bitly token or a Shlink key); nil when `login` is all.
    let loginInView: (@Sendable (SettingsView) -> LoginKind)?
    /// How `auth status --check` asks the service whose credential it is, under given
    /// settings (the shortener's depends on its backend); nil when the client declares none.
    let identityInView: (@Sendable (SettingsView) -> IdentityCheck?)?

    /// A client's description; `loginIn`, when given, is its login under given settings
    /// (`login` stays what the help texts describe); `identity`, its `auth status --check`.
    public init(
        name: String, settings: [ClientSetting] = [], credentialSources: [CredentialSource] = [],
        login: LoginKind? = nil, noLogin: String? = nil, loginIn: (@Sendable (SettingsView) -> LoginKind)? = nil,
        identity: (@Sendable (SettingsView) -> IdentityCheck?)? = nil
    ) {
        self.name = name
        self.settings = settings
        self.credentialSources = credentialSources
        self.login = login
        self.noLogin = noLogin
        self.loginInView = loginIn
        self.identityInView = identity
    }

    /// How `auth status --check` asks who the credential belongs to under the settings in
    /// `view`; nil when the client declares no check.
    public func identity(in view: SettingsView) -> IdentityCheck? {
        identityInView?(view)
    }

    /// How `apimacro login NAME` gets a credential under the settings in `view`.
    public func login(in view: SettingsView) -> LoginKind? {
        guard login != nil else { return nil }
        return loginInView?(view) ?? login
    }

    /// The keys of its `[NAME]` table in `config.toml`.
    public var configKeys: [String] { settings.map(\.key) }

    /// Whether one of its sources is what `apimacro login` stored.
    public var readsStoredLogin: Bool { credentialSources.contains { $0.isStoredLogin } }

    /// The environment variables that may hold its credential, in the order they win.
    public var credentialVariables: [String] { credentialSources.compactMap(\.variable) }

    /// Its credential in `view` and where it came from: the first source that holds one.
    public func credential(in view: SettingsView) -> (secret: Secret, source: CredentialSource)? {
        lookUp(in: view).found.map { ($0.secret, $0.source) }
    }

    /// Looks into its sources in order (`deferred` ones too, unless false) until one holds a
    /// credential: that one (with where exactly, if it says), and the problems of those before it.
    public func lookUp(in view: SettingsView, deferred: Bool = true) -> (
        found: (secret: Secret, source: CredentialSource, detail: String?)?, problems: [String]
    ) {
        var problems: [String] = []
        // A chosen account (`--account`, `as_account`) is used whatever the variables hold.
        if view.prefersStored, let stored = view.storedCredential,
            let source = credentialSources.first(where: \.isStoredLogin)
        {
            return ((stored, source, view.account.map { "account \($0)" }), [])
        }
        for source in credentialSources where deferred || !source.isDeferred {
            let lookup = source.lookUp(view)
            if let secret = lookup.secret { return ((secret, source, lookup.detail), problems) }
            if let problem = lookup.problem { problems.append(problem) }
            if lookup.isFinal { break }
        }
        return (nil, problems)
    }
}
