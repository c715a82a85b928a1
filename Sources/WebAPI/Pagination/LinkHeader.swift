import Platform

/// Parses RFC 8288 `Link` headers, as GitHub sends for pagination:
/// `<https://…?page=2>; rel="next", <https://…?page=5>; rel="last"`.
public enum LinkHeader {
    /// Relation → URL for every link in the header (`rel="next prev"` gives both).
    public static func parse(_ header: String) -> [String: String] {
        var text = header
        return text.withUTF8 { parseASCII($0) } ?? parseText(header)
    }

    /// `parseText` over the bytes of an ASCII header (nil for any other).
    ///
    /// The same steps on bytes as `parseText` takes on characters: in ASCII each character is
    /// one byte but CR LF, which is none of the delimiters, and the whitespace trimmed is tab and
    /// space. A page iterator reads every page's header on the Python thread, where the
    /// character-by-character parse cost ~350 k instructions a header.
    static func parseASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> [String: String]? {
        for byte in bytes where byte >= 0x80 { return nil }
        var links: [String: String] = [:]
        var rest = bytes[...]
        while let open = rest.firstIndex(of: UInt8(ascii: "<")) {
            guard let close = rest[open...].firstIndex(of: UInt8(ascii: ">")) else { break }
            let url = String(decoding: trimmed(rest[(open + 1)..<close]) { isWhitespace($0) }, as: UTF8.self)
            var parameters = rest[(close + 1)...]
            var end = parameters.endIndex
            var inQuotes = false
            for index in parameters.indices {
                let byte = parameters[index]
                if byte == UInt8(ascii: "\"") { inQuotes.toggle() }
                if byte == UInt8(ascii: ","), !inQuotes {
                    end = index
                    break
                }
            }
            parameters = parameters[..<end]
            for parameter in parameters.split(separator: UInt8(ascii: ";")) {
                let pair = parameter.split(separator: UInt8(ascii: "="), maxSplits: 1)
                guard pair.count == 2,
                    String(decoding: trimmed(pair[0]) { isWhitespace($0) }, as: UTF8.self).lowercased() == "rel"
                else { continue }
                let value = trimmed(trimmed(pair[1]) { isWhitespace($0) }) { $0 == UInt8(ascii: "\"") }
                for relation in value.split(separator: UInt8(ascii: " ")) {
                    let name = String(decoding: relation, as: UTF8.self).lowercased()
                    if !url.isEmpty, links[name] == nil { links[name] = url }
                }
            }
            rest = end < rest.endIndex ? rest[(end + 1)...] : rest[rest.endIndex...]
        }
        return links
    }

    /// `trimmingWhitespace()`'s whitespace among ASCII bytes.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// `bytes` without the bytes at either end for which `drop` is true.
    private static func trimmed(
        _ bytes: Slice<UnsafeBufferPointer<UInt8>>, where drop: (UInt8) -> Bool
    ) -> Slice<UnsafeBufferPointer<UInt8>> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, drop(bytes[start]) { start += 1 }
        while end > start, drop(bytes[end - 1]) { end -= 1 }
        return bytes[start..<end]
    }

    /// Relation → URL, read character by character (any header; `parse` takes ASCII ones on
    /// their bytes).
    static func parseText(_ header: String) -> [String: String] {
        var links: [String: String] = [:]
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { break }
            // An empty target (`<>`) would mean "this page again": a pagination loop.
            let url = String(rest[rest.index(after: open)..<close]).trimmingWhitespace()
            var parameters = rest[rest.index(after: close)...]
            // The parameters run to the next link (a comma outside quotes).
            var end = parameters.endIndex
            var inQuotes = false
            for index in parameters.indices {
                let character = parameters[index]
                if character == "\"" { inQuotes.toggle() }
                if character == ",", !inQuotes {
                    end = index
                    break
                }
            }
            parameters = parameters[..<end]
            for parameter in parameters.split(separator: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingWhitespace().lowercased() == "rel" else {
                    continue
                }
                let value = pair[1].trimmingWhitespace().trimmingScalars { $0 == "\"" }
                for relation in value.split(separator: " ") where !url.isEmpty && links[relation.lowercased()] == nil {
                    links[relation.lowercased()] = url
                }
            }
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[rest.endIndex...]
        }
        return links
    }

    /// The `rel="next"` URL, if any.
    public static func next(_ header: String?) -> String? {
        header.flatMap { parse($0)["next"] }
    }
}
