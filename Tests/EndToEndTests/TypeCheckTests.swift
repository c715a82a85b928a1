import Foundation
import TestSupport
import Testing

/// Issue 27, "Editors and type checkers": `apimacro stubs [--install]`, and the examples and
/// shipped macros type-checked with mypy in strict mode against the stubs.
@Suite("type stubs: apimacro stubs --install, and mypy --strict over the examples")
struct TypeCheckTests {
    /// A fresh virtualenv without pip (what `stubs --install` writes into).
    static func emptyVirtualEnvironment(in space: Workspace) async throws -> URL {
        let venv = space.url.appendingPathComponent("venv")
        let made = try await Binary.run(
            ["-m", "venv", "--without-pip", venv.path], in: space.url,
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        guard made.status == 0 else { throw WorkspaceError("python3 -m venv failed: \(made.stderr)") }
        return venv
    }

    @Test("stubs prints the folder; --install needs a virtualenv, then writes apimacro-stubs of this version")
    func install() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let shown = try await space.run("stubs")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Sources/MacroRuntime/Python/apimacro"), "\(shown.stdout)")
        #expect(shown.stdout.contains("MYPYPATH="), "\(shown.stdout)")

        let refused = try await space.run("stubs", "--install")
        #expect(refused.status == 2)
        #expect(
            refused.stderr.hasPrefix("apimacro: no virtualenv is active (VIRTUAL_ENV is not set)"), "\(refused.stderr)")

        let venv = try await Self.emptyVirtualEnvironment(in: space)
        let installed = try await space.run("stubs", "--install", environment: ["VIRTUAL_ENV": venv.path])
        #expect(installed.status == 0, "\(installed.stderr)")
        let version = try await space.run("--version").stdout.split(separator: "\n").first.map {
            String($0.dropFirst("apimacro ".count))
        }
        let sitePackages = venv.appendingPathComponent("lib/python3.11/site-packages")
        let stub = try String(
            contentsOf: sitePackages.appendingPathComponent("apimacro-stubs/__init__.pyi"), encoding: .utf8)
        let shipped = try String(
            contentsOf: PythonTools.root.appendingPathComponent("Sources/MacroRuntime/Python/apimacro/__init__.pyi"),
            encoding: .utf8)
        #expect(stub == shipped)
        let metadata = try String(
            contentsOf: sitePackages.appendingPathComponent("apimacro_stubs-\(version ?? "?").dist-info/METADATA"),
            encoding: .utf8)
        #expect(metadata.contains("Name: apimacro-stubs\nVersion: \(version ?? "?")\n"), "\(metadata)")
        // pip sees it, and an older install is replaced (one dist-info).
        try FileManager.default.createDirectory(
            at: sitePackages.appendingPathComponent("apimacro_stubs-0.0.1.dist-info"), withIntermediateDirectories: true
        )
        let again = try await space.run("stubs", "--install", environment: ["VIRTUAL_ENV": venv.path])
        #expect(again.status == 0, "\(again.stderr)")
        let infos = try FileManager.default.contentsOfDirectory(atPath: sitePackages.path).filter {
            $0.hasPrefix("apimacro_stubs-")
        }
        #expect(infos == ["apimacro_stubs-\(version ?? "?").dist-info"], "\(infos)")
    }

    @Test("the examples and the shipped plugins' macros pass mypy --strict against the installed stubs")
    func examplesTypeCheck() async throws {
        let tools = try await PythonTools.virtualEnvironment()
        let space = try Workspace(files: [
            "wrong.py": """
            import apimacro
            from apimacro import github

            def main() -> None:
                user: int = github.user("octocat")
                github.repos(42)
                apimacro.output(github.rate_limit["remaining"])
            """
        ])
        defer { space.remove() }
        let venv = try await Self.emptyVirtualEnvironment(in: space)
        let installed = try await space.run("stubs", "--install", environment: ["VIRTUAL_ENV": venv.path])
        #expect(installed.status == 0, "\(installed.stderr)")
        let root = PythonTools.root
        let macros =
            try ["examples", "plugins"].flatMap { folder in
                try FileManager.default.subpathsOfDirectory(atPath: root.appendingPathComponent(folder).path)
                    .filter { $0.hasSuffix(".py") && !$0.contains("/cassettes/") }
                    .map { root.appendingPathComponent(folder).appendingPathComponent($0).path }
            }.sorted()
        #expect(macros.count >= 11, "\(macros)")
        // README's and the guide's macros too (its first macro, the plugin tutorial's), as a reader saves them.
        var readmeMacros: [String] = []
        for (index, macro) in try ReadmeTests.macros().enumerated() {
            try space.write("readme_\(index).py", macro)
            readmeMacros.append(space.url.appendingPathComponent("readme_\(index).py").path)
        }
        #expect(readmeMacros.count >= 3, "\(readmeMacros)")
        let checkedFiles = macros + readmeMacros
        let python = URL(fileURLWithPath: tools.appendingPathComponent("bin/python").path)
        let mypy = [
            "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
            venv.appendingPathComponent("bin/python").path,
        ]
        let checked = try await Binary.run(mypy + checkedFiles, in: space.url, executable: python)
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        #expect(
            checked.stdout.hasPrefix("Success: no issues found in \(checkedFiles.count) source files"),
            "\(checked.stdout)")

        // A negative control: the stubs do type the calls (without them every name would be Any).
        let wrong = try await Binary.run(mypy + ["wrong.py"], in: space.url, executable: python)
        #expect(wrong.status == 1, "\(wrong.stdout)")
        for message in [
            "Incompatible types in assignment (expression has type \"PublicUser | PrivateUser\", variable has type \"int\")",
            "Argument 1 to \"repos\" of \"GitHub\" has incompatible type \"int\"; expected \"str\"",
            "Value of type \"_GitHubRateLimit | None\" is not indexable",
        ] {
            #expect(wrong.stdout.contains(message), "\(wrong.stdout)")
        }
    }

    /// Issue 41, "Typed answers": the named methods' answers are TypedDicts generated from
    /// GitHub's OpenAPI description (per REST API version), Meta's IG fields and the shortener's
    /// link, so mypy catches a misspelled field; at run time they stay dicts.
    @Test("a misspelled field of a GitHub, Instagram or shortener answer is caught; the right ones pass")
    func answersAreTyped() async throws {
        let tools = try await PythonTools.virtualEnvironment()
        let space = try Workspace(files: [
            "right.py": """
            from apimacro import github, instagram, shortener
            from apimacro.github_types import MinimalRepository


            def stars(repo: MinimalRepository) -> int:
                return repo.get("stargazers_count", 0)


            def main() -> None:
                for repo in github.repos("octocat"):
                    print(repo["full_name"], stars(repo), repo["owner"]["login"])
                for hit in github.search("repositories", "swift"):
                    print(hit["stargazers_count"], hit["license"], hit["forks_count"])
                for issue in github.search("issues", "is:open"):
                    print(issue["title"], issue["user"])
                print(github.user("octocat")["login"])
                for follower in github.followers("octocat"):
                    print(follower["login"])
                print(github.get("/rate_limit")["resources"]["core"]["remaining"])
                for media in instagram.media():
                    print(media.get("like_count"), media.get("permalink"))
                print(instagram.me().get("username"))
                link = shortener.shorten("https://example.com")
                print(link["id"], link["longUrl"], link["backend"])
            """,
            "misspelled.py": """
            from apimacro import github, instagram, shortener


            def main() -> None:
                for repo in github.repos("octocat"):
                    print(repo["stargazer_count"])
                for issue in github.search("issues", "is:open"):
                    print(issue["stargazers_count"])
                for media in instagram.media():
                    print(media["likes"])
                print(shortener.shorten("https://example.com")["long_url"])
            """,
            "old_rate.py": """
            from apimacro import github


            def main() -> None:
                print(github.get("/rate_limit")["rate"]["remaining"])
            """,
            // Fields that come from a shared base (`_github_common`) and from a version's own one.
            "shared.py": """
            from apimacro import github


            def main() -> None:
                for repo in github.repos("octocat"):
                    print(repo["archive_urll"], repo["forks_count"])
                for hit in github.search("repositories", "swift"):
                    print(hit["forks_countt"])
                for issue in github.search("issues", "is:open"):
                    print(issue["repository"]["has_downloadz"])
            """,
        ])
        defer { space.remove() }
        let python = URL(fileURLWithPath: tools.appendingPathComponent("bin/python").path)
        let venv = try await Self.emptyVirtualEnvironment(in: space)
        func mypy(_ file: String) async throws -> RunResult {
            try await Binary.run(
                [
                    "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                    venv.appendingPathComponent("bin/python").path, file,
                ], in: space.url, executable: python)
        }
        let installed = try await space.run("stubs", "--install", environment: ["VIRTUAL_ENV": venv.path])
        #expect(installed.status == 0, "\(installed.stderr)")

        let right = try await mypy("right.py")
        #expect(right.status == 0, "\(right.stdout)\(right.stderr)")
        let wrong = try await mypy("misspelled.py")
        #expect(wrong.status == 1, "\(wrong.stdout)")
        for message in [
            "TypedDict \"MinimalRepository\" has no key \"stargazer_count\"",
            "TypedDict \"IssueSearchResultItem\" has no key \"stargazers_count\"",
            "TypedDict \"_InstagramMedia\" has no key \"likes\"",
            "TypedDict \"_ShortLink\" has no key \"long_url\"",
        ] {
            #expect(wrong.stdout.contains(message), "\(wrong.stdout)")
        }
        #expect(wrong.stdout.contains("Found 4 errors in 1 file"), "\(wrong.stdout)")

        // The REST API version decides the shapes: 2026-03-10 removed /rate_limit's `rate`.
        #expect(try await mypy("old_rate.py").status == 0)
        let current = try await space.run(
            "stubs", "--install", environment: ["VIRTUAL_ENV": venv.path, "APIMACRO_GITHUB_API_VERSION": "2026-03-10"])
        #expect(current.status == 0, "\(current.stderr)")
        let removed = try await mypy("old_rate.py")
        #expect(removed.stdout.contains("TypedDict \"RateLimitOverview\" has no key \"rate\""), "\(removed.stdout)")
        #expect(try await mypy("right.py").status == 0)
        let shared = try await mypy("shared.py")
        for message in [
            "TypedDict \"MinimalRepository\" has no key \"archive_urll\"",
            "TypedDict \"RepoSearchResultItem\" has no key \"forks_countt\"",
            "TypedDict \"Repository\" has no key \"has_downloadz\"",
        ] {
            #expect(shared.stdout.contains(message), "\(shared.stdout)")
        }
        #expect(shared.stdout.contains("Found 3 errors in 1 file"), "\(shared.stdout)")
        // The shared shapes are installed beside the version's, and are no version of their own.
        let package = venv.appendingPathComponent("lib/python3.11/site-packages/apimacro-stubs")
        #expect(FileManager.default.fileExists(atPath: package.appendingPathComponent("_github_common.pyi").path))
        let common = try await space.run(
            "stubs", "--install", "--github-api-version", "common", environment: ["VIRTUAL_ENV": venv.path])
        #expect(common.status == 2, "\(common.stderr)")
        let unknown = try await space.run(
            "stubs", "--install", "--github-api-version", "2021-01-01", environment: ["VIRTUAL_ENV": venv.path])
        #expect(unknown.status == 2)
        #expect(
            unknown.stderr.contains("REST API versions 2022-11-28, 2026-03-10, not 2021-01-01"), "\(unknown.stderr)")

        // At run time the names are plain dicts, so an annotation costs nothing and imports.
        let runs = try await space.run(
            "run", "-c", "from apimacro.github_types import MinimalRepository\nprint(MinimalRepository is dict)")
        #expect(runs.status == 0, "\(runs.stderr)")
        #expect(runs.stdout == "True\n", "\(runs.stdout)")
    }
}
