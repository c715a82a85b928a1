import Platform

/// Parses RFC 8288 `Link` headers, as GitHub sends for pagination:
/// `<https://…?page=2>; rel="next", <https://…?page=5>; rel="last"`.
public enum LinkHeader {
    /// Relation → URL for every link in the header (`rel="next prev"` gives both).
    public static func parse(_ header: String) -> [String: String] {
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
