import Clients
import Platform
import WebAPI

/// A forward proxy's URL as a proxy variable gives it (`http://user:password@proxy:3128`),
/// checked and put in the one form the transport takes.
///
/// Its user name and password are secrets: they are never printed, and every form the wire
/// carries is redacted.
struct ProxyURL: Sendable, Equatable {
    /// `http` or `https` (the connection to the proxy itself).
    let scheme: String
    let host: String
    let port: Int
    /// The user name and password, percent-decoded; nil when the URL has none.
    let user: String?
    let password: String?
    /// `scheme://[user:password@]host:port` with the userinfo percent-encoded as given and the
    /// port always written (the scheme's default, 80 or 443, when the variable has none).
    let normalized: String
    /// The userinfo as written in the URL (still percent-encoded), for redaction.
    private let rawUserinfo: String?

    /// Parses a proxy variable's value; `source` names the variable (or config.toml key) in errors,
    /// which never show the userinfo.
    static func parse(_ text: String, source: String) throws -> ProxyURL {
        let trimmed = text.trimmingWhitespace()
        // `proxy.example.com:3128` (no scheme) is an http proxy, as curl and most tools read it.
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        let accepted =
            "accepted: an http:// or https:// proxy URL such as http://proxy.example.com:3128 (or http://user:password@proxy.example.com:3128)"
        func problem(_ what: String) -> MacroError {
            MacroError("\(source): '\(hidingUserinfo(trimmed))' \(what); \(accepted)")
        }
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased() else {
            throw problem("is not a URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw problem("uses '\(scheme)', which apimacro does not speak to a proxy")
        }
        guard let host = components.host, !host.isEmpty else { throw problem("has no host") }
        // A proxy URL is scheme://[userinfo@]host[:port][/] and nothing more. Anything after the
        // port is most often a password holding '/', '?' or '#' unencoded: `user:12/abc@host`
        // parses as host `user`, port 12, which would be looked up in DNS and printed.
        guard components.percentEncodedPath.isEmpty || components.percentEncodedPath == "/",
            components.percentEncodedQuery == nil, components.percentEncodedFragment == nil
        else {
            throw problem(
                "has a path, query or fragment, which a proxy URL never has (percent-encode '/', '?', '#' or '@' in a user name or password: %2F, %3F, %23, %40)"
            )
        }
        guard isHost(host) else {
            throw problem(
                "has a host that is neither a name of letters, digits, '-', '.' and '_' (write a non-ASCII name in its xn-- form) nor an IP address"
            )
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else { throw problem("has port \(port), outside 1-65535") }
        let user = components.percentEncodedUser
        let password = components.percentEncodedPassword
        // libcurl connects directly, without a word, when the decoded user name or password
        // holds a control character (%0A, %0D, %00, a tab): refused here, so a proxy that is set
        // is always the one used. (An '@' or a non-ASCII letter written as such comes back
        // percent-encoded from URLComponents, as libcurl reads it.)
        let decoded = (components.user ?? "") + (components.password ?? "")
        if decoded.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw problem("has a control character (such as %0A, %0D or %00) in its user name or password")
        }
        var rawUserinfo: String?
        if user != nil || password != nil {
            rawUserinfo = (user ?? "") + (password.map { ":" + $0 } ?? "")
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let normalized = "\(scheme)://" + (rawUserinfo.map { $0 + "@" } ?? "") + "\(hostPart.lowercased()):\(port)"
        return ProxyURL(
            scheme: scheme, host: host.lowercased(), port: port, user: components.user, password: components.password,
            normalized: normalized, rawUserinfo: rawUserinfo)
    }

    /// What a redactor must know to keep the proxy's credentials out of output: the password
    /// (as written and decoded), `user:password` as the URL carries it, and the base64 forms
    /// of `Proxy-Authorization: Basic`.
    ///
    /// A user name alone (a token as the user) is a secret too.
    var secrets: [String] {
        let user = self.user ?? ""
        let password = self.password ?? ""
        guard !user.isEmpty || !password.isEmpty else { return [] }
        var forms = BasicAuthorization.wireForms(user: user, password: password)
        forms += [password.isEmpty ? user : "\(user):\(password)"]
        if let rawUserinfo {
            forms.append(rawUserinfo)
            forms +=
                password.isEmpty ? [] : rawUserinfo.split(separator: ":", maxSplits: 1).dropFirst().map(String.init)
        }
        return Array(Set(forms.filter { !$0.isEmpty })).sorted()
    }

    /// Whether `host` (as `URLComponents` decodes it) is a host name of ASCII letters, digits, `-`,
    /// `.` and `_`, or an IPv6 address in brackets: what libcurl connects to as written.
    ///
    /// A decoded `%2F` or `%40` would move the host elsewhere, and libcurl refuses a non-ASCII name.
    private static func isHost(_ host: String) -> Bool {
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        let inner = bracketed ? host.dropFirst().dropLast() : Substring(host)
        let isAddress = inner.contains(":")
        return !inner.isEmpty
            && inner.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                    UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: "."):
                    return true
                case UInt8(ascii: ":"):
                    return isAddress
                case UInt8(ascii: "g")...UInt8(ascii: "z"), UInt8(ascii: "G")...UInt8(ascii: "Z"), UInt8(ascii: "-"),
                    UInt8(ascii: "_"):
                    return !isAddress
                default:
                    return false
                }
            } && (isAddress || !bracketed)
    }

    /// `text` with anything between `scheme://` and the last `@` replaced by `REDACTED`: also
    /// for a value too broken to parse (a password holding `/` or `@`), whose password must not
    /// be printed either.
    static func hidingUserinfo(_ text: String) -> String {
        let start = text.firstRange(of: "://")?.upperBound ?? text.startIndex
        guard let at = text[start...].lastIndex(of: "@") else { return text }
        return String(text[..<start]) + "REDACTED" + String(text[at...])
    }
}
