import Foundation
import TestSupport
import Testing

/// README.md and the guide it links to (docs/guide/) as a new user follows them (issue 36,
/// friction 1; the guide left README in issue 37).
///
/// Their macros exist or are written out in full, README's first macro prints what README
/// shows, and the offline command works as written. The macros' type check is
/// `TypeCheckTests.examplesTypeCheck`.
@Suite("README's and the guide's macros and commands, as written")
struct ReadmeTests {
    static let readme = PythonTools.root.appendingPathComponent("README.md")
    static let guide = PythonTools.root.appendingPathComponent("docs/guide")

    /// README.md, then each page of docs/guide/ in name order: what a reader follows.
    static func text() throws -> String {
        let pages = try FileManager.default.contentsOfDirectory(atPath: guide.path).filter { $0.hasSuffix(".md") }
            .sorted()
        return try ([readme] + pages.map { guide.appendingPathComponent($0) }).map {
            try String(contentsOf: $0, encoding: .utf8)
        }.joined(separator: "\n")
    }

    /// The ```python blocks of README and the guide that define `main` (a macro), dedented, in order.
    static func macros() throws -> [String] {
        let text = try text()
        var found: [String] = []
        for match in text.matches(of: #/```python\n((?s).*?)```/#) where match.output.1.contains("def main(") {
            let lines = match.output.1.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let indents = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { line in
                line.prefix { $0 == " " }.count
            }
            let indent = indents.min() ?? 0
            found.append(lines.map { line in String(line.dropFirst(min(indent, line.count))) }.joined(separator: "\n"))
        }
        return found
    }

    @Test("every macro README or the guide runs by name is written out there or is in examples/")
    func namedMacrosExist() throws {
        let text = try Self.text()
        let written = Set(text.matches(of: #/Save this as\s+`macros/([a-z_-]+)\.py`/#).map { String($0.output.1) })
            .union(text.matches(of: #/`[a-z]+/macros/([a-z_-]+)\.py`/#).map { String($0.output.1) })
        // The examples, and the shipped plugins' macros (on the macro path by name).
        let root = PythonTools.root
        let folders =
            [root.appendingPathComponent("examples")]
            + (try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("plugins").path)).map {
                root.appendingPathComponent("plugins/\($0)/macros")
            }
        let examples = Set(
            folders.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: $0.path)) ?? [] }
                .filter { $0.hasSuffix(".py") }.map { String($0.dropLast(3)) })
        // A command as README shows it: in backquotes, or a line of a shell block.
        let named = Set(text.matches(of: #/(?m)(?:^|`|\$ )apimacro run ([a-z][a-z_-]*) /#).map { String($0.output.1) })
            .union(text.matches(of: #/\nname=[a-z]+\s+([a-z][a-z_-]*) /#).map { String($0.output.1) })
        #expect(!named.isEmpty)
        let missing = named.subtracting(written).subtracting(examples).subtracting(["-m", "-c"])
        #expect(missing.isEmpty, "README or the guide runs macros it never shows: \(missing.sorted())")
    }

    @Test("README's first macro, saved as README says, prints the table README shows against the test server")
    func firstMacro() async throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let macro = try #require(try Self.macros().first { $0.contains("Counter(repo[\"language\"]") })
        let shown = try #require(
            text.firstMatch(of: #/```\n\$ apimacro run langs octocat\n((?s).*?)```/#).map { String($0.output.1) })
        let server = try await TestServer.start()
        let space = try Workspace(files: ["macros/langs.py": macro])
        defer { space.remove() }
        let result = try await space.run(
            "run", "langs", "octocat", "--format", "table", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == shown, "README shows:\n\(shown)\nthe macro printed:\n\(result.stdout)")
        try await server.shutdown()
    }

    @Test("the guide's offline instagram-friends command works as written, with no token")
    func offlineInstagramCommand() async throws {
        let text = try Self.text()
        let command = try #require(
            text.firstMatch(of: #/`(APIMACRO_INSTAGRAM_URL=[^ `]+)\s+apimacro run\s+([^`]*instagram-friends[^`]*)`/#))
        let variable = command.output.1.split(separator: "=", maxSplits: 1).map(String.init)
        let words = command.output.2.split(whereSeparator: \.isWhitespace).map(String.init)
        // The guide's paths are from the repository's root; the run is in a workspace of its own, so
        // the checkout gets no file or cache folder.
        let space = try Workspace()
        defer { space.remove() }
        let paths = words.map { $0.contains("/") ? PythonTools.root.appendingPathComponent($0).path : $0 }
        let result = try await Binary.run(["run"] + paths, in: space.url, environment: [variable[0]: variable[1]])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count > 1, "\(result.stdout)")
    }

    /// Every `apimacro …` command README shows in backquotes (joined where README wraps one),
    /// with what each needs set up as a reader would: the first macro saved, a jobs file, a
    /// key to paste, the test server's settings.
    static func readmeCommands() throws -> [[String]] {
        let text = try String(contentsOf: readme, encoding: .utf8)
        return text.matches(of: #/`apimacro\s+([^`]+)`/#).map { match in
            match.output.1.split(whereSeparator: \.isWhitespace).map(String.init)
        }
    }

    @Test("every command README shows runs as written: no usage error, and the ones that can succeed here do")
    func everyCommandRuns() async throws {
        let commands = try Self.readmeCommands()
        #expect(commands.count >= 10, "\(commands)")
        let macro = try #require(try Self.macros().first { $0.contains("Counter(repo[\"language\"]") })
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "macros/langs.py": macro, "jobs.txt": "langs octocat\nlangs octocat --limit 5\n",
            "FILE": try String(
                contentsOf: PythonTools.root.appendingPathComponent("Tests/EndToEndTests/OpenAPI/uber.json"),
                encoding: .utf8),
        ])
        defer { space.remove() }
        let environment = [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_readmeToken12345",
            "APIMACRO_INSTAGRAM_URL": server.baseURL, "APIMACRO_INSTAGRAM_CLIENT_ID": "readme-app",
            "APIMACRO_INSTAGRAM_CLIENT_SECRET": "readme-app-secret",
            "APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4",
            // `login github`: the test server's device flow, which authorizes after two polls.
            "APIMACRO_GITHUB_CLIENT_ID": "device-ok", "APIMACRO_GITHUB_LOGIN_URL": server.baseURL + "/device-login",
        ]
        // What cannot end well without a person (a browser's redirect) still parses: it fails
        // for what it waits for, never for how it was written.
        let needsAPerson: Set<String> = ["login instagram"]
        for words in commands {
            // README's placeholders as a reader fills them in: a name and the document saved as FILE.
            let words = words.map { $0 == "NAME" ? "readme_api" : $0 }
            let line = words.joined(separator: " ")
            // The key the test server's Bitly accepts, pasted as `login shortener` asks.
            let pasted = line.hasPrefix("login shortener") ? "bitly-test-token\n" : ""
            // `kernel install`: in the wheel's virtualenv (WheelTests), ipykernel from the tests' tools.
            var settings = environment
            if line.hasPrefix("kernel install") {
                settings["VIRTUAL_ENV"] = try await WheelTests.virtualEnvironment().path
                settings["PYTHONPATH"] = try await PythonTools.virtualEnvironment()
                    .appendingPathComponent("lib/python3.11/site-packages").path
            }
            let result = try await Binary.run(words, in: space.url, environment: settings, stdin: pasted)
            for mark in ["unknown option", "missing expected argument", "unexpected argument", "Usage:"] {
                #expect(!result.stderr.lowercased().contains(mark.lowercased()), "apimacro \(line): \(result.stderr)")
            }
            if !needsAPerson.contains(line) {
                #expect(
                    result.status == 0, "apimacro \(line) exited \(result.status): \(result.stderr)\(result.stdout)")
            }
        }
        try await server.shutdown()
    }
}
