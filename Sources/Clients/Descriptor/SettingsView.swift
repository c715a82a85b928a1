public import WebAPI

/// What a client reads its configuration from: the environment (with `config.toml` beneath
/// it, flags over both), the request timeout and rate-limit wait every client shares, and the
/// credential `apimacro login` stored for it.
///
/// MacroRuntime's `Settings` hands one to each client (`Settings.view(storedCredential:)`);
/// tests build one from a dictionary.
public struct SettingsView: Sendable {
    /// The variables, by name.
    public var environment: [String: String]
    /// The default per-request timeout in seconds.
    ///
    /// Default 30.
    public var requestTimeout: Double
    /// The longest rate-limit wait in seconds.
    ///
    /// Default 60.
    public var maxWait: Double
    /// The credential `apimacro login NAME` stored for this client, if any.
    public var storedCredential: Secret?
    /// The label of the account `storedCredential` belongs to (`work`), for `-v` and HAR.
    public var account: String?
    /// Whether the stored account was chosen for this client (`--account`, `as_account`), so
    /// that it wins over the credential variables that otherwise come first.
    public var prefersStored = false

    /// A view of `environment`.
    public init(
        environment: [String: String], requestTimeout: Double = 30, maxWait: Double = 60,
        storedCredential: Secret? = nil, account: String? = nil, prefersStored: Bool = false
    ) {
        self.environment = environment
        self.requestTimeout = requestTimeout
        self.maxWait = maxWait
        self.storedCredential = storedCredential
        self.account = account
        self.prefersStored = prefersStored
    }

    /// The value of `variable`; nil when it is unset or empty.
    public func value(_ variable: String) -> String? {
        environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The value of `setting`'s variable; nil when it is unset or empty.
    public func value(_ setting: ClientSetting) -> String? {
        value(setting.variable)
    }
}
