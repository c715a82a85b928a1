import Foundation
import Testing

@Suite("apimacro macros list")
struct MacrosListTests {
    @Test("lists ./macros then $APIMACRO_HOME/macros with one-line help, without running anything")
    func list() async throws {
        let space = try Workspace(files: [
            "macros/profile.py": "\"\"\"Show a user's profile.\n\nMore text.\"\"\"\nraise SystemExit('must not run')\n",
            "macros/withmain.py": "def main(user: str):\n    \"\"\"Greet USER.\"\"\"\n",
            "macros/broken.py": "def (:\n",
            "macros/_private.py": "\"\"\"Not listed.\"\"\"\n",
            "home/macros/profile.py": "\"\"\"The home copy.\"\"\"\n",
            "home/macros/plain.py": "print(1)\n",
        ])
        defer { space.remove() }
        let result = try await space.run(
            "macros", "list", environment: ["APIMACRO_HOME": space.url.appendingPathComponent("home").path])
        #expect(result.status == 0, "\(result.stderr)")
        // Names are padded to the longest on the path (the plugins' macros included): compare with one gap.
        let lines = result.stdout.split(separator: "\n").map {
            $0.replacingOccurrences(of: "^([^ ]+) {2,}", with: "$1  ", options: .regularExpression)
        }
        // Then the shipped plugins' macros (plugins/*/macros/), on the path after $APIMACRO_HOME/macros.
        try #require(lines.count == 8, "\(result.stdout)")
        #expect(
            lines[5...].map { String($0.prefix { $0 != " " }) } == [
                "foursquare-venues", "hackernews-search", "openweather-now",
            ])
        #expect(lines[0].hasPrefix("broken  (does not parse: invalid syntax, line 1)"))
        #expect(lines[1].hasPrefix("profile  Show a user's profile.  ["))
        #expect(lines[2].hasPrefix("withmain  Greet USER.  ["))
        #expect(lines[3].hasPrefix("plain  ["))
        #expect(lines[4].hasPrefix("profile  (shadowed by an earlier folder) The home copy."))
    }

    @Test(
        "a NUL byte, a FIFO, a symlink to /dev/zero or an oversized file is listed as unreadable; the rest still lists (issue 18, item 10)"
    )
    func badFiles() async throws {
        let space = try Workspace(files: [
            "macros/good.py": "\"\"\"A fine macro.\"\"\"\n",
            "macros/nul.py": "\"\"\"Has a NUL.\"\"\"\n\u{0}\n",
            "macros/huge.py": "# " + String(repeating: "x", count: (1 << 20) + 10) + "\n",
            "home/macros/.keep": "",
        ])
        defer { space.remove() }
        let macros = space.url.appendingPathComponent("macros")
        #expect(mkfifo(macros.appendingPathComponent("fifo.py").path, 0o644) == 0)
        #expect(symlink("/dev/zero", macros.appendingPathComponent("zero.py").path) == 0)
        let environment = ["APIMACRO_HOME": space.url.appendingPathComponent("home").path]
        // Before the fix: PythonErrorSet() for the NUL byte; the FIFO blocked until the runner's limit.
        let result = try await space.run("macros", "list", environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map {
            $0.replacingOccurrences(of: "^([^ ]+) {2,}", with: "$1  ", options: .regularExpression)
        }
        #expect(lines.contains { $0.hasPrefix("good  A fine macro.") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("fifo  (cannot read: not a regular file)") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("zero  (cannot read: not a regular file)") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("huge  (cannot read: larger than 1 MiB)") }, "\(result.stdout)")
        #expect(
            lines.contains { $0.hasPrefix("nul  (cannot read: ") || $0.hasPrefix("nul  (does not parse: ") },
            "\(result.stdout)")

        let repl = try await space.run("repl", environment: environment, stdin: ":macros\n")
        #expect(repl.status == 0, "\(repl.stderr)")
        #expect(
            repl.stdout.contains("good") && repl.stdout.contains("fifo") && repl.stdout.contains("not a regular file"),
            "\(repl.stdout)")
    }
}
