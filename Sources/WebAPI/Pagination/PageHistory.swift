import Platform

/// The pages one iteration over a list has asked for, so that pages linking back to one
/// already fetched end the iteration instead of looping: a `Link: rel="next"` naming the page
/// itself (then served from the cache, a loop that never waits for the network), two pages
/// naming each other, a `next_url` pointing back, GraphQL cursors A, B, A.
///
/// A pure value, one per iteration. It keeps a 64-bit digest of each page (Swift's `Hasher`:
/// SipHash under the process's random seed), never the URL: 100,000 pages cost about 2 MB
/// whatever their URLs' length. Two different pages with the same digest would end an
/// iteration early; for n pages the chance is about n² / 2⁶⁵ (3 × 10⁻¹⁰ for 100,000), and a
/// server cannot aim for it without the seed.
///
/// URLs are compared in the normal form of `normalized(_:)`, so the same request written
/// another way (a fragment added, the query reordered, `/./` in the path) is the same page.
/// A server that names a really new URL each time (an ever-growing query) is not a loop but an
/// endless list: every page is a request the server answers, and `limit` bounds it.
public struct PageHistory: Sendable {
    private var seen: Set<Int> = []
    /// The hash of the last page's body, for the kinds whose URLs change whether or not the API
    /// pages (`offset`, `page_param`): see `answered`.
    private var lastBody: Int?

    public init() {}

    /// How many distinct pages this iteration has asked for.
    public var count: Int { seen.count }

    /// Remembers the page at `url`; false when this iteration has asked for it before.
    ///
    /// `credential` names the query parameter the pipeline puts the client's credential in
    /// (Instagram's `access_token`), which does not tell pages apart: a server's `next_url`
    /// carries it while the first request, before the pipeline adds it, does not.
    public mutating func insert(url: String, ignoring credential: String? = nil) -> Bool {
        insert(tag: 0, Self.normalized(url, ignoring: credential))
    }

    /// Remembers the page a cursor asks for (GraphQL's `endCursor`, sent back as `after:`);
    /// false when this iteration has sent it before.
    public mutating func insert(cursor: String) -> Bool {
        insert(tag: 1, cursor)
    }

    /// About the memory this history holds: its table of 8-byte digests, of which `Set` keeps
    /// a quarter of the slots free.
    public var storedBytes: Int { seen.capacity * MemoryLayout<Int>.stride * 4 / 3 }

    private mutating func insert(tag: UInt8, _ text: String) -> Bool {
        seen.insert(Self.digest(tag: tag, text)).inserted
    }

    private static func digest(tag: UInt8, _ text: String) -> Int {
        var hasher = Hasher()
        hasher.combine(tag)
        // The bytes as sent: `String`'s own hashing would equate canonically equivalent text
        // (é composed or not), which the wire does not.
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        return hasher.finalize()
    }

    /// `url` in a normal form in which two spellings of one request are equal: the fragment
    /// (never sent) dropped; scheme and host in lower case; the default port (80, 443) dropped;
    /// an empty path as `/`; dot segments (`.`, `..`) removed, as libcurl does before sending;
    /// a percent-encoded unreserved character decoded and other escapes' hex digits in upper
    /// case; the query's `&`-separated parameters sorted, a repeated one (`a=1&a=1`), an empty
    /// one (`&&`, a bare `?`) and any named `ignoring` dropped.
    ///
    /// Only for comparing pages: URLs differing in more than these answer differently. The
    /// order of parameters (`?a=1&b=2`, `?b=2&a=1`) and a parameter given twice with one value
    /// could matter to some server, but never tell a list's next page from an earlier one. Text
    /// that is no absolute URL keeps its path as it is, with only the escapes normalised.
    public static func normalized(_ url: String, ignoring parameter: String? = nil) -> String {
        var url = url
        if let fast = url.withUTF8({ ASCIIURL.normalized($0, ignoring: parameter) }) { return fast }
        return normalizedText(url, ignoring: parameter)
    }

    /// `normalized` on `String`'s characters: for a URL or a parameter with bytes past ASCII
    /// (`ASCIIURL` does the rest on bytes, with the same answer).
    static func normalizedText(_ url: String, ignoring parameter: String? = nil) -> String {
        var text = Substring(url)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        var query: Substring?
        if let mark = text.firstIndex(of: "?") {
            query = text[text.index(after: mark)...]
            text = text[..<mark]
        }
        var result = ""
        var path = text
        if let separator = text.firstRange(of: "://"), isScheme(text[..<separator.lowerBound]) {
            let scheme = text[..<separator.lowerBound].lowercased()
            let rest = text[separator.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            result = scheme + "://" + authority(rest[..<slash], scheme: scheme)
            path = rest[slash...]
            if path.isEmpty { path = "/" }
        }
        result += removingDotSegments(unescaped(path))
        if let query {
            var parameters = Set(query.split(separator: "&").map(unescaped))
            if let parameter {
                parameters = parameters.filter { $0 != parameter && !$0.hasPrefix(parameter + "=") }
            }
            if !parameters.isEmpty { result += "?" + parameters.sorted().joined(separator: "&") }
        }
        return result
    }

    /// Whether `text` is an RFC 3986 scheme (a letter, then letters, digits, `+`, `-`, `.`).
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isLetter(first) else { return false }
        return text.utf8.allSatisfy {
            isLetter($0) || $0 &- UInt8(ascii: "0") < 10 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                || $0 == UInt8(ascii: ".")
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- UInt8(ascii: "a") < 26 }

    /// `user@HOST:port` with the host in lower case and the scheme's default port dropped.
    private static func authority(_ text: Substring, scheme: String) -> String {
        let at = text.lastIndex(of: "@")
        let user = at.map { String(text[...$0]) } ?? ""
        var host = at.map { text[text.index(after: $0)...] } ?? text
        // A port follows the last colon, unless that colon is inside an IPv6 literal's brackets.
        if let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") {
            let port = host[host.index(after: colon)...]
            if port.isEmpty || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
                host = host[..<colon]
            }
        }
        return user + host.lowercased()
    }

    /// `text` with each `%XX` of an unreserved character decoded and other escapes' hex in upper case.
    private static func unescaped(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: ASCIIURL.unescaped(buffer[...]), as: UTF8.self)
        }
    }

    /// RFC 3986's remove_dot_segments (5.2.4): `/a/./b/../c` is `/a/c`.
    private static func removingDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        // An absolute path keeps its leading empty segment (the first `/`).
        let floor = path.hasPrefix("/") ? 1 : 0
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.count > floor { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return output.joined(separator: "/")
    }
}

extension PageHistory {
    /// "1 page so far", "3 pages so far".
    private var pagesSoFar: String { count == 1 ? "1 page so far" : "\(count) pages so far" }

    /// Remembers the page `request` asks for on `client`.
    ///
    /// - Throws: a `.parse` `APIError` (Python: `ParseError`) naming the URL, redacted, when this
    ///   iteration has asked for that page before; an invalid target's `.invalidRequest`.
    public mutating func visit(_ request: Request, on client: APIClient) throws {
        let url = try client.url(of: request)
        var credential: String?
        if case .query(let name, _) = client.credential { credential = name }
        guard insert(url: url, ignoring: credential) else {
            let shown = client.redactor.redactURL(url)
            throw APIError(
                .parse,
                "the next page, \(shown), was already fetched in this iteration (\(pagesSoFar)): "
                    + "the pagination goes round in a loop, so the list stops here",
                url: shown, api: client.configuration.name)
        }
    }

    /// Forgets that `request` was asked for on `client` (its fetch ahead was given up before the
    /// page before it could be used, which will be asked for again, and lead to it again).
    public mutating func forget(_ request: Request, on client: APIClient) {
        guard let url = try? client.url(of: request) else { return }
        var credential: String?
        if case .query(let name, _) = client.credential { credential = name }
        seen.remove(Self.digest(tag: 0, Self.normalized(url, ignoring: credential)))
    }

    /// Remembers the page `cursor` asks for; `source` says where the cursor came from
    /// (`repository.issues.pageInfo.endCursor`).
    ///
    /// - Throws: a `.parse` `APIError` naming the cursor (redacted, control characters escaped,
    ///   at most 100 characters) when this iteration has sent it before.
    public mutating func visit(cursor: String, from source: String, on client: APIClient) throws {
        guard insert(cursor: cursor) else {
            var shown = client.redactor.redact(cursor)
            if shown.count > 100 { shown = shown.prefix(100) + "..." }
            throw APIError(
                .parse,
                "\(source) \(shown.debugDescription) was already sent in this iteration (\(pagesSoFar)): "
                    + "the pagination goes round in a loop, so the list stops here",
                api: client.configuration.name)
        }
    }

    /// Notes the body of a page that `pagination` asked for; for an offset or a page number,
    /// a body exactly the same as the page before it means the API does not page the list
    /// that way (it ignores the parameter): a `.parse` `APIError` rather than asking for ever.
    public mutating func answered(_ response: Response, pagination: Pagination, on client: APIClient) throws {
        switch pagination {
        case .offset, .pageParameter: break
        default: return
        }
        var hasher = Hasher()
        hasher.combine(response.body)
        let hash = hasher.finalize()
        defer { lastBody = hash }
        guard hash == lastBody, !response.body.isEmpty else { return }
        let shown = client.redactor.redactURL(response.url)
        throw APIError(
            .parse,
            "the page \(shown) answered exactly what the page before it did (\(pagesSoFar)): the API does not "
                + "seem to page this list, so the list stops here; pass limit=N to read fewer items",
            url: shown, api: client.configuration.name)
    }
}

/// `PageHistory.normalized` on the bytes of an ASCII URL.
///
/// Every page of an iteration passes there, and on `String`'s characters it cost ~90 k
/// instructions a URL (grapheme breaking at each `firstIndex`, a `String` per piece). For ASCII text characters are bytes (the one
/// grapheme of two, CR LF, contains no separator), `lowercased` is ASCII's, and `String`
/// comparison is the bytes' order: the answer is the same string (`PageHistoryTests` compares
/// both on generated URLs).
enum ASCIIURL {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// The normal form of `url`; nil when it or `parameter` has a byte past ASCII.
    static func normalized(_ url: Bytes, ignoring parameter: String?) -> String? {
        for byte in url where byte >= 0x80 { return nil }
        var ignored: [UInt8]?
        if let parameter {
            ignored = Array(parameter.utf8)
            if ignored?.contains(where: { $0 >= 0x80 }) == true { return nil }
        }
        let end = url.firstIndex(of: UInt8(ascii: "#")) ?? url.count
        let mark = url[..<end].firstIndex(of: UInt8(ascii: "?"))
        let textEnd = mark ?? end
        var result: [UInt8] = []
        result.reserveCapacity(url.count + 8)
        var pathStart = 0
        var emptyPathIsRoot = false
        if let separator = schemeSeparator(url, before: textEnd), isScheme(url[..<separator]) {
            let scheme = url[..<separator].map(lowercased)
            result += scheme
            result += Array("://".utf8)
            let rest = separator + 3
            let slash = url[rest..<textEnd].firstIndex(of: UInt8(ascii: "/")) ?? textEnd
            authority(url[rest..<slash], scheme: scheme, into: &result)
            pathStart = slash
            emptyPathIsRoot = true
        }
        var path = unescaped(url[pathStart..<textEnd])
        if path.isEmpty, emptyPathIsRoot { path = [UInt8(ascii: "/")] }
        result += removingDotSegments(path)
        if let mark {
            var parameters = Set(url[(mark + 1)..<end].split(separator: UInt8(ascii: "&")).map(unescaped))
            if let ignored {
                parameters = parameters.filter {
                    $0 != ignored
                        && !($0.count > ignored.count && $0.starts(with: ignored)
                            && $0[ignored.count] == UInt8(ascii: "="))
                }
            }
            if !parameters.isEmpty {
                result.append(UInt8(ascii: "?"))
                for (index, parameter) in parameters.sorted(by: { $0.lexicographicallyPrecedes($1) }).enumerated() {
                    if index > 0 { result.append(UInt8(ascii: "&")) }
                    result += parameter
                }
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Where the first `://` before `limit` starts.
    static func schemeSeparator(_ url: Bytes, before limit: Int) -> Int? {
        guard limit >= 3 else { return nil }
        for index in 0...(limit - 3)
        where url[index] == UInt8(ascii: ":") && url[index + 1] == UInt8(ascii: "/")
            && url[index + 2] == UInt8(ascii: "/")
        {
            return index
        }
        return nil
    }

    static func isScheme(_ text: Slice<Bytes>) -> Bool {
        guard let first = text.first, isLetter(first) else { return false }
        return text.allSatisfy {
            isLetter($0) || $0 &- UInt8(ascii: "0") < 10 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                || $0 == UInt8(ascii: ".")
        }
    }

    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- UInt8(ascii: "a") < 26 }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// `user@HOST:port` with the host in lower case and the scheme's default port dropped.
    static func authority(_ text: Slice<Bytes>, scheme: [UInt8], into result: inout [UInt8]) {
        var host = text
        if let at = text.lastIndex(of: UInt8(ascii: "@")) {
            result += text[...at]
            host = text[(at + 1)...]
        }
        if let colon = host.lastIndex(of: UInt8(ascii: ":")), !host[colon...].contains(UInt8(ascii: "]")) {
            let port = host[(colon + 1)...]
            if port.isEmpty || (scheme == Array("http".utf8) && port.elementsEqual("80".utf8))
                || (scheme == Array("https".utf8) && port.elementsEqual("443".utf8))
            {
                host = host[..<colon]
            }
        }
        result += host.map(lowercased)
    }

    /// `text` with each `%XX` of an unreserved character decoded and other escapes' hex in upper case.
    static func unescaped(_ text: Slice<Bytes>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: "%"), index + 2 < text.endIndex, let high = TextScalars.hexValue(text[index + 1]),
                let low = TextScalars.hexValue(text[index + 2])
            {
                let decoded = high << 4 | low
                if FormEncoding.isUnreserved(decoded) {
                    out.append(decoded)
                } else {
                    out += [byte, hexDigit(high), hexDigit(low)]
                }
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    /// RFC 3986's remove_dot_segments (5.2.4): `/a/./b/../c` is `/a/c`.
    static func removingDotSegments(_ path: [UInt8]) -> [UInt8] {
        guard path.contains(UInt8(ascii: ".")) else { return path }
        let floor = path.first == UInt8(ascii: "/") ? 1 : 0
        var output: [ArraySlice<UInt8>] = []
        let segments = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            if segment.elementsEqual(CollectionOfOne(UInt8(ascii: "."))) {
                if isLast { output.append([]) }
            } else if segment.elementsEqual("..".utf8) {
                if output.count > floor { output.removeLast() }
                if isLast { output.append([]) }
            } else {
                output.append(segment)
            }
        }
        return Array(output.joined(separator: [UInt8(ascii: "/")]))
    }
}
