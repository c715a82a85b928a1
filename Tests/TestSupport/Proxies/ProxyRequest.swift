import Foundation

/// One request head a proxy received.
public struct ProxyRequest: Sendable, Equatable {
    /// `CONNECT`, or another method the proxy refused.
    public let method: String
    /// `host:port` for `CONNECT`, the URL otherwise.
    public let target: String
    /// The header lines as received, names lower-cased.
    public let headers: [(name: String, value: String)]

    /// The first header of that name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }

    public static func == (lhs: ProxyRequest, rhs: ProxyRequest) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.headers.elementsEqual(rhs.headers) { $0 == $1 }
    }

    /// Parses the head (up to the blank line); nil when the request line is malformed.
    init?(head: String) {
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        guard requestLine.count == 3 else { return nil }
        method = String(requestLine[0])
        target = String(requestLine[1])
        headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }
}
