public import WebAPI

/// What every built-in client is built on: the process's one transport (the cache,
/// `--record`, `--replay` and `--offline` in front of the network), its exchange log and
/// redactor, the stored credentials, and where warnings and newly learned secrets go.
///
/// MacroRuntime's `Runtime` makes one (`Runtime.clientContext`); each client's factory
/// (`GitHub.client(in:on:)`, `Instagram.client(in:on:)`, `Shortener.client(in:on:)`) takes it
/// with a `SettingsView`, so a client is built the same way for a macro and for `apimacro api`.
public struct ClientContext: Sendable {
    /// What requests go through.
    public let transport: any Transport
    /// The exchange log (`-v`, HAR).
    public let log: ExchangeLog
    /// What to redact besides each client's own credentials.
    public let redactor: Redactor
    /// The credentials `apimacro login` stored (a client's refreshed token goes back there).
    public let store: CredentialStore
    /// The network itself, for what must never be cached nor recorded (a token's refresh, a
    /// GitHub App's installation token); nil when nothing may be sent (`--offline`, `--replay`).
    public let network: (any Transport)?
    /// Prints a warning line on stderr.
    public let warn: @Sendable (String) -> Void
    /// Told every credential found or made later, so that what apimacro prints redacts it.
    public let learned: @Sendable (String) -> Void

    /// A context on `transport`.
    public init(
        transport: any Transport, log: ExchangeLog, redactor: Redactor, store: CredentialStore,
        network: (any Transport)?, warn: @escaping @Sendable (String) -> Void,
        learned: @escaping @Sendable (String) -> Void
    ) {
        self.transport = transport
        self.log = log
        self.redactor = redactor
        self.store = store
        self.network = network
        self.warn = warn
        self.learned = learned
    }

    /// The same context with `store` (an `as_account` choosing one stored account).
    public func choosing(_ store: CredentialStore) -> ClientContext {
        ClientContext(
            transport: transport, log: log, redactor: redactor, store: store, network: network, warn: warn,
            learned: learned)
    }
}
