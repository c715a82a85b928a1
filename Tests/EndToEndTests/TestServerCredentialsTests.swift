import Foundation
import Testing

@testable import TestSupport

/// README's table of the credentials the test server accepts (issue 27, friction 13) is the
/// server's: its values are the server's own, and with exactly those settings each client's
/// example runs against it.
@Suite("the test server's credentials, as README lists them")
struct TestServerCredentialsTests {
    /// The `NAME=VALUE` settings of README's table, `$URL` standing for the server's address.
    static func documentedSettings() throws -> [String: String] {
        let readme = try String(
            contentsOf: ExampleReplayTests.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let header = "| client | base URL | credential the server accepts |"
        let table = try #require(readme.components(separatedBy: header).dropFirst().first, "README has the table")
        var settings: [String: String] = [:]
        for row in table.split(separator: "\n").dropFirst().prefix(while: { $0.hasPrefix("|") }) {
            for cell in row.split(separator: "`").enumerated().filter({ $0.offset % 2 == 1 }).map(\.element) {
                let parts = cell.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2, parts[0].hasPrefix("APIMACRO_") { settings[parts[0]] = parts[1] }
            }
        }
        return settings
    }

    @Test("README's values are the ones the server's routes check")
    func valuesAreTheServers() throws {
        let settings = try Self.documentedSettings()
        #expect(settings["APIMACRO_INSTAGRAM_TOKEN"] == InstagramEnvelope.issuedToken)
        #expect(settings["APIMACRO_SHORTENER_KEY"] == ShortenerRoutes.validKey)
        #expect(settings["APIMACRO_OPENWEATHER_KEY"] == PluginRoutes.openWeatherKey)
        #expect(settings["APIMACRO_FOURSQUARE_TOKEN"] == PluginRoutes.foursquareToken)
        #expect(settings.keys.filter { $0.hasSuffix("_URL") }.count == 6, "\(settings.keys.sorted())")
    }

    @Test("with README's settings, each client's example runs against the server")
    func examplesRun() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = try Self.documentedSettings().mapValues {
            $0.replacingOccurrences(of: "$URL", with: server.baseURL)
        }
        let examples = ExampleTests.examples
        for arguments in [
            [examples.appendingPathComponent("github-profile.py").path, "--login", "octocat"],
            [examples.appendingPathComponent("instagram-friends.py").path, "--limit", "3"],
            [examples.appendingPathComponent("shorten.py").path, "https://example.com/a"],
            ["openweather-now", "--city", "Altstadt"], ["foursquare-venues", "--near", "Brooklyn, NY"],
            ["hackernews-search", "--topic", "swift"],
        ] {
            let result = try await Binary.run(
                ["run", "--no-cache", "--format", "json"] + arguments, in: space.url, environment: environment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.hasPrefix("["), "\(arguments): \(result.stdout)")
        }
        try await server.shutdown()
    }
}
