/// The one rule of which header and query-parameter names carry credentials.
///
/// Every writer asks it: the redactor (URLs in `-v` lines, error messages, HAR files), the HAR
/// recorder's headers, the cache key and the shared state's credential material, and the
/// redirect stage, which drops such headers when a redirect leaves the origin.
///
/// A name counts when it holds one of `markers` in any ASCII case (`Authorization`,
/// `Proxy-Authorization`, `Cookie`, `X-Api-Key`, `Private-Token`, `X-Auth-Token`, `*-Session`,
/// `private_token`, `api-key`, `signature`, `auth`, …). It errs towards redacting: a name that
/// only looks like a credential (`X-OAuth-Scopes`) is redacted too.
public enum CredentialNames {
    /// The parts of a name that mark a credential.
    static let markers: [[UInt8]] = [
        "auth", "token", "key", "secret", "session", "cookie", "pass", "credential", "signature", "jwt", "csrf",
        "xsrf",
    ].map { Array($0.utf8) }

    /// Query parameters that carry a credential without a marker in their name (Azure's SAS
    /// `sig`, OpenWeatherMap's `appid`), separators and case aside.
    static let unmarkedParameters: Set<String> = ["sig", "appid"]

    /// Query parameters whose names hold a marker but that carry no credential: an author, a
    /// search word, and the page cursors of paginated APIs (`pageToken`, `next_token`, …), which a
    /// recording must keep to tell its pages apart.
    ///
    /// Separators and case aside.
    static let plainParameters: Set<String> = [
        "author", "authors", "keyword", "keywords", "pagetoken", "nextpagetoken", "nexttoken",
        "continuationtoken", "synctoken",
    ]

    /// Whether a header with this name carries a credential: its value is redacted in HAR files,
    /// keys the cache, and is dropped when a redirect leaves the origin.
    ///
    /// Read from the name's bytes: no lower-cased copy, no lock.
    public static func isCredentialHeader(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { holdsMarker($0) }
    }

    /// Whether a query parameter with this name (percent-decoded) carries a credential: its value
    /// is redacted in every URL apimacro prints or records.
    public static func isCredentialParameter(_ name: String) -> Bool {
        var folded: [UInt8] = []
        folded.reserveCapacity(name.utf8.count)
        for byte in name.utf8 where byte != UInt8(ascii: "_") && byte != UInt8(ascii: "-") && byte != UInt8(ascii: ".")
        {
            folded.append(fold(byte))
        }
        let text = String(decoding: folded, as: UTF8.self)
        if unmarkedParameters.contains(text) { return true }
        if plainParameters.contains(text) { return false }
        return folded.withUnsafeBufferPointer { holdsMarker($0) }
    }

    /// Whether `bytes` hold one of the markers, ASCII letters in any case.
    private static func holdsMarker(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let letters = firstLetters
        for start in bytes.indices {
            let first = fold(bytes[start])
            // Most bytes start no marker: one bit test instead of a pass over the twelve.
            let letter = first &- UInt8(ascii: "a")
            guard letter < 26, letters & (1 << UInt32(letter)) != 0 else { continue }
            for marker in markers where marker[0] == first && marker.count <= bytes.count - start {
                var index = 1
                while index < marker.count, fold(bytes[start + index]) == marker[index] { index += 1 }
                if index == marker.count { return true }
            }
        }
        return false
    }

    /// The letters a marker starts with, as bits (`a` is bit 0); every marker starts with a small letter.
    static let firstLetters: UInt32 = markers.reduce(0) { letters, marker in
        precondition((UInt8(ascii: "a")...UInt8(ascii: "z")).contains(marker[0]), "a marker starts with a small letter")
        return letters | 1 << UInt32(marker[0] - UInt8(ascii: "a"))
    }

    /// An ASCII capital as its small letter; any other byte as it is.
    @inline(__always)
    static func fold(_ byte: UInt8) -> UInt8 {
        byte &- 65 < 26 ? byte | 0x20 : byte
    }
}
