import Foundation
import Testing

@testable import TestSupport

/// The guide's table of the credentials the test server accepts (issue 27, friction 13; in
/// docs/guide/offline-and-recording.md since issue 37) is the server's: its values are the server's own, and with exactly the settings of a row that
/// row's client runs an example against it.
@Suite("the test server's credentials, as the guide lists them")
struct TestServerCredentialsTests {
    /// One row of the guide's table: the client's cell and its `NAME=VALUE` settings, `$URL`
    /// standing for the server's address.
    struct Row {
        let client: String
        let settings: [String: String]
    }

    /// The guide's table, row by row.
    static func documentedRows() throws -> [Row] {
        let page = try String(
            contentsOf: ExampleReplayTests.repository.appendingPathComponent("docs/guide/offline-and-recording.md"),
            encoding: .utf8)
        let header = "| client | base URL | credential the server accepts |"
        let table = try #require(page.components(separatedBy: header).dropFirst().first, "the guide has the table")
        return table.split(separator: "\n").dropFirst().prefix(while: { $0.hasPrefix("|") }).map { row in
            var settings: [String: String] = [:]
            for cell in row.split(separator: "`").enumerated().filter({ $0.offset % 2 == 1 }).map(\.element) {
                let parts = cell.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2, parts[0].hasPrefix("APIMACRO_") { settings[parts[0]] = parts[1] }
            }
            let client = row.split(separator: "|").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            return Row(client: client, settings: settings)
        }
    }

    /// The settings of the row for `client`.
    static func settings(of client: String) throws -> [String: String] {
        try #require(try documentedRows().first { $0.client == client }, "the guide has a row for \(client)").settings
    }

    @Test("the guide's values are the ones the server's routes check")
    func valuesAreTheServers() throws {
        #expect(try Self.settings(of: "instagram")["APIMACRO_INSTAGRAM_TOKEN"] == InstagramEnvelope.issuedToken)
        #expect(
            try Self.settings(of: "instagram (legacy v1)")["APIMACRO_INSTAGRAM_TOKEN"] == InstagramEnvelope.issuedToken)
        #expect(try Self.settings(of: "shortener (Bitly)")["APIMACRO_SHORTENER_TOKEN"] == BitlyRoutes.validToken)
        #expect(try Self.settings(of: "shortener (Shlink)")["APIMACRO_SHORTENER_KEY"] == ShlinkRoutes.validKey)
        #expect(try Self.settings(of: "shortener (YOURLS)")["APIMACRO_SHORTENER_KEY"] == YOURLSRoutes.validSignature)
        #expect(
            try Self.settings(of: "shortener (legacy Google)")["APIMACRO_SHORTENER_KEY"] == ShortenerRoutes.validKey)
        #expect(try Self.settings(of: "openweather")["APIMACRO_OPENWEATHER_KEY"] == PluginRoutes.openWeatherKey)
        #expect(try Self.settings(of: "foursquare")["APIMACRO_FOURSQUARE_TOKEN"] == PluginRoutes.foursquareToken)
        let rows = try Self.documentedRows()
        #expect(rows.count == 10, "\(rows.map(\.client))")
        #expect(rows.allSatisfy { $0.settings.keys.contains { $0.hasSuffix("_URL") } }, "\(rows.map(\.settings))")
    }

    @Test("with a row's settings, its client's example runs against the server")
    func examplesRun() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let examples = ExampleTests.examples
        let shorten =
            "import apimacro\nfrom apimacro import shortener\n"
            + "apimacro.output([shortener.shorten('https://example.com/a')])"
        let runs: [String: [String]] = [
            "github": [examples.appendingPathComponent("github-profile.py").path, "--login", "octocat"],
            "instagram": [examples.appendingPathComponent("instagram-top-posts.py").path, "--top", "3"],
            "instagram (legacy v1)": [examples.appendingPathComponent("instagram-friends.py").path, "--limit", "3"],
            "shortener (Bitly)": [examples.appendingPathComponent("shorten-file.py").path],
            "shortener (Shlink)": ["-c", shorten],
            "shortener (YOURLS)": ["-c", shorten],
            "shortener (legacy Google)": [examples.appendingPathComponent("shorten.py").path, "https://example.com/a"],
            "openweather": ["openweather-now", "--city", "Altstadt"],
            "foursquare": ["foursquare-venues", "--near", "Brooklyn, NY"],
            "hackernews": ["hackernews-search", "--topic", "swift"],
        ]
        let rows = try Self.documentedRows()
        #expect(Set(rows.map(\.client)) == Set(runs.keys))
        for row in rows {
            let arguments = try #require(runs[row.client], "no example for \(row.client)")
            let environment = row.settings.mapValues { $0.replacingOccurrences(of: "$URL", with: server.baseURL) }
            let result = try await Binary.run(
                ["run", "--no-cache", "--format", "json"] + arguments, in: space.url, environment: environment)
            #expect(result.status == 0, "\(row.client): \(result.stderr)")
            #expect(result.stdout.hasPrefix("["), "\(row.client): \(result.stdout)")
        }
        try await server.shutdown()
    }
}
