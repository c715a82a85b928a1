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
    /// The client behind `apimacro.request`: no base URL, no credential.
    let http: APIClient

    init(settings: Settings) {
        self.settings = settings
        let logger: Logger? =
            settings.verbose
            ? Logger(label: "apimacro.http") { _ in StderrLineHandler() } : nil
        log = ExchangeLog(logger: logger)
        redactor = Redactor(secrets: settings.secrets)
        transport = HTTPTransport(userAgent: "apimacro/\(ApimacroModule.version)")
        github = GitHubClient(configuration: settings.github, transport: transport, log: log, redactor: redactor)
        http = APIClient(
            configuration: ClientConfiguration(name: "http", baseURL: "", timeout: settings.requestTimeout, maxWait: settings.maxWait),
            transport: transport, log: log, redactor: redactor)
    }
}
