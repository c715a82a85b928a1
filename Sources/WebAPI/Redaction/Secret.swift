/// A credential value.
///
/// Its description is always `REDACTED`, so printing, logging or interpolating
/// one never shows the secret.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself, for the one stage that puts it on the wire.
    public let revealed: String

    public init(_ value: String) { revealed = value }

    public var description: String { "REDACTED" }
    public var debugDescription: String { "REDACTED" }
}

/// How a client authenticates its requests.
public enum Credential: Sendable, CustomStringConvertible {
    /// `Authorization: Bearer TOKEN`.
    case bearer(Secret)
    /// A header such as `X-API-Key: KEY`.
    case header(name: String, value: Secret)
    /// A query parameter such as `?key=KEY` or `?access_token=TOKEN`.
    case query(name: String, value: Secret)
    /// HTTP basic.
    case basic(user: String, password: Secret)

    /// The secret, for redaction.
    public var secret: Secret {
        switch self {
        case .bearer(let secret), .header(_, let secret), .query(_, let secret), .basic(_, let secret): secret
        }
    }

    /// Every form the credential takes on the wire, for redaction: the secret, and for
    /// basic the base64 of `user:password` that the `Authorization` header carries.
    public var wireForms: [String] {
        switch self {
        case .basic(let user, let password): BasicAuthorization.wireForms(user: user, password: password.revealed)
        default: [secret.revealed]
        }
    }

    /// The query parameter that carries the secret, if any (redacted in URLs).
    public var queryParameter: String? {
        if case .query(let name, _) = self { return name }
        return nil
    }

    public var description: String {
        switch self {
        case .bearer: "bearer REDACTED"
        case .header(let name, _): "header \(name): REDACTED"
        case .query(let name, _): "query \(name)=REDACTED"
        case .basic(let user, _): "basic \(user):REDACTED"
        }
    }
}
