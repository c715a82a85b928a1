import Foundation
import Testing

/// The settings where an installed user looks (issue 36): `apimacro help environment` and the
/// man page's ENVIRONMENT, FILES and EXAMPLES, made from the table the settings code reads.
@Suite("apimacro help environment and the man page's sections")
struct SettingsDocsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Variables the sources name that are no user's setting: `[shared]`'s keys as config.toml
    /// hands them over (their user-facing names are listed), and the test server's.
    static let internalVariables: Set<String> = [
        "APIMACRO_SHARED_REDIS", "APIMACRO_SHARED_TIMEOUT", "APIMACRO_TESTSERVER_PID",
    ]

    /// Every `"APIMACRO_…"` string literal in `Sources/`.
    static func variablesInSources() throws -> Set<String> {
        var found: Set<String> = []
        let sources = repository.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /"(APIMACRO_[A-Z_]+)"/) { found.insert(String(match.output.1)) }
        }
        return found.subtracting(internalVariables)
    }

    @Test("help environment names every APIMACRO_ variable the sources read, with its key and default")
    func everyVariableListed() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run("help", "environment")
        #expect(result.status == 0, "\(result.stderr)")
        let listed = Set(result.stdout.split(separator: "\n").filter { $0.hasPrefix("APIMACRO_") }.map(String.init))
        let read = try Self.variablesInSources()
        #expect(read.subtracting(listed).isEmpty, "not listed: \(read.subtracting(listed).sorted())")
        // The clients' own, from their descriptors, are there too.
        for variable in [
            "APIMACRO_GITHUB_TOKEN", "APIMACRO_GITHUB_PACE", "APIMACRO_INSTAGRAM_CLIENT_SECRET",
            "APIMACRO_SHORTENER_GROUP",
        ] {
            #expect(listed.contains(variable), "\(variable)")
        }
        #expect(
            result.stdout.contains(
                "APIMACRO_MAX_WAIT\n    the longest rate-limit wait, seconds\n"
                    + "    config.toml: max_wait; default: 60\n"), "\(result.stdout)")
        #expect(result.stdout.contains("config.toml: [github] url; default: https://api.github.com"))
        // Every entry says what it sets.
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() where line.hasPrefix("APIMACRO_") {
            #expect(index + 1 < lines.count && lines[index + 1].count > 8, "\(line) has no summary")
        }
    }

    @Test("the man page's ENVIRONMENT, FILES and EXAMPLES render with groff, without warnings")
    func manualSectionsRender() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let sections = try await space.run("__apimacro_man")
        #expect(sections.status == 0)
        for heading in [".Sh ENVIRONMENT", ".Sh FILES", ".Sh EXAMPLES"] {
            #expect(sections.stdout.contains(heading + "\n"), "\(heading)")
        }
        // scripts/setup-system installs groff (groff-base), so the check always runs.
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"), "groff: apt-get install groff-base")
        let page =
            ".Dd November 29, 2026\n.Dt APIMACRO 1\n.Os\n.Sh NAME\n.Nm apimacro\n.Nd script web APIs\n"
            + sections.stdout
        try space.write("apimacro.1", page)
        let rendered = try await Binary.run(
            ["-mandoc", "-Tascii", "-rLL=300n", "-P-c", "-P-b", "-P-u", "-ww", "apimacro.1"], in: space.url,
            environment: ["LANG": "C.UTF-8"],
            executable: URL(fileURLWithPath: "/usr/bin/groff"))
        #expect(rendered.status == 0)
        #expect(rendered.stderr == "", "groff warns: \(rendered.stderr)")
        let text = rendered.stdout  // -P-b -P-u: no overstriking; -rLL=300n: no line broken inside a word
        for expected in [
            "ENVIRONMENT", "APIMACRO_REQUEST_TIMEOUT", "config.toml: request_timeout", "FILES",
            "$APIMACRO_HOME/credentials.json", "EXAMPLES", "apimacro help environment",
        ] {
            #expect(text.contains(expected), "\(expected) in:\n\(text)")
        }
    }
}
