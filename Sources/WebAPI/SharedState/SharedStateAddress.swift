import Platform

/// Where the state shared by every apimacro process lives:
/// `redis://[user:password@]host:port/db` (`APIMACRO_SHARED_STATE`, or `[shared] redis` in
/// config.toml).
///
/// The password is a secret: `description` shows it as `REDACTED`.
public struct SharedStateAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    /// The database number (`SELECT`), 0 by default.
    public let database: Int
    /// The ACL user (Redis 6+); nil for the default user.
    public let user: String?
    public let password: Secret?

    public init(host: String, port: Int = 6379, database: Int = 0, user: String? = nil, password: Secret? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
    }

    /// Parses `text`; the error says what is accepted and never repeats the password.
    /// - Parameters:
    ///   - text: `redis://[user:password@]host:port/db`.
    ///   - source: where the value came from, for the message (`APIMACRO_SHARED_STATE`).
    /// - Throws: `APIError` of kind `invalidRequest` saying what is accepted (the password redacted).
    public init(parsing text: String, source: String) throws {
        let accepted = "accepted: redis://[user:password@]host:port/db, such as redis://127.0.0.1:6379/0"
        func problem(_ reason: String) -> APIError {
            APIError(.invalidRequest, "\(source): \(SharedStateAddress.redacted(text)) \(reason); \(accepted)")
        }
        guard let components = URLComponents(string: text.trimmingWhitespace()) else {
            throw problem("is not a URL")
        }
        guard components.scheme?.lowercased() == "redis" else { throw problem("is not a redis:// URL") }
        guard let host = components.host, !host.isEmpty else { throw problem("names no host") }
        let port = components.port ?? 6379
        guard (1...65535).contains(port) else { throw problem("has a port out of range") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        var database = 0
        if !path.isEmpty {
            guard let number = Int(path), number >= 0 else { throw problem("names a database that is not a number") }
            database = number
        }
        guard components.query == nil, components.fragment == nil else { throw problem("has a query or fragment") }
        let user = components.user.flatMap { $0.percentDecoded ?? $0 }.flatMap { $0.isEmpty ? nil : $0 }
        let password = components.password.flatMap { $0.percentDecoded ?? $0 }.flatMap {
            $0.isEmpty ? nil : Secret($0)
        }
        guard user == nil || password != nil else { throw problem("names a user without a password") }
        self.init(
            host: host.trimmingScalars { $0 == "[" || $0 == "]" }, port: port, database: database,
            user: user,
            password: password)
    }

    /// `redis://user:REDACTED@host:port/db`: safe to print.
    public var description: String {
        var text = "redis://"
        if let user { text += user }
        if password != nil { text += ":REDACTED" }
        if user != nil || password != nil { text += "@" }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return text + "\(shownHost):\(port)/\(database)"
    }

    /// `text` with whatever sits between `://` and `@` past the first `:` replaced: for
    /// messages about a value that did not parse.
    static func redacted(_ text: String) -> String {
        guard let scheme = text.firstRange(of: "://"), let at = text.lastIndex(of: "@"),
            scheme.upperBound <= at
        else { return text }
        let userInfo = text[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":REDACTED" + String(text[at...])
    }
}
