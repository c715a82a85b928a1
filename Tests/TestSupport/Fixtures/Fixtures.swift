import Foundation
import Synchronization

/// A fixture file that could not be read or parsed.
public struct FixtureError: Error, CustomStringConvertible {
    /// The path that was tried.
    public let path: String
    /// What went wrong.
    public let reason: String

    /// A one-line explanation.
    public var description: String { "fixture \(path): \(reason)" }
}

extension TestServer {
    /// The bytes of `../shared/fixtures/<relativePath>`, found next to the project checkout
    /// (located from this source file's path, so nothing absolute is baked into the project).
    public static func fixture(_ relativePath: String) throws -> [UInt8] {
        let path = fixturesDirectory + "/" + relativePath
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FixtureError(path: path, reason: "cannot be read")
        }
        return [UInt8](data)
    }

    /// `<project root>/../shared/fixtures`, where the root is four levels above this file
    /// (`<root>/Tests/TestSupport/Fixtures/Fixtures.swift`).
    static var fixturesDirectory: String {
        let components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        let checkoutParent = components.dropLast(5).joined(separator: "/")
        return checkoutParent + "/shared/fixtures"
    }
}

/// One recorded exchange of a nock-format fixture (octokit/fixtures).
struct RecordedExchange: Sendable {
    let method: String
    /// Path and query as recorded, e.g., `/repositories/1000/issues?per_page=3&page=2`.
    let path: String
    let status: Int
    let response: JSON
    /// Response headers, lower-cased names, in recorded order.
    let headers: [(String, String)]

    /// The recorded path without its query.
    var pathOnly: String { String(path.split(separator: "?", maxSplits: 1).first ?? "") }

    /// The recorded query parameters, decoded.
    var query: [String: String] {
        let parts = path.split(separator: "?", maxSplits: 1)
        return parts.count == 2 ? URLCoding.formDictionary(String(parts[1])) : [:]
    }
}

/// Parsed fixtures, read once per process.
enum FixtureStore {
    private static let exchangeCache = Mutex<[String: [RecordedExchange]]>([:])

    /// The exchanges of a nock-format fixture such as `github/octokit-get-repository.json`.
    static func exchanges(_ relativePath: String) throws -> [RecordedExchange] {
        if let cached = exchangeCache.withLock({ $0[relativePath] }) { return cached }
        let document = try JSON(parsing: try TestServer.fixture(relativePath))
        guard let items = document.arrayValue else {
            throw FixtureError(path: relativePath, reason: "is not an array of exchanges")
        }
        let exchanges = try items.map { item in
            guard let method = item["method"]?.stringValue, let path = item["path"]?.stringValue,
                case .number(let statusText) = item["status"], let status = Int(statusText),
                let response = item["response"]
            else {
                throw FixtureError(
                    path: relativePath, reason: "has an exchange without method, path, status or response")
            }
            var headers: [(String, String)] = []
            if case .object(let members) = item["headers"] {
                headers = members.compactMap { name, value in value.stringValue.map { (name.lowercased(), $0) } }
            }
            return RecordedExchange(
                method: method.uppercased(), path: path, status: status, response: response, headers: headers)
        }
        exchangeCache.withLock { $0[relativePath] = exchanges }
        return exchanges
    }

    /// The first exchange's response body of a fixture.
    static func firstResponse(_ relativePath: String) throws -> JSON {
        guard let first = try exchanges(relativePath).first else {
            throw FixtureError(path: relativePath, reason: "holds no exchange")
        }
        return first.response
    }
}
