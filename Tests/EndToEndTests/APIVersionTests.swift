import Foundation
import TestSupport
import Testing

/// GitHub's REST API versions (issue 41): `APIMACRO_GITHUB_API_VERSION=2026-03-10` end to end,
/// rate limits read from `resources.core` (2026-03-10 removed the top-level `rate`), and the
/// one warning per run a `Deprecation` or `Sunset` header earns, through the binary against
/// the loopback server's `GET /rate_limit` in each version's documented shape.
@Suite("GitHub API versions and deprecation warnings, through the binary")
struct APIVersionTests {
    static let macro = """
        from apimacro import github
        answer = github.get("/rate_limit")
        core = answer["resources"]["core"]
        print(core["remaining"], "rate" in answer, github.rate_limit["remaining"], github.rate_limit["resource"])
        github.get("/rate_limit", params={"again": "1"})
        print(github.user("octocat")["login"])
        """

    @Test(
        "both versions: resources.core read, the header sent; the old version's Deprecation and Sunset warn once",
        arguments: [nil, "2022-11-28", "2026-03-10"])
    func versions(version: String?) async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["limits.py": Self.macro])
        defer { space.remove() }
        var env = [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_HOME": space.url.appendingPathComponent("home").path,
        ]
        if let version { env["APIMACRO_GITHUB_API_VERSION"] = version }
        let run = try await space.run("run", "--no-cache", "limits.py", environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        let current = version == "2026-03-10"
        #expect(run.stdout == "4988 \(current ? "False" : "True") 4988 core\noctocat\n", "\(run.stderr)")
        let sent = server.requests.filter { $0.path == "/rate_limit" }.map { $0.header("X-GitHub-Api-Version") }
        #expect(sent == [version ?? "2022-11-28", version ?? "2022-11-28"])
        let warnings = run.stderr.split(separator: "\n").filter { $0.contains("warning:") }
        if current {
            #expect(warnings.isEmpty, "\(run.stderr)")
        } else {
            #expect(warnings.count == 1, "one warning per run: \(run.stderr)")
            let base: String = server.baseURL
            var expected = "apimacro: warning: github: the server says GET " + base + "/rate_limit is deprecated "
            expected += "since 2026-03-10 and to be removed on 2027-03-10; see "
            expected += "https://docs.github.com/rest/about-the-rest-api/api-versions and "
            expected += "https://github.blog/changelog/2026-03-10-rest-api-version-2026-03-10 (said once per run)"
            #expect(warnings.first.map(String.init) == expected)
        }
        try await server.shutdown()
    }
}
