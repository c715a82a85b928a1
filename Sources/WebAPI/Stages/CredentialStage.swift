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

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
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
