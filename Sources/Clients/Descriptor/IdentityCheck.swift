import WebAPI

/// How `apimacro auth status --check` asks a service who a credential belongs to (as
/// `gh auth status` does): a client declares it in its descriptor; a client that declares
/// none is "check not supported".
///
/// The answer describes the identity (a login, scopes, an expiry), never the credential.
public struct IdentityCheck: Sendable {
    /// What a check may use: the network, the exchange log, the redactor and warnings.
    public struct Context: Sendable {
        public let transport: any Transport
        public let log: ExchangeLog
        public let redactor: Redactor
        public let warn: @Sendable (String) -> Void

        public init(
            transport: any Transport, log: ExchangeLog, redactor: Redactor,
            warn: @escaping @Sendable (String) -> Void
        ) {
            self.transport = transport
            self.log = log
            self.redactor = redactor
            self.warn = warn
        }
    }

    /// Asks the service, with the client as `view` configures it; one line describing who
    /// the credential belongs to, or throws what the service answered (an `APIError`).
    public let ask: @Sendable (_ view: SettingsView, _ context: Context) async throws -> String

    public init(ask: @escaping @Sendable (_ view: SettingsView, _ context: Context) async throws -> String) {
        self.ask = ask
    }
}
