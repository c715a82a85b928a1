import Foundation
import Synchronization

/// Puts the client's credential on an exchange — the last stage before the
/// wire, so nothing above it ever holds the secret in a URL or header. Only
/// for the client's own origin, and only over https or to a loopback host; a
/// pagination link or redirect to anywhere else goes without it.
public struct CredentialStage: Stage {
    private let slot: CredentialSlot
    public let home: Origin?

    public init(credential: Credential?, baseURL: String) {
        self.init(slot: CredentialSlot(credential), baseURL: baseURL)
    }

    /// A stage that reads the credential from `slot` at each request (it may change after a login).
    public init(slot: CredentialSlot, baseURL: String) {
        self.slot = slot
        self.home = Origin(url: baseURL)
    }

    /// Whether the credential may be attached to a request for `url`.
    public func allows(_ url: String) -> Bool {
        guard let home, let target = Origin(url: url) else { return false }
        return target == home && target.isSecureForCredentials
    }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        guard let credential = slot.value, allows(exchange.url) else { return try await next(exchange) }
        var exchange = exchange
        switch credential {
        case .bearer(let token):
            exchange.headers.set("Authorization", "Bearer \(token.revealed)")
        case .header(let name, let value):
            exchange.headers.set(name, value.revealed)
        case .basic(let user, let password):
            exchange.headers.set("Authorization", BasicAuthorization.header(user: user, password: password.revealed))
        case .query(let name, let value):
            let separator = exchange.url.contains("?") ? "&" : "?"
            exchange.url += "\(separator)\(FormEncoding.escape(name))=\(FormEncoding.escape(value.revealed))"
        }
        return try await next(exchange)
    }
}

/// A client's credential, which a login may set while the client is in use,
/// and the redactor that knows it (rebuilt only when the credential changes,
/// not on every request).
public final class CredentialSlot: Sendable {
    private let base: Redactor
    private let stored: Mutex<(credential: Credential?, redactor: Redactor)>

    /// - Parameter base: what to redact besides the credential itself.
    public init(_ credential: Credential?, redactor base: Redactor = Redactor(secrets: [])) {
        self.base = base
        stored = Mutex((credential, CredentialSlot.redactor(base, credential)))
    }

    private static func redactor(_ base: Redactor, _ credential: Credential?) -> Redactor {
        credential.map { base.adding([$0.secret.revealed]) } ?? base
    }

    /// The credential now.
    public var value: Credential? { stored.withLock { $0.credential } }

    /// Redacts the base secrets and the current credential.
    public var redactor: Redactor { stored.withLock { $0.redactor } }

    /// Replaces the credential.
    public func set(_ credential: Credential?) {
        let redactor = CredentialSlot.redactor(base, credential)
        stored.withLock { $0 = (credential, redactor) }
    }
}

/// `Authorization: Basic …`.
public enum BasicAuthorization {
    public static func header(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
