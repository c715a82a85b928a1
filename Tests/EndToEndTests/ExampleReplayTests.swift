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
        /// The `APIMACRO_*=VALUE` fields among the arguments: settings of both the recording and
        /// the replay (the legacy Google example's `APIMACRO_SHORTENER=google`), not arguments.
        let environment: [String: String]
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
            in: space.url, environment: environment.merging(cassette.environment) { $1 })
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

    /// Whether a cassettes.tsv field is a setting (`APIMACRO_NAME=VALUE`) rather than an argument.
    static func isSetting(_ field: String) -> Bool {
        field.range(of: #"^APIMACRO_[A-Z0-9_]+="#, options: .regularExpression) != nil
    }

    static var all: [Cassette] {
        let text = (try? String(contentsOf: cassettes.appendingPathComponent("cassettes.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, let status = Int32(fields[1]) else { return nil }
            let rest = fields.dropFirst(3)
            let settings = rest.filter(Self.isSetting).map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
            return Cassette(
                name: fields[0], status: status, example: fields[2], arguments: rest.filter { !Self.isSetting($0) },
                environment: Dictionary(settings.map { ($0[0], $0[1]) }) { $1 })
        }
    }

    @Test("every example, and every shipped plugin's example, has a cassette")
    func coverage() {
        #expect(Set(Self.all.map(\.example)) == Set(ExampleTests.offlineExamples + Self.pluginExamples))
        #expect(Self.pluginExamples.count >= 3)
    }

    @Test(
        "each example replays from its cassette with no credential set and prints what the recording printed",
        arguments: all)
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
