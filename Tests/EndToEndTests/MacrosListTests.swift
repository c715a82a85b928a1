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
        // Names are padded to the longest on the path (the plugins' macros included): compare with one gap.
        let lines = result.stdout.split(separator: "\n").map {
            $0.replacingOccurrences(of: "^([^ ]+) {2,}", with: "$1  ", options: .regularExpression)
        }
        // Then the shipped plugins' macros (plugins/*/macros/), on the path after $APIMACRO_HOME/macros.
        try #require(lines.count == 8, "\(result.stdout)")
        #expect(lines[5...].map { String($0.prefix { $0 != " " }) } == ["foursquare-venues", "hackernews-search", "openweather-now"])
        #expect(lines[0].hasPrefix("broken  (does not parse: invalid syntax, line 1)"))
        #expect(lines[1].hasPrefix("profile  Show a user's profile.  ["))
        #expect(lines[2].hasPrefix("withmain  Greet USER.  ["))
        #expect(lines[3].hasPrefix("plain  ["))
        #expect(lines[4].hasPrefix("profile  (shadowed by an earlier folder) The home copy."))
    }
}
