import Foundation
import TestSupport
import Testing

/// The guide's "Write a plugin" section (docs/guide/plugins.md, README's until issue 37),
/// followed to the letter: its plugin.toml and macro are read from the page, put where it
/// says, and run.
@Suite("the guide: Write a plugin")
struct WritePluginTests {
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/guide/plugins.md")

    /// The fenced blocks of `language` in the section that starts with `heading`, indentation removed.
    static func blocks(_ language: String, in heading: String) throws -> [String] {
        let text = try String(contentsOf: page, encoding: .utf8)
        let start = try #require(text.range(of: "\n" + heading + "\n"))
        let section = text[start.upperBound...].components(separatedBy: "\n## ").first ?? ""
        var blocks: [String] = []
        var current: [Substring]?
        var indent = 0
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if current == nil, trimmed == "```" + language {
                current = []
                indent = line.count - trimmed.count
            } else if current != nil, trimmed == "```" {
                blocks.append(
                    (current ?? []).map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }.joined(
                        separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test("the guide's plugin.toml and macro, in $APIMACRO_HOME/plugins/chucknorris, run against the loopback server")
    func readmePlugin() async throws {
        let manifest = try #require(try Self.blocks("toml", in: "## Write a plugin").first)
        let macro = try #require(try Self.blocks("python", in: "## Write a plugin").first)
        #expect(
            try Self.blocks("sh", in: "## Write a plugin").first
                == "mkdir -p ~/.config/apimacro/plugins/chucknorris/macros\n")
        let server = try await TestServer.start()
        // Workspace sets HOME to its folder, so ~/.config/apimacro is $APIMACRO_HOME.
        let space = try Workspace(files: [
            ".config/apimacro/plugins/chucknorris/plugin.toml": manifest,
            ".config/apimacro/plugins/chucknorris/macros/chuck.py": macro,
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_CHUCKNORRIS_URL": server.baseURL + "/chucknorris"]
        let show = try await space.run("plugins", "show", "chucknorris", environment: environment)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("  search(query, limit=None)"))
        #expect(show.stdout.contains("  random(category=None, limit=None)"))
        let result = try await space.run("run", "--format", "json", "chuck", "--word", "code", environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]]
        #expect(
            rows?.map { $0["joke"] ?? "" } == [
                "Chuck Norris writes code that optimizes itself.", "Chuck Norris's code never needs a code review.",
            ])
        try space.write(
            "help.py",
            "import apimacro, pydoc\nprint(pydoc.render_doc(apimacro.client('chucknorris').search, renderer=pydoc.plaintext))\n"
        )
        let help = try await space.run("run", "help.py", environment: environment)
        #expect(help.stdout.contains("search(query, *, limit=None, cache=None)"), "\(help.stdout)\(help.stderr)")
        #expect(help.stdout.contains("Every joke that contains query."))
        #expect(help.stdout.contains("query: string, required, in the query"))
        try await server.shutdown()
    }
}
