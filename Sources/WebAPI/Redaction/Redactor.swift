import Platform

/// Replaces secrets by `REDACTED` in anything bound for the user: URLs,
/// headers, log lines, error messages, recordings.
public struct Redactor: Sendable {
    /// The secrets, longest first so a secret that contains another is caught whole.
    public let secrets: [String]
    /// Query parameters redacted besides those `CredentialNames` names (lower-cased): a client's
    /// own query credential whose name the rule does not know.
    public let sensitiveParameters: Set<String>

    /// Each secret and, when it differs, its percent-encoded form: worked out once per
    /// redactor, not on every line redacted.
    private let patterns: [(plain: String, escaped: String?)]
    /// Every form in `patterns` as bytes when all are ASCII (nil otherwise): an ASCII text that
    /// holds none of them needs no search by Foundation (`redact`).
    private let asciiForms: [[UInt8]]?

    public init(secrets: [String], sensitiveParameters: Set<String> = []) {
        // Every secret is redacted; one of fewer than `wholeWordBelow` characters (a made-up `ab`)
        // only where it stands as a word of its own, so that it cannot turn every "a" of the
        // output into REDACTED.
        self.secrets = Array(Set(secrets.filter { !$0.isEmpty })).sorted { $0.count > $1.count }
        self.sensitiveParameters = Set(sensitiveParameters.map { $0.lowercased() })
        patterns = self.secrets.map { secret in
            let escaped = FormEncoding.escape(secret)
            return (secret, escaped == secret ? nil : escaped)
        }
        let forms = patterns.flatMap { [Array($0.plain.utf8)] + ($0.escaped.map { [Array($0.utf8)] } ?? []) }
        asciiForms = forms.allSatisfy { $0.allSatisfy { $0 < 0x80 } } ? forms : nil
    }

    /// A redactor that also knows these secrets.
    public func adding(_ more: [String]) -> Redactor {
        Redactor(secrets: secrets + more, sensitiveParameters: sensitiveParameters)
    }

    /// This redactor, also knowing the credentials `exchange` carries by name: the values of the
    /// headers and query parameters the credential rule names (`CredentialNames`); of a header
    /// with a scheme (`Bearer …`) the credential after it, of a cookie header each cookie's value.
    ///
    /// For what is written about that exchange (a HAR entry, an error), where a server may echo
    /// them in a body; never the client's own redactor, which says what the process knows as
    /// secrets (a header that only looks like a credential holds no secret the shared cache may
    /// be keyed by).
    public func adding(credentialsOf exchange: Exchange) -> Redactor {
        var values: [String] = []
        for field in exchange.headers where CredentialNames.isCredentialHeader(field.name) {
            // `Bearer X` echoed reads `Bearer REDACTED`, as in the HAR's own headers.
            if let (_, credential) = Redactor.scheme(of: field.value) {
                values.append(String(credential))
                continue
            }
            values.append(field.value)
            for pair in field.value.split(separator: ";") {
                if let equals = pair.firstIndex(of: "=") { values.append(String(pair[pair.index(after: equals)...])) }
            }
        }
        if let mark = exchange.url.firstIndex(of: "?") {
            let query = exchange.url[exchange.url.index(after: mark)...].prefix { $0 != "#" }
            for pair in query.split(separator: "&") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let name = Redactor.decoded(pair[..<equals])
                if isSensitiveParameter(name) { values.append(Redactor.decoded(pair[pair.index(after: equals)...])) }
            }
        }
        let fresh = values.filter { $0.count >= 4 && !secrets.contains($0) }
        return fresh.isEmpty ? self : adding(fresh)
    }

    /// A query component percent-decoded (`+` as a space); as it is when it does not decode.
    static func decoded(_ text: Substring) -> String {
        let spaced = text.replacingLiteral("+", with: " ")
        return spaced.percentDecoded ?? spaced
    }

    /// `text` with every secret replaced (also in percent-encoded form).
    public func redact(_ text: String) -> String {
        guard !patterns.isEmpty else { return text }
        // The common case, a URL or line with no secret in it, without Foundation's search
        // (~23 k instructions a request for the response's URL alone).
        if let asciiForms, Redactor.holdsNone(of: asciiForms, in: text) { return text }
        var result = text
        for (secret, escaped) in patterns {
            for form in [secret] + (escaped.map { [$0] } ?? []) {
                result =
                    form.count < Redactor.wholeWordBelow
                    ? String(decoding: Redactor.replacingWords(Array(form.utf8), in: Array(result.utf8)), as: UTF8.self)
                    : Redactor.replacing(form, in: result)
            }
        }
        return result
    }

    /// Secrets shorter than this are redacted only as whole words (not inside a run of letters
    /// and digits): 4 characters.
    public static let wholeWordBelow = 4

    /// `bytes` with each occurrence of `pattern` that no ASCII letter or digit touches replaced.
    static func replacingWords(_ pattern: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return bytes }
        func isWord(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let end = index + pattern.count
            if bytes[index] == pattern[0], end <= bytes.count, bytes[index..<end].elementsEqual(pattern),
                index == 0 || !isWord(bytes[index - 1]), end == bytes.count || !isWord(bytes[end])
            {
                result += redacted
                index = end
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// `text` with every occurrence of `form` replaced by `REDACTED`.
    ///
    /// First as characters (a canonically equivalent spelling, `é` as `e` and a combining
    /// accent, is found, as Foundation's search found it), then as bytes (the form at the start of a character: before
    /// a combining mark, or `\r` of `\r\n`, which Foundation's search partly missed). A form
    /// holding a NUL is replaced byte for byte only (Foundation's search trapped when a text ended
    /// with the part of such a form before its trailing NULs, "x abc" and "abc\0"; a token in a
    /// pasted redirect or a credential a macro sends percent-encoded may decode to one).
    static func replacing(_ form: String, in text: String) -> String {
        guard form.utf8.contains(0) else {
            var result = ""
            var start = text.startIndex
            for found in text.ranges(of: form) {
                result += text[start..<found.lowerBound].replacingLiteral(form, with: "REDACTED") + "REDACTED"
                start = found.upperBound
            }
            return result + text[start...].replacingLiteral(form, with: "REDACTED")
        }
        return String(decoding: replacing(Array(form.utf8), in: Array(text.utf8), with: redacted), as: UTF8.self)
    }

    /// `REDACTED`'s bytes.
    private static let redacted = Array("REDACTED".utf8)

    /// Whether `text` is ASCII and holds none of `forms` (ASCII): then Foundation's search finds
    /// none either, as no ASCII text is canonically equivalent to any other text.
    static func holdsNone(of forms: [[UInt8]], in text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for byte in bytes where byte >= 0x80 { return false }
            for form in forms where occurs(form, in: bytes) { return false }
            return true
        }
    }

    /// Whether `pattern` (not empty) occurs in `bytes`.
    static func occurs(_ pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = pattern.first, bytes.count >= pattern.count else { return false }
        var index = 0
        while index + pattern.count <= bytes.count {
            if bytes[index] == first {
                var matched = 1
                while matched < pattern.count, bytes[index + matched] == pattern[matched] { matched += 1 }
                if matched == pattern.count { return true }
            }
            index += 1
        }
        return false
    }

    /// `bytes` with every secret replaced, whatever they hold (a body that is not UTF-8 text keeps
    /// its other bytes exactly; one that is gets `redact(_:)`).
    public func redact(bytes: [UInt8]) -> [UInt8] {
        guard !patterns.isEmpty else { return bytes }
        if let text = String(validating: bytes, as: UTF8.self) { return Array(redact(text).utf8) }
        var result = bytes
        for (secret, escaped) in patterns {
            for form in [secret] + (escaped.map { [$0] } ?? []) {
                result =
                    form.count < Self.wholeWordBelow
                    ? Self.replacingWords(Array(form.utf8), in: result)
                    : Self.replacing(Array(form.utf8), in: result, with: Self.redacted)
            }
        }
        return result
    }

    /// `bytes` with every occurrence of `pattern` (not empty) replaced by `replacement`.
    static func replacing(_ pattern: [UInt8], in bytes: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == pattern[0], index + pattern.count <= bytes.count,
                bytes[index..<(index + pattern.count)].elementsEqual(pattern)
            {
                result += replacement
                index += pattern.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// Whether the value of the query parameter `name` (percent-decoded) is redacted in URLs:
    /// the credential rule's (`CredentialNames.isCredentialParameter`), or one of `sensitiveParameters`.
    public func isSensitiveParameter(_ name: String) -> Bool {
        CredentialNames.isCredentialParameter(name) || sensitiveParameters.contains(name.lowercased())
    }

    /// A header's value as apimacro writes it (HAR files): a credential header
    /// (`CredentialNames.isCredentialHeader`) keeps only its scheme (`Bearer REDACTED`), any other
    /// value has its secrets replaced.
    public func redactHeader(name: String, value: String) -> String {
        guard CredentialNames.isCredentialHeader(name) else { return redact(value) }
        return (Redactor.scheme(of: value).map { "\($0.scheme) " } ?? "") + "REDACTED"
    }

    /// The authentication scheme `value` starts with (`Basic`, `Bearer`, `Token`, `Digest`, as
    /// written) and the credential after it; nil for any other value.
    static func scheme(of value: String) -> (scheme: Substring, credential: Substring)? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, ["basic", "bearer", "token", "digest"].contains(parts[0].lowercased()) else {
            return nil
        }
        return (parts[0], parts[1])
    }

    /// A URL with secrets, sensitive query values (also in a fragment shaped like a query, as
    /// OAuth's `#access_token=…`) and any user:password removed (the whole userinfo:
    /// `https://TOKEN@host` carries a token as the user name).
    ///
    /// Worked on the text, not through a URL parser: a URL no parser accepts (a space, a `|`) is
    /// redacted all the same, and anything not redacted stays as it was written.
    public func redactURL(_ url: String) -> String {
        // No query, fragment or userinfo: nothing to find but the secrets.
        // The bytes in place when the string is native (every answer's URL passes here; the
        // UTF8View's iterator took ~35 instructions a byte).
        let special: (UInt8) -> Bool = { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "#") }
        if !(url.utf8.withContiguousStorageIfAvailable { $0.contains(where: special) }
            ?? url.utf8.contains(where: special))
        {
            return redact(url)
        }
        var rest = Substring(url)
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var text = String(rest)
        if let separator = rest.firstRange(of: "://") {
            let authority = rest[separator.upperBound...].prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@") {
                text = String(rest[..<separator.upperBound]) + "REDACTED" + String(rest[at...])
            }
        }
        if let query { text += "?" + redactedPairs(query) }
        if let fragment { text += "#" + (fragment.contains("=") ? redactedPairs(fragment) : String(fragment)) }
        return redact(text)
    }

    /// `name=value&…` (percent-encoded) with the values of sensitive parameters replaced; the
    /// rest as it was.
    private func redactedPairs(_ text: Substring) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals]
            return isSensitiveParameter(Redactor.decoded(name)) ? String(name) + "=REDACTED" : String(pair)
        }.joined(separator: "&")
    }
}
