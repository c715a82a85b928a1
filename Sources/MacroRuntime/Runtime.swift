import Clients
import Foundation
import Logging

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

    /// Whether `-v` lines print now (the REPL's `:verbose` turns it on and off).
    let verbosity: VerboseSwitch

    init(settings: Settings) {
        self.settings = settings
        verbosity = VerboseSwitch(on: settings.verbose)
        let logger: Logger? =
            settings.verbose || settings.switchableVerbose ? verbosity.logger() : nil
        log = ExchangeLog(logger: logger)
        redactor = Redactor(secrets: settings.secrets)
        transport = HTTPTransport(userAgent: "apimacro/\(ApimacroModule.version)")
        github = GitHubClient(configuration: settings.github, transport: transport, log: log, redactor: redactor)
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
        instagram = InstagramClient(
            configuration: .fromEnvironment(environment, storedToken: stored("instagram"), timeout: settings.requestTimeout, maxWait: settings.maxWait),
            transport: transport, log: log, redactor: redactor)
        shortener = ShortenerClient(
            configuration: .fromEnvironment(environment, storedKey: stored("shortener"), timeout: settings.requestTimeout, maxWait: settings.maxWait),
            transport: transport, log: log, redactor: redactor)
        credentialProblem = problem
        http = APIClient(
            configuration: ClientConfiguration(name: "http", baseURL: "", timeout: settings.requestTimeout, maxWait: settings.maxWait),
            transport: transport, log: log, redactor: redactor)
    }
}
