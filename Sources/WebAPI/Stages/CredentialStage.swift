import Foundation
import Synchronization

/// Puts the client's credential on an exchange — the last stage before the
/// wire, so nothing above it ever holds the secret in a URL or header.
///
/// Only for the client's own origin, and only over https or to a loopback host;
/// a pagination link or redirect to anywhere else goes without it.
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
    public func allows(_ url: String) -> Bool { allows(Origin(url: url)) }

    /// Whether the credential may be attached to a request for `target` (an exchange's origin).
    func allows(_ target: Origin?) -> Bool {
        guard let home, let target else { return false }
        return target == home && target.isSecureForCredentials
    }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        try await next(wire(exchange))
    }

    /// The exchange with the credential attached when its URL's origin gets one; unchanged otherwise.
    public func wire(_ exchange: Exchange) -> Exchange {
        guard let credential = slot.value, allows(exchange.origin) else { return exchange }
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
        return exchange
    }
}

/// A client's credential, which a login may set while the client is in use,
/// and the redactor that knows it (rebuilt only when the credential changes,
/// not on every request).
public final class CredentialSlot: Sendable {
    private let stored: Mutex<(credential: Credential?, base: Redactor, redactor: Redactor)>

    /// - Parameters:
    ///   - credential: the credential to start with, or nil for none yet.
    ///   - base: what to redact besides the credential itself.
    public init(_ credential: Credential?, redactor base: Redactor = Redactor(secrets: [])) {
        stored = Mutex((credential, base, CredentialSlot.redactor(base, credential)))
    }

    private static func redactor(_ base: Redactor, _ credential: Credential?) -> Redactor {
        credential.map { base.adding($0.wireForms) } ?? base
    }

    /// Redacts `secrets` too from now on, whatever the credential: the forms of a per-request
    /// credential (`auth=(user, password)`), which may come back in a body that echoes it.
    public func remember(_ secrets: [String]) {
        stored.withLock { state in
            let new = secrets.filter { $0.count >= 4 && !state.base.secrets.contains($0) }
            guard !new.isEmpty else { return }
            state.base = state.base.adding(new)
            state.redactor = CredentialSlot.redactor(state.base, state.credential)
        }
    }

    /// The credential now.
    public var value: Credential? { stored.withLock { $0.credential } }

    /// Redacts the base secrets and the current credential.
    public var redactor: Redactor { stored.withLock { $0.redactor } }

    /// Replaces the credential.
    public func set(_ credential: Credential?) {
        stored.withLock { state in
            state.credential = credential
            state.redactor = CredentialSlot.redactor(state.base, credential)
        }
    }
}

/// `Authorization: Basic …`.
public enum BasicAuthorization {
    public static func header(user: String, password: String) -> String {
        "Basic " + encoded(user: user, password: password)
    }

    /// The base64 of `user:password`, as the header carries it.
    static func encoded(user: String, password: String) -> String {
        Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// What a redactor must know to keep these credentials out of output: the password and
    /// the base64 the header carries (with and without its `=` padding, and in its URL-safe
    /// alphabet, as a server may echo it back in any of these).
    public static func wireForms(user: String, password: String) -> [String] {
        let standard = encoded(user: user, password: password)
        let unpadded = String(standard.reversed().drop { $0 == "=" }.reversed())
        let urlSafe = unpadded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return Array(Set([password, standard, unpadded, urlSafe]))
    }
}
