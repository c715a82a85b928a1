import Foundation

/// Replaces secrets by `REDACTED` in anything bound for the user: URLs,
/// headers, log lines, error messages, recordings.
public struct Redactor: Sendable {
    /// The secrets, longest first so a secret that contains another is caught whole.
    public let secrets: [String]
    /// Query parameters whose values are always redacted in URLs.
    public let sensitiveParameters: Set<String>

    /// Query parameters that carry credentials in the APIs apimacro speaks.
    public static let defaultSensitiveParameters: Set<String> = [
        "access_token", "key", "api_key", "apikey", "appid", "client_secret", "token", "oauth_token", "password",
    ]

    /// Each secret and, when it differs, its percent-encoded form: worked out once per
    /// redactor, not on every line redacted.
    private let patterns: [(plain: String, escaped: String?)]

    public init(secrets: [String], sensitiveParameters: Set<String> = Redactor.defaultSensitiveParameters) {
        self.secrets = Array(Set(secrets.filter { $0.count >= 4 })).sorted { $0.count > $1.count }
        self.sensitiveParameters = sensitiveParameters
        patterns = self.secrets.map { secret in
            let escaped = FormEncoding.escape(secret)
            return (secret, escaped == secret ? nil : escaped)
        }
    }

    /// A redactor that also knows these secrets.
    public func adding(_ more: [String]) -> Redactor {
        Redactor(secrets: secrets + more, sensitiveParameters: sensitiveParameters)
    }

    /// `text` with every secret replaced (also in percent-encoded form).
    public func redact(_ text: String) -> String {
        var result = text
        for (secret, escaped) in patterns {
            result = result.replacingOccurrences(of: secret, with: "REDACTED")
            if let escaped { result = result.replacingOccurrences(of: escaped, with: "REDACTED") }
        }
        return result
    }

    /// A URL with secrets, sensitive query values and any user:password removed (the whole
    /// userinfo: `https://TOKEN@host` carries a token as the user name).
    public func redactURL(_ url: String) -> String {
        // No query and no userinfo: nothing for the URL parser to find, only the secrets.
        if !url.utf8.contains(UInt8(ascii: "?")) && !url.utf8.contains(UInt8(ascii: "@")) { return redact(url) }
        guard var components = URLComponents(string: url) else { return redact(url) }
        if components.user != nil || components.password != nil {
            components.password = nil
            components.user = "REDACTED"
        }
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                sensitiveParameters.contains(item.name.lowercased()) && item.value != nil
                    ? URLQueryItem(name: item.name, value: "REDACTED") : item
            }
        }
        return redact(components.string ?? url)
    }
}
