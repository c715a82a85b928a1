import Foundation
import TestSupport
import Testing

/// A terminal that looks after the user (issue 27): colour for tables, JSON, errors and
/// warnings on a terminal, none in a pipe or with `NO_COLOR`, `--color` and `[ui] color`
/// choosing; tables that fit the terminal; an empty result that shows its columns; rows
/// that are not dicts as a one-column table.
///
/// Run on a real pseudo-terminal (`PseudoTerminal`).
@Suite("colour and tables on a terminal")
struct TerminalOutputTests {
    /// A macro that prints a table, then JSON, then raises.
    static let show = """
        import apimacro
        apimacro.output([{"name": "octocat", "stars": 42}], format="table")
        apimacro.output([{"name": "octocat", "fork": None}], format="json")
        raise ValueError("boom")
        """

    /// Runs `apimacro ARGS` on a pseudo-terminal and returns what it drew (`\r\n` made `\n`)
    /// and its exit status.
    static func onTerminal(
        _ arguments: [String], in space: Workspace, environment: [String: String] = [:]
    ) async throws -> (output: String, status: Int32) {
        var environment = environment
        environment["TERM"] = environment["TERM"] ?? "xterm-256color"
        let terminal = try PseudoTerminal(arguments, in: space.url, environment: environment)
        defer { terminal.close() }
        let status = try await terminal.waitForExit(timeout: 120)
        let output = try await terminal.finish()
        return (output.replacingOccurrences(of: "\r\n", with: "\n"), status)
    }

    /// Checks `text` against the snapshot `name` (`APIMACRO_RECORD_SNAPSHOTS=1` re-records it).
    static func snapshot(_ text: String, _ name: String) throws {
        let file = HelpTests.snapshots.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["APIMACRO_RECORD_SNAPSHOTS"] == "1" {
            try Data(text.utf8).write(to: file)
        }
        #expect(text == (try String(contentsOf: file, encoding: .utf8)), "snapshot \(name)")
    }

    @Test("on a terminal: a bold header, jq's colours for JSON, the exception in bold red (snapshot)")
    func coloursOnATerminal() async throws {
        let space = try Workspace(files: ["show.py": Self.show])
        defer { space.remove() }
        let (output, status) = try await Self.onTerminal(["run", "show.py"], in: space)
        #expect(status == 1)
        // The traceback's file path differs per run: the snapshot holds it as show.py.
        try Self.snapshot(output.replacingOccurrences(of: space.url.path + "/", with: ""), "terminal_colours.txt")
    }

    @Test(
        "no colour with NO_COLOR, --color never or [ui] color = never; colour with --color always or [ui] color = always over NO_COLOR",
        arguments: [
            ([], [:], nil, true),
            (["--color", "never"], [:], nil, false),
            ([], ["NO_COLOR": "1"], nil, false),
            ([], ["NO_COLOR": ""], nil, true),
            ([], ["TERM": "dumb"], nil, false),
            ([], [:], "never", false),
            (["--color", "always"], ["NO_COLOR": "1"], nil, true),
            ([], ["NO_COLOR": "1"], "always", true),
            ([], ["NO_COLOR": "1"], "auto", false),
            (["--color", "auto"], [:], "never", true),
            ([], ["APIMACRO_UI_COLOR": "never"], "always", false),
        ] as [([String], [String: String], String?, Bool)])
    func choices(flags: [String], environment: [String: String], config: String?, coloured: Bool) async throws {
        let space = try Workspace(files: ["show.py": Self.show])
        defer { space.remove() }
        var environment = environment
        if let config {
            let home = space.url.appendingPathComponent("home")
            try space.write("home/config.toml", "[ui]\ncolor = \"\(config)\"\n")
            environment["APIMACRO_HOME"] = home.path
        }
        let (output, _) = try await Self.onTerminal(["run"] + flags + ["show.py"], in: space, environment: environment)
        #expect(output.contains("\u{1B}[") == coloured, "\(output)")
        #expect(output.contains("octocat"))
    }

    @Test("in a pipe: plain unless --color always or [ui] color = always; usage errors too")
    func pipes() async throws {
        let space = try Workspace(files: ["show.py": Self.show])
        defer { space.remove() }
        let plain = try await space.run("run", "--format", "table", "show.py")
        #expect(plain.status == 1)
        #expect(!plain.stdout.contains("\u{1B}"), "\(plain.stdout)")
        #expect(!plain.stderr.contains("\u{1B}"), "\(plain.stderr)")
        let always = try await space.run("run", "--color", "always", "--format", "table", "show.py")
        #expect(always.stdout.hasPrefix("\u{1B}[1mname     stars\u{1B}[0m\n"), "\(always.stdout)")
        #expect(always.stderr.hasSuffix("\u{1B}[1;31mValueError: boom\u{1B}[0m\n"), "\(always.stderr)")
        try space.write("home/config.toml", "[ui]\ncolor = \"always\"\n")
        let home = ["APIMACRO_HOME": space.url.appendingPathComponent("home").path]
        let configured = try await space.run("run", "nosuch.py", environment: home)
        #expect(configured.status == 2)
        #expect(configured.stderr.hasPrefix("\u{1B}[1;31mapimacro:\u{1B}[0m \u{1B}[31m"), "\(configured.stderr)")
        let bad = try await space.run("run", "--color", "sometimes", "show.py")
        #expect(bad.status == 2)
        #expect(bad.stderr == "apimacro: --color: 'sometimes' is not a colour choice; accepted: auto, always, never\n")
        try space.write("home/config.toml", "[ui]\ncolor = \"maybe\"\n")
        let badFile = try await space.run("run", "show.py", environment: home)
        #expect(badFile.status == 2)
        #expect(badFile.stderr.contains("config.toml: ui.color: 'maybe' is not a colour choice"), "\(badFile.stderr)")
    }

    @Test("an error and a warning on a terminal: red and yellow")
    func errorsAndWarnings() async throws {
        let space = try Workspace(files: ["empty.py": ""])
        defer { space.remove() }
        let error = try await Self.onTerminal(["run", "nosuch.py"], in: space)
        #expect(error.status == 2)
        #expect(error.output.hasPrefix("\u{1B}[1;31mapimacro:\u{1B}[0m \u{1B}[31m"), "\(error.output)")
        // A VIRTUAL_ENV of another Python is ignored with a warning.
        try space.write("venv/pyvenv.cfg", "version = 2.7.18\n")
        let warning = try await Self.onTerminal(
            ["run", "empty.py"], in: space, environment: ["VIRTUAL_ENV": space.url.appendingPathComponent("venv").path])
        #expect(warning.status == 0)
        #expect(
            warning.output.hasPrefix("\u{1B}[1;33mapimacro:\u{1B}[0m \u{1B}[33mignoring VIRTUAL_ENV="),
            "\(warning.output)")
    }

    /// Rows wider than a 40-column terminal.
    static let wide = """
        import apimacro
        apimacro.output([
            {"name": "octocat", "description": "A very long description that goes on and on", "stars": 123456},
            {"name": "x", "description": "short", "stars": 7},
        ])
        """

    @Test("a table fits the terminal (COLUMNS), cutting long cells with …; --wide and a pipe keep them")
    func tablesFit() async throws {
        let space = try Workspace(files: ["wide.py": Self.wide])
        defer { space.remove() }
        let fitted = try await Self.onTerminal(["run", "wide.py"], in: space, environment: ["COLUMNS": "40"])
        #expect(fitted.status == 0)
        let lines = fitted.output.replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(
            of: "\u{1B}[2m", with: ""
        ).replacingOccurrences(of: "\u{1B}[0m", with: "").split(separator: "\n")
        #expect(lines.count == 4, "\(fitted.output)")
        #expect(lines.allSatisfy { $0.count <= 40 }, "\(fitted.output)")
        #expect(lines.contains { $0.contains("A very long descriptio…") && $0.hasSuffix("123456") }, "\(fitted.output)")
        let kept = try await Self.onTerminal(["run", "--wide", "wide.py"], in: space, environment: ["COLUMNS": "40"])
        #expect(kept.output.contains("A very long description that goes on and on  123456"), "\(kept.output)")
        let piped = try await space.run("run", "--format", "table", "wide.py", environment: ["COLUMNS": "40"])
        #expect(piped.stdout.contains("A very long description that goes on and on  123456"), "\(piped.stdout)")
    }

    @Test("an empty result shows its header; rows that are not dicts are a one-column table")
    func emptyAndPlainRows() async throws {
        let space = try Workspace(files: [
            "empty.py": "import apimacro\napimacro.output([], columns=['login', 'id'])\napimacro.output([])\n",
            "plain.py": "import apimacro\napimacro.output(['a', 'bb'])\n",
        ])
        defer { space.remove() }
        let empty = try await Self.onTerminal(["run", "--color", "never", "empty.py"], in: space)
        #expect(empty.status == 0)
        #expect(empty.output == "login  id\n-----  --\n(no rows)\n")
        let plain = try await space.run("run", "--format", "table", "plain.py")
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == "value\n-----\na\nbb\n")
        #expect(plain.stderr == "")
        let json = try await space.run("run", "plain.py")
        #expect(json.stdout == "[\n  \"a\",\n  \"bb\"\n]\n")
    }

    /// Eight pages of one repository each, then their count; a line printed after page 4.
    static let pages = """
        from apimacro import github
        count = 0
        for repo in github.paginate("/users/octocat/repos", params={"per_page": 1}):
            count += 1
            if count == 4:
                print("halfway")
        print(count)
        """

    @Test("a long pagination shows a progress line on stderr; what the macro prints erases it first; none in a pipe")
    func paginationProgress() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["pages.py": Self.pages])
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL]
        // Each page 300 ms late: the line appears once the iteration has taken half a second.
        server.inject(Array(repeating: .delay(milliseconds: 300), count: 8), path: "/users/octocat/repos")
        let shown = try await Self.onTerminal(["run", "--no-cache", "pages.py"], in: space, environment: environment)
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("github: 2 pages · 2 items · 2 requests · rate limit "), "\(shown.output)")
        #expect(shown.output.contains("\r\u{1B}[Khalfway\n"), "erased before the macro's line: \(shown.output)")
        #expect(shown.output.hasSuffix("\r\u{1B}[K8\n"), "erased when the iteration ends: \(shown.output)")
        server.inject(Array(repeating: .delay(milliseconds: 300), count: 8), path: "/users/octocat/repos")
        let piped = try await space.run("run", "--no-cache", "pages.py", environment: environment)
        #expect(piped.stdout == "halfway\n8\n")
        #expect(piped.stderr == "")
        try await server.shutdown()
    }

    @Test("a long map shows how many calls are done; -v turns the line off (its own lines say it)")
    func mapProgress() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "many.py": """
            import apimacro
            from apimacro import github
            results = apimacro.map(github.get, ["/echo/%d" % i for i in range(8)], concurrency=2)
            print(len(results))
            """
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL]
        for index in 0..<8 { server.inject([.delay(milliseconds: 300)], path: "/echo/\(index)") }
        let shown = try await Self.onTerminal(["run", "--no-cache", "many.py"], in: space, environment: environment)
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("map: "), "\(shown.output)")
        #expect(shown.output.contains(" of 8 done · "), "\(shown.output)")
        #expect(shown.output.hasSuffix("\r\u{1B}[K8\n"), "\(shown.output)")
        for index in 0..<8 { server.inject([.delay(milliseconds: 300)], path: "/echo/\(index)") }
        let verbose = try await Self.onTerminal(
            ["run", "-v", "--no-cache", "many.py"], in: space, environment: environment)
        #expect(!verbose.output.contains(" done · "), "\(verbose.output)")
        #expect(verbose.output.contains("/echo/7 200 "), "\(verbose.output)")
        try await server.shutdown()
    }
}
