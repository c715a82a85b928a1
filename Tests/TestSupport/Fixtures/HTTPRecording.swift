import Foundation

/// A raw HTTP response recorded as text (`../shared/fixtures/shortener/*.http`): the status
/// line, the header fields, a blank line, the body, byte for byte as the file holds them.
struct HTTPRecording: Sendable {
    let status: Int
    /// The recorded header fields, names as recorded.
    let headers: [(String, String)]
    /// The body as recorded.
    let body: [UInt8]

    /// Reads `../shared/fixtures/<relativePath>`.
    init(_ relativePath: String) throws {
        let bytes = try TestServer.fixture(relativePath)
        // The head ends at the first empty line (the recordings use LF or CRLF).
        var headEnd: Int?
        var bodyStart = bytes.count
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            let next = index + 1
            if next < bytes.count, bytes[next] == UInt8(ascii: "\n") {
                (headEnd, bodyStart) = (index, next + 1)
                break
            }
            if next + 1 < bytes.count, bytes[next] == UInt8(ascii: "\r"), bytes[next + 1] == UInt8(ascii: "\n") {
                (headEnd, bodyStart) = (index, next + 2)
                break
            }
        }
        guard let headEnd else { throw FixtureError(path: relativePath, reason: "has no blank line after its head") }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self).split(whereSeparator: \.isNewline)
        let statusLine = head.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let status = Int(statusLine[1]) else {
            throw FixtureError(path: relativePath, reason: "does not start with an HTTP status line")
        }
        self.status = status
        headers = head.dropFirst().compactMap { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces))
        }
        body = Array(bytes[bodyStart...])
    }

    /// The recorded header `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The recording as the test server's answer: its status, body and content type (the
    /// server adds its own framing headers).
    var response: Response {
        Response(
            status: status, headers: header("Content-Type").map { [("Content-Type", $0)] } ?? [], body: body)
    }
}
