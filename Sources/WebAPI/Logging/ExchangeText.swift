/// A request or a response written out in full for a person (`-vv`, `api --dry-run`): the
/// request line or status line, every header, then the body up to `bodyLimit` bytes, all
/// redacted by the credential rule exactly as `-v` and HAR files are (a credential header keeps
/// only its scheme, `Bearer REDACTED`; URLs lose their sensitive parameters; every known secret
/// is replaced wherever it appears).
public enum ExchangeText {
    /// The most body bytes shown; the rest is counted (`… 120 more bytes`).
    public static let bodyLimit = 4096

    /// The request's lines: `> GET https://…`, `> Name: value`, a `>` line, then the body.
    ///
    /// `marked`: each line starts with `> ` (`-vv`, among `<` lines); else plain (`--dry-run`).
    public static func request(
        method: String, url: String, headers: Headers, body: [UInt8], redactor: Redactor, limit: Int = bodyLimit,
        marked: Bool = true
    ) -> [String] {
        let mark = marked ? ">" : ""
        let prefix = marked ? "> " : ""
        var lines = ["\(prefix)\(method) \(redactor.redactURL(url))"]
        lines += headers.fields.map { "\(prefix)\($0.name): \(redactor.redactHeader(name: $0.name, value: $0.value))" }
        return lines + bodyLines(body, mark: mark, redactor: redactor, limit: limit)
    }

    /// `< 200 OK` (`source`: where the answer came from when not the network), headers, body.
    public static func response(
        status: Int, headers: Headers, body: [UInt8], source: String?, redactor: Redactor, limit: Int = bodyLimit
    ) -> [String] {
        var lines = ["< \(status) \(HTTPStatus.reason(status))" + (source.map { " (\($0))" } ?? "")]
        lines += headers.fields.map { "< \($0.name): \(redactor.redactHeader(name: $0.name, value: $0.value))" }
        return lines + bodyLines(body, mark: "<", redactor: redactor, limit: limit)
    }

    /// The body redacted, cut at `limit` bytes (at a character's start), as lines after an empty
    /// `mark` line; nothing for an empty body.
    static func bodyLines(_ body: [UInt8], mark: String, redactor: Redactor, limit: Int) -> [String] {
        guard !body.isEmpty else { return [] }
        let redacted = redactor.redact(bytes: body)
        var end = min(redacted.count, limit)
        // Never cut a UTF-8 sequence in two: back up to the start of a character.
        while end < redacted.count, end > 0, redacted[end] & 0xC0 == 0x80 { end -= 1 }
        var lines = [mark]
        lines += String(decoding: redacted[..<end], as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.count > 1, lines.last == "" { lines.removeLast() }
        if end < redacted.count { lines.append("… \(redacted.count - end) more bytes") }
        return lines
    }
}
