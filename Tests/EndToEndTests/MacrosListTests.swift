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
        let result = try await space.run("macros", "list", environment: ["APIMACRO_HOME": space.url.appendingPathComponent("home").path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 5, "\(result.stdout)")
        #expect(lines[0].hasPrefix("broken    (does not parse: invalid syntax, line 1)"))
        #expect(lines[1].hasPrefix("profile   Show a user's profile.  ["))
        #expect(lines[2].hasPrefix("withmain  Greet USER.  ["))
        #expect(lines[3].hasPrefix("plain  ["))
        #expect(lines[4].hasPrefix("profile   (shadowed by an earlier folder) The home copy."))
    }
}
