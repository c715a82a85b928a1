import Clients
import Foundation
import Logging
import PluginHost

/// The services every macro in this process shares: one transport (one
/// connection pool), one exchange log, the redactor and the clients. Built
/// once from the settings and passed down explicitly.
final class Runtime: Sendable {
    let settings: Settings
    let transport: HTTPTransport
    let log: ExchangeLog
    let redactor: Redactor
    let github: GitHubClient
    let instagram: InstagramClient
    let shortener: ShortenerClient
    /// The client behind `apimacro.request`: no base URL, no credential.
    let http: APIClient
    /// Tokens saved by `apimacro login` (mode 0600 under `$APIMACRO_HOME`).
    let credentials: CredentialStore
    /// Why the stored tokens could not be read, if they could not.
    let credentialProblem: APIError?
    /// The plugins found in the plugin folders (and those that failed to load).
    let plugins: PluginRegistry
    /// One client per loaded plugin, on the shared transport.
    let pluginClients: [PluginClient]

    init(settings: Settings) {
        self.settings = settings
        let logger: Logger? =
            settings.verbose
            ? Logger(label: "apimacro.http") { _ in StderrLineHandler() } : nil
        log = ExchangeLog(logger: logger)
        let store = CredentialStore(home: settings.home)
        credentials = store
        var problem: APIError?
        func stored(_ name: String) -> Secret? {
            do {
                return try store.token(for: name)
            } catch let error as APIError {
                problem = problem ?? error
            } catch {
                problem = problem ?? APIError(.auth, "cannot read \(store.path.path): \(error)")
            }
            return nil
        }
        let environment = settings.environment
        let registry = PluginRegistry.load(folders: settings.pluginFolders)
        plugins = registry
        let pluginTokens = registry.plugins.map { $0.auth == .none ? nil : stored($0.name) }
        // A plugin's key may sit in a variable of any name: redact it in tracebacks too.
        let pluginSecrets = zip(registry.plugins, pluginTokens).compactMap { manifest, token in
            PluginCredential(manifest: manifest, environment: environment, storedToken: token).credential?.secret.revealed
        }
        redactor = Redactor(secrets: settings.secrets + pluginSecrets)
        transport = HTTPTransport(userAgent: "apimacro/\(ApimacroModule.version)")
        github = GitHubClient(configuration: settings.github, transport: transport, log: log, redactor: redactor)
        instagram = InstagramClient(
            configuration: .fromEnvironment(environment, storedToken: stored("instagram"), timeout: settings.requestTimeout, maxWait: settings.maxWait),
            transport: transport, log: log, redactor: redactor)
        shortener = ShortenerClient(
            configuration: .fromEnvironment(environment, storedKey: stored("shortener"), timeout: settings.requestTimeout, maxWait: settings.maxWait),
            transport: transport, log: log, redactor: redactor)
        var clients: [PluginClient] = []
        for (manifest, token) in zip(registry.plugins, pluginTokens) {
            clients.append(
                PluginClient(
                    manifest: manifest, environment: environment, storedToken: token, transport: transport, log: log,
                    redactor: redactor, timeout: settings.requestTimeout, maxWait: settings.maxWait))
        }
        pluginClients = clients
        credentialProblem = problem
        http = APIClient(
            configuration: ClientConfiguration(name: "http", baseURL: "", timeout: settings.requestTimeout, maxWait: settings.maxWait),
            transport: transport, log: log, redactor: redactor)
    }
}
