/// One part of a `multipart/form-data` body.
struct MultipartPart {
    var name: String?
    var filename: String?
    var contentType: String?
    var body: [UInt8]
}

/// A small `multipart/form-data` parser (RFC 7578) for the echo route.
enum Multipart {
    /// The `boundary` parameter of a `multipart/form-data` content type.
    static func boundary(contentType: String) -> String? {
        let parameters = contentType.split(separator: ";").map { $0.trimmed(of: " \t") }
        guard parameters.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parameters.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                return pair[1].trimmed(of: "\"")
            }
        }
        return nil
    }

    /// The parts of `body`, or nil when it is not well-formed multipart with this boundary.
    static func parse(_ body: [UInt8], boundary: String) -> [MultipartPart]? {
        let delimiter = Array("\r\n--\(boundary)".utf8)
        let data = Array("\r\n".utf8) + body
        var positions: [Int] = []
        var searchFrom = 0
        while let found = find(delimiter, in: data, from: searchFrom) {
            positions.append(found)
            searchFrom = found + delimiter.count
        }
        guard positions.count >= 2 else { return nil }
        var parts: [MultipartPart] = []
        for (start, end) in zip(positions, positions.dropFirst()) {
            var cursor = start + delimiter.count
            // Skip transport padding and the CRLF after the delimiter.
            while cursor < end, data[cursor] == UInt8(ascii: " ") || data[cursor] == UInt8(ascii: "\t") {
                cursor += 1
            }
            guard cursor + 1 < end, data[cursor] == 0x0D, data[cursor + 1] == 0x0A else { return nil }
            cursor += 2
            guard let part = parsePart(Array(data[cursor..<end])) else { return nil }
            parts.append(part)
        }
        let closing = positions[positions.count - 1] + delimiter.count
        guard closing + 1 < data.count, data[closing] == UInt8(ascii: "-"), data[closing + 1] == UInt8(ascii: "-")
        else { return nil }
        return parts
    }

    private static func parsePart(_ bytes: [UInt8]) -> MultipartPart? {
        let separator = Array("\r\n\r\n".utf8)
        let headerEnd: Int
        let bodyStart: Int
        if bytes.starts(with: Array("\r\n".utf8)) {
            headerEnd = 0
            bodyStart = 2
        } else if let found = find(separator, in: bytes, from: 0) {
            headerEnd = found
            bodyStart = found + separator.count
        } else {
            return nil
        }
        var part = MultipartPart(body: Array(bytes[bodyStart...]))
        let headerText = String(decoding: bytes[0..<headerEnd], as: UTF8.self)
        for line in headerText.split(separator: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let value = pair[1].trimmed(of: " \t")
            switch pair[0].lowercased() {
            case "content-disposition":
                let parameters = dispositionParameters(value)
                part.name = parameters["name"]
                part.filename = parameters["filename"]
            case "content-type":
                part.contentType = value
            default:
                break
            }
        }
        return part
    }

    /// `name` and `filename` of `form-data; name="a"; filename="b.txt"` (quotes and `\"` handled).
    static func dispositionParameters(_ value: String) -> [String: String] {
        var result: [String: String] = [:]
        var characters = Substring(value)
        while let semicolon = characters.firstIndex(of: ";") {
            characters = characters[characters.index(after: semicolon)...]
            let trimmed = characters.drop { $0 == " " || $0 == "\t" }
            guard let equals = trimmed.firstIndex(of: "=") else { break }
            let name = trimmed[trimmed.startIndex..<equals].lowercased()
            var rest = trimmed[trimmed.index(after: equals)...]
            var parsed = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        parsed.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        parsed.append(character)
                    }
                }
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                parsed = rest[rest.startIndex..<end].trimmed(of: " \t")
                rest = rest[end...]
            }
            result[name] = parsed
            characters = rest
        }
        return result
    }

    /// The index of the first occurrence of `needle` in `haystack` at or after `start`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        let first = needle[0]
        var index = start
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first && haystack[index..<index + needle.count].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
