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
    }

    static var all: [Cassette] {
        let text = (try? String(contentsOf: cassettes.appendingPathComponent("cassettes.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, let status = Int32(fields[1]) else { return nil }
            return Cassette(name: fields[0], status: status, example: fields[2], arguments: Array(fields.dropFirst(3)))
        }
    }

    @Test("every example has a cassette")
    func coverage() {
        #expect(Set(Self.all.map(\.example)) == Set(ExampleTests.offlineExamples))
    }

    @Test("each example replays from its cassette and prints what the recording printed", arguments: all)
    func replay(cassette: Cassette) async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Binary.run(
            ["run", "--format", "csv", "--replay", Self.cassettes.appendingPathComponent(cassette.name + ".har").path,
             ExampleTests.examples.appendingPathComponent(cassette.example).path] + cassette.arguments,
            in: space.url,
            // Clients need some credential to start a request; the cassette holds none, and needs none.
            environment: ["APIMACRO_INSTAGRAM_TOKEN": "replay-token-0000", "APIMACRO_SHORTENER_KEY": "replay-key-0000"])
        let expected = try String(contentsOf: Self.cassettes.appendingPathComponent(cassette.name + ".out"), encoding: .utf8)
        #expect(result.status == cassette.status, "\(result.stderr)")
        #expect(result.stdout == expected)
        #expect(!expected.isEmpty)
        #expect(!result.stderr.contains("OfflineError"), "\(result.stderr)")
    }

    @Test("the recorded outputs are the examples' real answers, against the real hosts")
    func contents() throws {
        func output(_ name: String) throws -> String {
            try String(contentsOf: Self.cassettes.appendingPathComponent(name + ".out"), encoding: .utf8)
        }
        #expect(try output("github-profile").hasPrefix("login,name,company,location,public_repos,followers,following,avatar_url\noctocat,The Octocat,"))
        #expect(try output("github-followers").split(separator: "\n").count == 121)
        #expect(try output("instagram-friends").split(separator: "\n").count == 31)
        for name in ["github-top-repos", "github-followers", "instagram-friends", "instagram-filters", "shorten"] {
            let har = try String(contentsOf: Self.cassettes.appendingPathComponent(name + ".har"), encoding: .utf8)
            #expect(!har.contains("127.0.0.1"), "\(name).har still points at the loopback server")
            #expect(!har.contains("ig-token-1") && !har.contains("ghp_cassette") && !har.contains("AIza-test-key"))
        }
    }
}
