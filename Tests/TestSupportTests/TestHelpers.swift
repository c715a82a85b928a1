import Foundation
import TestSupport

/// Runs `body` with a fresh server and always shuts it down.
func withServer(_ body: (TestServer) async throws -> Void) async throws {
    let server = try await TestServer.start()
    do {
        try await body(server)
    } catch {
        try? await server.shutdown()
        throw error
    }
    try await server.shutdown()
}

/// A `Link` header as rel → URL.
func parseLinks(_ header: String?) -> [String: String] {
    guard let header else { return [:] }
    var links: [String: String] = [:]
    for item in header.components(separatedBy: ", ") {
        let pieces = item.components(separatedBy: "; ")
        guard pieces.count == 2, pieces[0].hasPrefix("<"), pieces[0].hasSuffix(">"),
            pieces[1].hasPrefix("rel=\""), pieces[1].hasSuffix("\"")
        else { continue }
        let url = String(pieces[0].dropFirst().dropLast())
        let rel = String(pieces[1].dropFirst(5).dropLast())
        links[rel] = url
    }
    return links
}

/// The current time in epoch seconds.
func epochNow() -> Int { Int(Date().timeIntervalSince1970) }

/// The `response` of the first exchange of a nock fixture, parsed by Foundation.
func fixtureResponse(_ file: String) throws -> Any {
    let document = try JSONSerialization.jsonObject(with: Data(try TestServer.fixture(file)))
    guard let exchanges = document as? [[String: Any]], let first = exchanges.first, let response = first["response"]
    else { throw RawHTTPError.malformed("fixture \(file)") }
    return response
}
