import Platform
public import WebAPI

/// How GitHub says what went wrong: a JSON body with `message`, and for a 422 ("Validation
/// Failed") an `errors` array naming each field and what is wrong with it.
///
/// The shapes are those of GitHub's REST documentation ("Client errors",
/// https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api): each
/// element is an object with `resource`, `field` and `code` (`missing`, `missing_field`,
/// `invalid`, `already_exists`, `unprocessable`), or `code: custom` with a `message`; some
/// endpoints send plain strings instead.
public enum GitHubErrors {
    /// The most error entries the message names; the exception's `errors` holds them all.
    static let namedInMessage = 5

    /// The message of an error body: `message`, then what the `errors` entries say, as
    /// `Validation Failed (title: missing_field; name: already_exists)`.
    @Sendable public static func message(_ response: Response) -> String? {
        guard let root = JSONValue.native(in: response.body, path: []) as? [String: Any] else { return nil }
        let message = root["message"] as? String
        let entries = (root["errors"] as? [Any] ?? []).compactMap(describe)
        guard !entries.isEmpty else { return message }
        var named = entries.prefix(namedInMessage).joined(separator: "; ")
        if entries.count > namedInMessage { named += "; and \(entries.count - namedInMessage) more" }
        return (message.map { $0 + " " } ?? "") + "(\(named))"
    }

    /// The `errors` array of an error body as JSON text, or nil when it has none.
    @Sendable public static func details(_ response: Response) -> String? {
        guard let errors = JSONValue.native(in: response.body, path: ["errors"]) as? [Any], !errors.isEmpty,
            let data = JSONValue.encoded(native: errors, [.withoutEscapingSlashes, .sortedKeys])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// One entry in words: its `message`, else `field: code`; a string as it is.
    static func describe(_ entry: Any) -> String? {
        if let text = entry as? String { return text }
        guard let object = entry as? [String: Any] else { return nil }
        if let message = object["message"] as? String, !message.isEmpty { return message }
        let field = (object["field"] as? String) ?? (object["resource"] as? String)
        let code = object["code"] as? String
        switch (field, code) {
        case (let field?, let code?): return "\(field): \(code)"
        case (let field?, nil): return field
        case (nil, let code?): return code
        case (nil, nil): return nil
        }
    }
}
