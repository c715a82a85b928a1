/// The resource a request counts against, as the rate-limit rules name it: the first segment
/// of its URL's path, and the resource a server's `x-ratelimit-resource` header names.
///
/// Used by the governor (`GovernorStage`) and the local memory of limits (`RateLimitMemory`).
enum ResourceRoute {
    /// The first segment of the URL's path: requests under it count against one resource
    /// (GitHub: `/search/...` against `search`, `/graphql` against `graphql`, most against `core`).
    static func segment(of url: String) -> String {
        var url = url
        return url.withUTF8 { bytes in
            // The path starts at the first "/" after "scheme://" and the segment ends at "/", "?" or "#".
            var index = 0
            while index + 2 < bytes.count,
                !(bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/")
                    && bytes[index + 2] == UInt8(ascii: "/"))
            {
                index += 1
            }
            guard index + 2 < bytes.count else { return "" }
            index += 3
            while index < bytes.count, bytes[index] != UInt8(ascii: "/"), bytes[index] != UInt8(ascii: "?"),
                bytes[index] != UInt8(ascii: "#")
            {
                index += 1
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "/") else { return "" }
            var segment: [UInt8] = []
            index += 1
            while index < bytes.count, segment.count < 64 {
                let byte = bytes[index]
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
                if isPlain(byte) { segment.append(byte) }
                index += 1
            }
            return String(decoding: segment, as: UTF8.self)
        }
    }

    /// A letter or digit of ASCII, `-`, `_` or `.`.
    private static func isPlain(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    /// A resource name from a server, kept short and plain (it becomes part of a hash field).
    static func resourceName(_ header: String?) -> String {
        guard let header else { return "" }
        if header.utf8.allSatisfy({ $0 < 0x80 && $0 != 13 }) {
            // ASCII without CR (every real header; CR LF would be one Character): the same
            // filter on the bytes, no Unicode properties.
            return String(decoding: header.utf8.prefix(64).filter(isPlain), as: UTF8.self)
        }
        return String(header.prefix(64).filter { $0.isLetter || $0.isNumber || "-_.".contains($0) })
    }
}
