/// Which URLs apimacro ever sends a request to: `http` and `https` only, and
/// a URL a server chose (a redirect's `Location`, a `Link: rel="next"`, a
/// `next_url` in a body) may go from https down to plain http only towards a
/// loopback host.
///
/// Anything else (`http+unix://`, `file://`, `ftp://`, an https page linking to
/// `http://elsewhere`) is refused before a byte is sent (the previous
/// transport, AsyncHTTPClient, would have connected
/// `http+unix://%2Fvar%2Frun%2Fdocker.sock/…` to a local socket; libcurl speaks
/// file://, ftp:// and more unless told not to).
public enum SchemeRule {
    /// The schemes a request may use.
    public static let allowedSchemes: Set<String> = ["http", "https"]

    /// The lower-cased scheme of `url` (the text before the first `:`), or nil when it has none.
    ///
    /// Read from the UTF-8 bytes (the Character-wise reading took ~7 k instructions a request:
    /// Unicode letter properties, a lower-cased copy); a colon followed by a non-ASCII byte,
    /// which may join it into one Character, is read Character-wise as before.
    public static func scheme(of url: String) -> String? {
        var url = url
        var joined = false
        let scheme: String? = url.withUTF8 { bytes in
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            if colon + 1 < bytes.count, bytes[colon + 1] >= 0x80 {
                joined = true
                return nil
            }
            guard colon > 0, isLetter(bytes[0]) else { return nil }
            for byte in bytes[..<colon] {
                guard
                    isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                else { return nil }
            }
            return String(unsafeUninitializedCapacity: colon) { out in
                for index in 0..<colon { out[index] = bytes[index] | (isLetter(bytes[index]) ? 0x20 : 0) }
                return colon
            }
        }
        return joined ? schemeByCharacters(of: url) : scheme
    }

    /// An ASCII letter.
    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    /// `scheme(of:)` read Character by Character.
    static func schemeByCharacters(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon]
        guard let first = scheme.first, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme.lowercased()
    }

    /// Why a request to `target` must not be sent, or nil when it may.
    ///
    /// - Parameters:
    ///   - target: the URL a request would go to.
    ///   - previous: the URL whose answer named `target` (the redirecting or
    ///     linking page), or nil for a URL the user or the configuration gave.
    /// - Returns: the reason, for an error message, or nil when the request may be sent.
    public static func violation(_ target: String, from previous: String?) -> String? {
        guard let targetScheme = scheme(of: target), allowedSchemes.contains(targetScheme) else {
            return "only http and https URLs are followed"
        }
        // A space or a control character: no request can carry it (libcurl would fail the
        // request as a network error, retried), and it must not reach a terminal as it is.
        if previous != nil, target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return "it holds a space or a control character"
        }
        guard let origin = Origin(url: target) else { return "it is not a valid http(s) URL" }
        if targetScheme == "http", let previous, scheme(of: previous) == "https", !origin.isLoopback {
            return "an https request may not continue over plain http (only to a loopback host)"
        }
        return nil
    }

    /// Throws a `NetworkError`-kind `APIError` when a server-chosen `target` breaks the rule.
    ///
    /// - Parameters:
    ///   - target: the URL the server named.
    ///   - previous: the URL whose answer named it, or nil.
    ///   - what: what named the URL (`redirect`, `next page link`), for the message.
    ///   - method: the request's method, for the message.
    ///   - redactor: redacts the URLs in the message.
    /// - Throws: `APIError` of kind `network` saying why the URL is refused.
    public static func check(_ target: String, from previous: String?, what: String, method: String, redactor: Redactor)
        throws
    {
        guard let why = violation(target, from: previous) else { return }
        let shownTarget = redactor.redactURL(target)
        let shownPrevious = previous.map { redactor.redactURL($0) }
        var message = "refused to follow the \(what) to \(shownTarget)"
        if let shownPrevious { message += " (from \(method) \(shownPrevious))" }
        message += ": \(why); nothing was sent there"
        throw APIError(.network, message, url: shownTarget)
    }
}
