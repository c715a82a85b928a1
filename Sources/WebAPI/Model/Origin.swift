import Platform

/// The scheme, host and port a URL points at.
public struct Origin: Sendable, Equatable {
    public let scheme: String
    public let host: String
    public let port: Int

    public init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// The origin of `url`, or nil when it has no scheme or host.
    ///
    /// The common form (`http(s)://host[:port]` with a plain ASCII host) is read straight from
    /// the bytes (`plain`); anything else goes through `URLComponents`, as before.
    public init?(url: String) {
        if let plain = Origin.plain(url) {
            self = plain
            return
        }
        guard let parsed = Origin.parsed(url) else { return nil }
        self = parsed
    }

    /// `URLComponents`' reading of `url`: the source of truth `plain` must agree with.
    static func parsed(_ url: String) -> Origin? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        return Origin(scheme: scheme, host: host, port: components.port ?? (scheme == "https" ? 443 : 80))
    }

    /// The origin of a URL in the form nearly every request has, read from its bytes; nil for
    /// any other form, which `parsed` then reads.
    ///
    /// The form: `http://` or `https://` (any case); a host of 1–63-byte labels of ASCII letters,
    /// digits and inner dashes, at most 253 bytes, none an IDNA label (`xn--`); an optional port
    /// of 1–5 digits; then nothing, or `/`, `?` or `#` followed only by what RFC 3986 allows in a
    /// path, query and fragment (unreserved, sub-delims, `:@/?`, `%XX`, one `#`). User info, IP
    /// literals, percent-encoded or non-ASCII hosts all go to `parsed`. OriginTests checks both
    /// readings agree on many generated URLs.
    static func plain(_ url: String) -> Origin? {
        url.utf8.withContiguousStorageIfAvailable { bytes -> Origin? in
            let count = bytes.count
            func lower(_ index: Int) -> UInt8 { bytes[index] | 0x20 }
            guard count >= 8, lower(0) == 0x68, lower(1) == 0x74, lower(2) == 0x74, lower(3) == 0x70 else {
                return nil
            }
            var index = 4
            let secure = lower(index) == 0x73
            if secure { index += 1 }
            guard index + 3 <= count, bytes[index] == 0x3A, bytes[index + 1] == 0x2F, bytes[index + 2] == 0x2F else {
                return nil
            }
            index += 3
            let hostStart = index
            var labelStart = index
            func labelIsPlain(_ start: Int, _ end: Int) -> Bool {
                let length = end - start
                guard length >= 1, length <= 63, bytes[start] != 0x2D, bytes[end - 1] != 0x2D else { return false }
                return
                    !(length >= 4 && lower(start) == 0x78 && lower(start + 1) == 0x6E && bytes[start + 2] == 0x2D
                    && bytes[start + 3] == 0x2D)
            }
            while index < count {
                let byte = bytes[index]
                if byte == 0x2E {
                    guard labelIsPlain(labelStart, index) else { return nil }
                    labelStart = index + 1
                } else if !(byte == 0x2D || (byte >= 0x30 && byte <= 0x39)
                    || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A))
                {
                    break
                }
                index += 1
            }
            let hostEnd = index
            guard hostEnd - hostStart <= 253, labelIsPlain(labelStart, hostEnd) else { return nil }
            var port = secure ? 443 : 80
            if index < count, bytes[index] == 0x3A {
                index += 1
                let digitsStart = index
                var value = 0
                while index < count, bytes[index] >= 0x30, bytes[index] <= 0x39, index - digitsStart < 5 {
                    value = value * 10 + Int(bytes[index] - 0x30)
                    index += 1
                }
                guard index > digitsStart else { return nil }
                port = value
            }
            guard index == count || bytes[index] == 0x2F || bytes[index] == 0x3F || bytes[index] == 0x23,
                Origin.restIsPlain(bytes, from: index)
            else { return nil }
            var host = [UInt8](bytes[hostStart..<hostEnd])
            for position in host.indices where host[position] >= 0x41 && host[position] <= 0x5A {
                host[position] |= 0x20
            }
            return Origin(
                scheme: secure ? "https" : "http", host: String(decoding: host, as: UTF8.self), port: port)
        } ?? nil
    }

    /// Whether `bytes[from...]` holds only what RFC 3986 allows after the authority: unreserved
    /// characters, sub-delims, `:@/?`, percent-escapes of two hex digits, and at most one `#`.
    private static func restIsPlain(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        func isHex(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66)
        }
        var index = start
        var fragment = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E,  // unreserved
                0x21, 0x24, 0x26...0x2C, 0x3B, 0x3D,  // sub-delims: ! $ & ' ( ) * + , ; =
                0x3A, 0x40, 0x2F, 0x3F:  // : @ / ?
                index += 1
            case 0x25:
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return false }
                index += 3
            case 0x23:
                guard !fragment else { return false }
                fragment = true
                index += 1
            default:
                return false
            }
        }
        return true
    }

    /// 127.0.0.0/8, ::1 and localhost: credentials may go there over plain http.
    ///
    /// An ASCII host is read from its bytes (`loopbackReading` was ~4 k instructions a call: a
    /// split into substrings and an integer parse of each, twice or more a request to a
    /// loopback http origin); any other host goes to `loopbackReading`, whose answer the bytes'
    /// must equal (OriginTests compares them).
    public var isLoopback: Bool {
        var host = host
        return host.withUTF8 { bytes in Origin.loopbackBytes(bytes) } ?? loopbackReading
    }

    /// `loopbackReading` for an ASCII host; nil for any other.
    static func loopbackBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        // The brackets of an IPv6 literal trimmed from both ends.
        var start = 0
        var end = bytes.count
        func bracket(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") }
        while start < end, bracket(bytes[start]) { start += 1 }
        while end > start, bracket(bytes[end - 1]) { end -= 1 }
        let bare = bytes[start..<end]
        if bare.elementsEqual("localhost".utf8) || bare.elementsEqual("::1".utf8)
            || (bare.count >= 10 && bare.suffix(10).elementsEqual(".localhost".utf8))
        {
            return true
        }
        // Four dot-separated parts (empty ones skipped, as `split` does), the first "127", each
        // a UInt8 as `UInt8(_:)` reads it: an optional sign, then digits, at most 255 (or 0 after "-").
        let dot = UInt8(ascii: ".")
        var parts = 0
        var rest = bare
        while let first = rest.firstIndex(where: { $0 != dot }) {
            let end = rest[first...].firstIndex(of: dot) ?? rest.endIndex
            let part = rest[first..<end]
            parts += 1
            guard parts <= 4, parts > 1 || part.elementsEqual("127".utf8), octet(part) else { return false }
            rest = rest[end...]
        }
        return parts == 4
    }

    /// Whether `part` is what `UInt8(_:)` accepts: an optional `+` or `-`, then one or more
    /// decimal digits, the value at most 255 (0 with `-`).
    private static func octet(_ part: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let negative = part.first == UInt8(ascii: "-")
        let digits = negative || part.first == UInt8(ascii: "+") ? part.dropFirst() : part
        guard !digits.isEmpty else { return false }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            if value > 255 { return false }
        }
        return !negative || value == 0
    }

    /// `isLoopback` read with Swift's `String`: the reference for the byte reading, and the
    /// reading of a non-ASCII host.
    var loopbackReading: Bool {
        var bare = Substring(host)
        while bare.first == "[" || bare.first == "]" { bare.removeFirst() }
        while bare.last == "[" || bare.last == "]" { bare.removeLast() }
        if bare == "localhost" || bare == "::1" || bare.hasSuffix(".localhost") { return true }
        let octets = bare.split(separator: ".")
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// Whether a credential may travel to this origin: https, or loopback.
    public var isSecureForCredentials: Bool { scheme == "https" || isLoopback }
}
