import Foundation
import TestSupport
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

        /// The settings its example runs with (NAME.env beside the cassette: `VAR=value` lines, URLs
        /// naming the real hosts, such as a legacy backend's base URL); empty when there is none.
        var environment: [String: String] {
            let text = (try? String(contentsOf: URL(fileURLWithPath: cassette.path + ".env"), encoding: .utf8)) ?? ""
            var variables: [String: String] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let pair = line.split(separator: "=", maxSplits: 1).map(String.init)
                if pair.count == 2 { variables[pair[0]] = pair[1] }
            }
            return variables
        }

        var macro: URL {
            example.contains("/")
                ? ExampleReplayTests.repository.appendingPathComponent(example)
                : ExampleTests.examples.appendingPathComponent(example)
        }
    }

    static let repository = ExampleTests.examples.deletingLastPathComponent()

    /// Runs the cassette's macro with `--replay` of its recording (csv output, no server), with
    /// the settings of its NAME.env over `environment`.
    static func replay(_ cassette: Cassette, in space: Workspace, environment: [String: String]) async throws
        -> RunResult
    {
        try await Binary.run(
            ["run", "--format", "csv", "--replay", cassette.cassette.path + ".har", cassette.macro.path]
                + cassette.arguments,
            in: space.url, environment: environment.merging(cassette.environment) { $1 })
    }

    /// The real hosts of the cassettes' URLs and where the test server serves them, longest
    /// first (scripts/record-cassettes rewrites its recordings with the same table).
    static let hosts = [
        ("https://api.instagram.com/v1", "/instagram/v1"), ("https://graph.instagram.com", "/instagram/graph"),
        ("https://www.googleapis.com/urlshortener/v1", "/urlshortener/v1"),
        ("https://api-ssl.bitly.com/v4", "/bitly/v4"),
        ("https://api.github.com", ""),
    ]

    /// The settings the example `example` (a file name in examples/) runs with against `server`:
    /// its cassette's NAME.env, the real hosts turned into the server's.
    static func liveEnvironment(of example: String, server: TestServer) -> [String: String] {
        guard let cassette = all.first(where: { $0.example == example }) else { return [:] }
        return cassette.environment.mapValues { value in
            for (real, path) in hosts where value.hasPrefix(real) {
                return server.baseURL + path + value.dropFirst(real.count)
            }
            return value
        }
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
        // No token or key: the recordings hold none, and a replay needs none (instagram-friends
        // included, issue 27).
        let result = try await Self.replay(cassette, in: space, environment: [:])
        let expected = try cassette.expectedOutput()
        #expect(result.status == cassette.status, "\(result.stderr)")
        #expect(result.stdout == expected, "\(result.stderr)")
        #expect(!expected.isEmpty)
        #expect(!result.stderr.contains("OfflineError"), "\(result.stderr)")
        #expect(!result.stderr.contains("AuthError") && !result.stderr.contains("log in"), "\(result.stderr)")
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
        // Five distinct links in examples/shorten-file.txt, each shortened once on Bitly.
        let shortened = try output("shorten-file").split(separator: "\n")
        #expect(shortened.first == "old,new" && shortened.count == 6)
        #expect(shortened.dropFirst().allSatisfy { $0.hasPrefix("https://") && $0.contains(",https://bit.ly/") })
        let bitly = try String(contentsOf: Self.cassettes.appendingPathComponent("shorten-file.har"), encoding: .utf8)
        #expect(bitly.contains("https://api-ssl.bitly.com/v4/shorten"))
        // 1,200 search results, more than one query gives: each once, from the slices of a split.
        let search = try output("github-search-all").split(separator: "\n").dropFirst()
        #expect(search.count == 1200 && Set(search.map { $0.split(separator: ",").first }).count == 1200)
        #expect(try output("github-app-issues").split(separator: "\n").count == 4)
        for cassette in Self.all {
            let har = try String(contentsOf: URL(fileURLWithPath: cassette.cassette.path + ".har"), encoding: .utf8)
            #expect(!har.contains("127.0.0.1"), "\(cassette.name).har still points at the loopback server")
            for secret in [
                "ig-token-1", "ghp_cassette", "AIza-test-key", "ow-test-key", "fsq-token-1", "bitly-test-token",
            ] {
                #expect(!har.contains(secret), "\(cassette.name).har holds a recording credential")
            }
        }
    }
}
