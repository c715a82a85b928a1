public import Clients
import Platform
import WebAPI

/// `apimacro auth status --check`: asks each service whose credential apimacro holds who it
/// belongs to (as `gh auth status`), through the client itself (its base URL, credential,
/// redirects and errors), and never prints the credential.
public struct IdentityChecks: Sendable {
    let settings: Settings
    let warn: @Sendable (String) -> Void

    /// Checks under `settings`; `warn` prints the clients' warnings (stderr).
    public init(settings: Settings, warn: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.warn = warn
    }

    /// What the check of one client found.
    public enum Outcome: Sendable, Equatable {
        /// The service named the account (and facts such as scopes or expiry).
        case identity(Identity)
        /// The request failed: the service refused the credential, or could not be reached.
        case failed(String)
        /// No credential to check.
        case noCredential
        /// The client declares no check (a plugin, the legacy Google shortener).
        case notSupported
    }

    /// One line of `auth status --check`: the client's `auth status` line and what its check found.
    public struct Line: Sendable {
        /// The client's `auth status` line.
        public let status: Logins.Status
        /// What the check found.
        public let outcome: Outcome
    }

    /// Checks every client `auth status` lists, built-in ones first, one request each, in order.
    public func run() async throws -> [Line] {
        let statuses = Logins(settings: settings).status()
        let runtime = try Runtime(settings: settings, warn: warn)
        var lines: [Line] = []
        for status in statuses {
            lines.append(Line(status: status, outcome: await check(status, runtime: runtime)))
        }
        return lines
    }

    private func check(_ status: Logins.Status, runtime: Runtime) async -> Outcome {
        guard status.source != nil else { return .noCredential }
        guard let entry = ClientRegistry.named(status.name), let api = entry.api,
            let identity = entry.descriptor.identity(in: runtime.view(of: entry.descriptor))
        else { return .notSupported }
        let target = api(runtime)
        let redactor = runtime.secrets.redactor
        do {
            try await target.prepare()
            let response = try await target.client.send(identity.request)
            let found = identity.read(response)
            return .identity(
                Identity(
                    account: Self.printable(found.account, redactor),
                    facts: found.facts.map { Self.printable($0, redactor) }))
        } catch let error as APIError {
            return .failed(Self.printable(Self.failure(error), redactor))
        } catch {
            return .failed(Self.printable(SystemErrorText.describe(error), redactor))
        }
    }

    /// Why a check failed, worded alike for every client: "the credential was refused (401
    /// Unauthorized): MESSAGE" for a refusal, "the service answered 500 Internal Server Error:
    /// MESSAGE" for another status (the server's message, without the request's URL, which the
    /// client's name stands for), the error itself when no answer came.
    static func failure(_ error: APIError) -> String {
        guard let status = error.status else { return error.message }
        let head = "\(status) \(HTTPStatus.reason(status))"
        var said = ""
        if let range = error.message.firstRange(of: "→ \(head)") {
            said = String(error.message[range.upperBound...])
            if said.hasPrefix(": ") { said.removeFirst(2) }
        }
        let refused = [.unauthorized, .forbidden].contains(error.kind) || [401, 403].contains(status)
        let what = refused ? "the credential was refused (\(head))" : "the service answered \(head)"
        return said.isEmpty ? what : "\(what): \(said)"
    }

    /// `text` as one safe line: what the server sent may hold control characters (a terminal's
    /// escapes: shown as `\x1b`, as everywhere apimacro shows a server's text), any length, or
    /// a secret it echoed (`REDACTED`).
    static func printable(_ text: String, _ redactor: Redactor) -> String {
        let shown = String(decoding: TerminalText.escapingControls(Array(redactor.redact(text).utf8)), as: UTF8.self)
        return shown.count > 200 ? String(shown.prefix(199)) + "…" : shown
    }
}
