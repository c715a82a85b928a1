import Foundation
import Testing

/// Every example macro replayed from its cassette (examples/cassettes/, recorded
/// by scripts/record-cassettes): no server, no network, no real credentials.
@Suite("examples replayed from their cassettes")
struct ExampleReplayTests {
    static let cassettes = ExampleTests.examples.appendingPathComponent("cassettes")

    /// One line of cassettes.tsv.
    struct Cassette: Sendable, CustomStringConvertible {
        let name: String
        let status: Int32
        let example: String
        let arguments: [String]
        var description: String { name }

        /// A name or example with a `/` is a path from the repository's root (a plugin's own
        /// cassette and macro); a bare one lives in examples/ and examples/cassettes/.
        var cassette: URL {
            name.contains("/")
                ? ExampleReplayTests.repository.appendingPathComponent(name)
                : ExampleReplayTests.cassettes.appendingPathComponent(name)
        }
        /// What the recorded run printed (NAME.out beside the cassette).
        func expectedOutput() throws -> String {
            try String(contentsOf: URL(fileURLWithPath: cassette.path + ".out"), encoding: .utf8)
        }

        var macro: URL {
            example.contains("/")
                ? ExampleReplayTests.repository.appendingPathComponent(example)
                : ExampleTests.examples.appendingPathComponent(example)
        }
    }

    static let repository = ExampleTests.examples.deletingLastPathComponent()

    /// Runs the cassette's macro with `--replay` of its recording (csv output, no server).
    static func replay(_ cassette: Cassette, in space: Workspace, environment: [String: String]) async throws
        -> RunResult
    {
        try await Binary.run(
            ["run", "--format", "csv", "--replay", cassette.cassette.path + ".har", cassette.macro.path]
                + cassette.arguments,
            in: space.url, environment: environment)
    }

    /// The shipped plugins' example macros, as paths from the repository's root.
    static var pluginExamples: [String] {
        let plugins = repository.appendingPathComponent("plugins")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: plugins.path)) ?? []
        return names.flatMap { plugin in
            let macros = plugins.appendingPathComponent(plugin).appendingPathComponent("macros")
            let files = (try? FileManager.default.contentsOfDirectory(atPath: macros.path)) ?? []
            return files.filter { $0.hasSuffix(".py") }.map { "plugins/\(plugin)/macros/\($0)" }
        }
    }

    static var all: [Cassette] {
        let text = (try? String(contentsOf: cassettes.appendingPathComponent("cassettes.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, let status = Int32(fields[1]) else { return nil }
            return Cassette(name: fields[0], status: status, example: fields[2], arguments: Array(fields.dropFirst(3)))
        }
    }

    @Test("every example, and every shipped plugin's example, has a cassette")
    func coverage() {
        #expect(Set(Self.all.map(\.example)) == Set(ExampleTests.offlineExamples + Self.pluginExamples))
        #expect(Self.pluginExamples.count >= 3)
    }

    @Test("each example replays from its cassette and prints what the recording printed", arguments: all)
    func replay(cassette: Cassette) async throws {
        let space = try Workspace()
        defer { space.remove() }
        // The examples that check for a login (instagram) need a token set; the cassette holds none.
        let result = try await Self.replay(
            cassette, in: space,
            environment: [
                "APIMACRO_INSTAGRAM_TOKEN": "replay-token-0000", "APIMACRO_SHORTENER_KEY": "replay-key-0000",
                "APIMACRO_OPENWEATHER_KEY": "replay-key-0000", "APIMACRO_FOURSQUARE_TOKEN": "replay-token-0000",
            ])
        let expected = try cassette.expectedOutput()
        #expect(result.status == cassette.status, "\(result.stderr)")
        #expect(result.stdout == expected)
        #expect(!expected.isEmpty)
        #expect(!result.stderr.contains("OfflineError"), "\(result.stderr)")
    }

    @Test("a replay needs no credential: the recording holds none (plugin key, shortener key)")
    func replayWithoutCredentials() async throws {
        let space = try Workspace()
        defer { space.remove() }
        for cassette in Self.all
        where ["openweather-now", "shorten"].contains(cassette.macro.deletingPathExtension().lastPathComponent) {
            let result = try await Self.replay(cassette, in: space, environment: [:])
            let expected = try cassette.expectedOutput()
            #expect(result.status == cassette.status, "\(result.stderr)")
            #expect(result.stdout == expected)
            #expect(!result.stderr.contains("AuthError"), "\(result.stderr)")
        }
    }

    @Test("the recorded outputs are the examples' real answers, against the real hosts")
    func contents() throws {
        func output(_ name: String) throws -> String {
            try String(contentsOf: Self.cassettes.appendingPathComponent(name + ".out"), encoding: .utf8)
        }
        #expect(
            try output("github-profile").hasPrefix(
                "login,name,company,location,public_repos,followers,following,avatar_url\noctocat,The Octocat,"))
        #expect(try output("github-followers").split(separator: "\n").count == 121)
        #expect(try output("instagram-friends").split(separator: "\n").count == 31)
        // 1,200 search results, more than one query gives: each once, from the slices of a split.
        let search = try output("github-search-all").split(separator: "\n").dropFirst()
        #expect(search.count == 1200 && Set(search.map { $0.split(separator: ",").first }).count == 1200)
        #expect(try output("github-app-issues").split(separator: "\n").count == 4)
        for cassette in Self.all {
            let har = try String(contentsOf: URL(fileURLWithPath: cassette.cassette.path + ".har"), encoding: .utf8)
            #expect(!har.contains("127.0.0.1"), "\(cassette.name).har still points at the loopback server")
            for secret in ["ig-token-1", "ghp_cassette", "AIza-test-key", "ow-test-key", "fsq-token-1"] {
                #expect(!har.contains(secret), "\(cassette.name).har holds a recording credential")
            }
        }
    }
}
