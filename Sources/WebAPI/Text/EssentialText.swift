/// Text operations the program used from Foundation proper (`trimmingCharacters(in:)`,
/// `removingPercentEncoding`, `addingPercentEncoding(withAllowedCharacters:)`,
/// `replacingOccurrences(of:with:)`), written over the
/// standard library so that a file needs no more than `FoundationEssentials`: importing
/// `Foundation` links its ICU data (34 MB) into the binary.
///
/// Each gives Foundation's answer for the same input; `EssentialTextTests` compares them on a table
/// that includes non-ASCII spaces, combining marks and malformed escapes.
extension StringProtocol {
    /// `trimmingCharacters(in: .whitespaces)`: tab and the space separators (Unicode's Zs) off
    /// both ends.
    public func trimmingWhitespace() -> String {
        trimmingScalars(where: TextScalars.isWhitespace)
    }

    /// `trimmingCharacters(in: .whitespacesAndNewlines)`: tab, line feed to carriage return,
    /// U+0085 and Unicode's separators (Zs, Zl, Zp) off both ends.
    public func trimmingWhitespaceAndNewlines() -> String {
        trimmingScalars(where: TextScalars.isWhitespaceOrNewline)
    }

    /// The text without the scalars at either end for which `drop` is true.
    public func trimmingScalars(where drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, drop(scalars[start]) { start = scalars.index(after: start) }
        while end > start {
            let before = scalars.index(before: end)
            guard drop(scalars[before]) else { break }
            end = before
        }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[start..<end])
        return String(kept)
    }

    /// `removingPercentEncoding`: each `%XX` replaced by its byte; nil when a `%` is not followed
    /// by two hexadecimal digits or the bytes are not UTF-8.
    public var percentDecoded: String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(TextScalars.hexValue),
                let low = iterator.next().flatMap(TextScalars.hexValue)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `replacingOccurrences(of: target, with: replacement, options: .literal)`: every occurrence
    /// of `target`'s Unicode scalars replaced, left to right; the text as it is when `target` is
    /// empty.
    ///
    /// Unlike the standard library's `replacing(_:with:)`, which compares characters, it finds
    /// `"\r"` inside `"\r\n"` and a quote followed by a combining mark (one character each).
    /// Foundation's search without `.literal` found the first but not the second: what this
    /// replaces is a superset of what it replaced, equal to it unless a combining mark follows.
    public func replacingLiteral(_ target: some StringProtocol, with replacement: some StringProtocol) -> String {
        let pattern = Array(target.utf8)
        guard let first = pattern.first else { return String(self) }
        let bytes = Array(utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == first, index + pattern.count <= bytes.count,
                bytes[index..<index + pattern.count].elementsEqual(pattern)
            {
                out += replacement.utf8
                index += pattern.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `addingPercentEncoding(withAllowedCharacters:)`, with the sets in `URLBytes`.
    ///
    /// Every UTF-8 byte for which `allowed` is false is written as `%XX` (upper-case hexadecimal).
    public func percentEncoded(allowing allowed: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        for byte in utf8 {
            if allowed(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The scalar classes behind `trimmingWhitespace` and its kin (Foundation's `CharacterSet`
/// definitions).
public enum TextScalars {
    /// `CharacterSet.whitespaces`: Unicode's Zs, tab and (as Foundation has it) U+200B.
    public static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
    }

    /// `CharacterSet.newlines`: U+000A–U+000D, U+0085, U+2028 and U+2029.
    public static func isNewline(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    /// `CharacterSet.whitespacesAndNewlines`.
    public static func isWhitespaceOrNewline(_ scalar: Unicode.Scalar) -> Bool {
        isWhitespace(scalar) || isNewline(scalar)
    }

    /// `CharacterSet.decimalDigits` restricted to ASCII, as the program's uses need.
    public static func isASCIIDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }

    /// The value of an ASCII hexadecimal digit, or nil.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Foundation's URL character sets (`CharacterSet.urlQueryAllowed` and its kin) as byte tests
/// for `percentEncoded(allowing:)`: ASCII letters and digits and the punctuation that
/// `addingPercentEncoding(withAllowedCharacters:)` leaves for each set (which for the path and
/// host sets is less than the set holds: it escapes `:` in both and `[`, `]` in a host).
public enum URLBytes {
    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8, or punctuation: StaticString) -> Bool {
        if isAlphanumeric(byte) { return true }
        return punctuation.withUTF8Buffer { $0.contains(byte) }
    }

    /// `CharacterSet.urlQueryAllowed`.
    public static func queryAllowed(_ byte: UInt8) -> Bool { isAlphanumeric(byte, or: "!$&'()*+,-./:;=?@_~") }
    /// `CharacterSet.urlPathAllowed`.
    public static func pathAllowed(_ byte: UInt8) -> Bool { isAlphanumeric(byte, or: "!$&'()*+,-./=@_~") }
    /// `CharacterSet.urlHostAllowed`.
    public static func hostAllowed(_ byte: UInt8) -> Bool { isAlphanumeric(byte, or: "!$&'()*+,-.;=_~") }
    /// `CharacterSet.urlFragmentAllowed`.
    public static func fragmentAllowed(_ byte: UInt8) -> Bool { isAlphanumeric(byte, or: "!$&'()*+,-./:;=?@_~") }
    /// `CharacterSet.urlUserAllowed`.
    public static func userAllowed(_ byte: UInt8) -> Bool { isAlphanumeric(byte, or: "!$&'()*+,-.;=_~") }
    /// `CharacterSet.alphanumerics` restricted to ASCII (RFC 3986's unreserved set less `-._~`).
    public static func alphanumeric(_ byte: UInt8) -> Bool { isAlphanumeric(byte) }
    /// RFC 3986's unreserved characters: letters, digits and `-._~`.
    public static func unreserved(_ byte: UInt8) -> Bool { isAlphanumeric(byte, or: "-._~") }
}
