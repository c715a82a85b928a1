import Foundation
import Testing

@Suite("apimacro.output through the binary")
struct OutputTests {
    static let macro = """
        import apimacro
        apimacro.output([
            {"login": "octocat", "name": "The Octocat", "followers": 3938, "site_admin": False},
            {"login": "東京ユーザー", "name": "Zoë", "followers": 7, "site_admin": True},
            {"login": "nobody", "name": None, "followers": 0},
        ])
        """

    func output(_ format: String?) async throws -> RunResult {
        let space = try Workspace(files: ["rows.py": Self.macro])
        defer { space.remove() }
        if let format { return try await space.run("run", "--format", format, "rows.py") }
        return try await space.run("run", "rows.py")
    }

    @Test("table: aligned by display width, numbers right-aligned")
    func table() async throws {
        let result = try await output("table")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                login         name         followers  site_admin
                ------------  -----------  ---------  ----------
                octocat       The Octocat       3938  false
                東京ユーザー  Zoë                  7  true
                nobody                             0

                """)
    }

    @Test("json: valid JSON, the same rows")
    func json() async throws {
        let result = try await output("json")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 3)
        #expect(rows?[1]["login"] as? String == "東京ユーザー")
        #expect(rows?[2]["name"] is NSNull)
    }

    @Test("ndjson: one JSON object a line")
    func ndjson() async throws {
        let result = try await output("ndjson")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any]) }
    }

    @Test("csv: a header and one line per row")
    func csv() async throws {
        let result = try await output("csv")
        #expect(
            result.stdout
                == "login,name,followers,site_admin\noctocat,The Octocat,3938,false\n東京ユーザー,Zoë,7,true\nnobody,,0,\n")
    }

    @Test("not a terminal and no --format: json")
    func defaultWhenPiped() async throws {
        let result = try await output(nil)
        #expect(result.stdout.hasPrefix("[\n  {\n    \"login\": \"octocat\""))
    }
}
