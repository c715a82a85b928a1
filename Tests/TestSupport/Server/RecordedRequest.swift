public import Foundation

/// One request as the test server received it.
public struct RecordedRequest: Sendable {
    /// The method, upper case (`GET`, `POST`, …).
    public let method: String
    /// The request target as received: path and query, still percent-encoded.
    public let uri: String
    /// The path without the query, percent-decoded.
    public let path: String
    /// The query parameters, percent-decoded (`+` is a space); the last of repeated names wins.
    public let query: [String: String]
    /// The header fields in the order received, names as the client spelled them.
    public let headers: [(String, String)]
    /// The body bytes (empty when there was none).
    public let body: [UInt8]
    /// The `Host` header, if any.
    public let host: String?
    /// The address of the listener that received it: `"127.0.0.1"` or `"127.0.0.2"`.
    public let listener: String
    /// When the request was whole at the server (seconds since 1970): never before it was sent,
    /// so a pace shows as a lower bound on arrivals that load cannot break.
    public let arrived: Double = Date().timeIntervalSince1970

    /// The value of the header `name` (case-insensitive); repeated fields are joined with ", ".
    public func header(_ name: String) -> String? {
        let values = headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The body decoded as UTF-8 (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The path split at `/`, each segment percent-decoded (no empty segments).
    var segments: [String] {
        let raw = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return raw.split(separator: "/").map { URLCoding.percentDecode(String($0)) }
    }

    /// The raw query string (without `?`), or "" when absent.
    var rawQuery: String {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return parts.count == 2 ? String(parts[1]) : ""
    }
}
