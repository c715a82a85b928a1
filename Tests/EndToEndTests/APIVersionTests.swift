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

    static let shapes = """
        import base64, json
        from apimacro import github
        base = "/repos/octo-org/contents-demo/contents"
        listing = {entry["name"]: entry["type"] for entry in github.get(base)}
        vendor = {entry["name"]: entry["type"] for entry in github.get(base + "/vendor")}
        module = github.get(base + "/vendor/lib")
        readme = base64.b64decode(github.get(base + "/README.md")["content"]).decode()
        issue = next(iter(github.search("issues", "windows label:bug", limit=1)))
        code = next(iter(github.search("code", "addClass in:file", limit=1)))
        commit = next(iter(github.search("commits", "fix typo", limit=1)))
        print(json.dumps({
            "listing": listing, "vendor": vendor, "module": [module["type"], module["submodule_git_url"]],
            "readme": readme.splitlines()[0], "issue": ["assignee" in issue, "assignees" in issue],
            "code": "has_downloads" in code["repository"], "commit": "has_downloads" in commit["repository"],
        }, sort_keys=True))
        """

    @Test(
        "contents and search in each version's shape: a submodule listed as file or submodule, removed fields gone",
        arguments: ["2022-11-28", "2026-03-10"])
    func contentsAndSearch(version: String) async throws {
        try await Workspace.withServer(files: ["shapes.py": Self.shapes]) { server, space in
            let env = [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_API_VERSION": version,
                "GITHUB_TOKEN": "ghp_versionTestToken", "APIMACRO_HOME": space.url.appendingPathComponent("home").path,
            ]
            let run = try await space.run("run", "--no-cache", "shapes.py", environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let current = version == "2026-03-10"
            let removed = current ? "false" : "true"
            #expect(
                run.stdout
                    == #"{"code": \#(removed), "commit": \#(removed), "issue": [\#(removed), true], "#
                    + #""listing": {"README.md": "file", "docs": "dir", "vendor": "dir"}, "#
                    + #""module": ["submodule", "https://github.com/octo-org/lib.git"], "#
                    + ##""readme": "# contents-demo", "vendor": {"lib": "\##(current ? "submodule" : "file")"}}"##
                    + "\n",
                "\(run.stdout)\(run.stderr)")
            let versions = Set(
                server.requests.filter { $0.path.hasPrefix("/repos/") || $0.path.hasPrefix("/search/") }.map {
                    $0.header("X-GitHub-Api-Version")
                })
            #expect(versions == [version])
        }
    }

    @Test(
        "a GitHub App under each version: its token minted with the version asked for, installation repositories in its shape",
        arguments: ["2022-11-28", "2026-03-10"])
    func gitHubApp(version: String) async throws {
        let macro = """
            import json
            from apimacro import github
            repositories = github.get("/installation/repositories")["repositories"]
            deprecated = sorted(key for key in repositories[0] if key in ("has_downloads", "use_squash_pr_title_as_default"))
            print(json.dumps([deprecated, [r["full_name"] for r in repositories], github.app["installation_id"]]))
            """
        try await Workspace.withServer(files: ["app.py": macro]) { server, space in
            let keys = try TestRSAKeyPair(in: space.url.appendingPathComponent("keys"))
            server.setGitHubApp(
                GitHubAppSetup(
                    appID: "243473", publicKeyPath: keys.publicKeyPath,
                    installations: [GitHubAppSetup.Installation(id: 30_614_487, account: "GithubApp-Test-Org")]))
            let env = [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_APP_ID": "243473",
                "APIMACRO_GITHUB_APP_KEY": keys.privateKeyPath, "APIMACRO_GITHUB_API_VERSION": version,
                "APIMACRO_HOME": space.url.appendingPathComponent("home").path,
            ]
            let run = try await space.run("run", "--no-cache", "app.py", environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let deprecated = version == "2026-03-10" ? "[]" : #"["has_downloads", "use_squash_pr_title_as_default"]"#
            #expect(
                run.stdout
                    == "[\(deprecated), [\"GithubApp-Test-Org/sandbox\", \"GithubApp-Test-Org/python\"], 30614487]\n",
                "\(run.stdout)\(run.stderr)")
            // The App's own requests (installation lookup, token) asked for the same version.
            let appRequests = server.requests.filter {
                $0.path.hasPrefix("/app/") || $0.path.hasSuffix("/installation")
            }
            #expect(!appRequests.isEmpty)
            #expect(
                appRequests.allSatisfy { $0.header("X-GitHub-Api-Version") == version }, "\(appRequests.map(\.path))")
            // auth status --check asks GitHub with the version too, and reads the answer.
            let checked = try await space.run("auth", "status", "--check", environment: env)
            #expect(checked.status == 0 && checked.stdout.contains("repositories it reaches"), "\(checked.stdout)")
        }
    }
}
