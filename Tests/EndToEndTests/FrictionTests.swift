import Foundation
import TestSupport
import Testing

/// The frictions a new user met (issue 36, "The frictions"), each through the built binary.
@Suite("frictions a new user met")
struct FrictionTests {
    static let hello = "import apimacro\nprint('hello', *apimacro.args)\n"

    @Test("9: batch MACRO ARG gives the jobs-file line, as batch MACRO --opt does")
    func batchArgumentHint() async throws {
        let space = try Workspace(files: ["hello.py": Self.hello])
        defer { space.remove() }
        let result = try await space.run("batch", "hello.py", "octocat", "two words")
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty, "nothing ran: \(result.stdout)")
        #expect(result.stderr.hasPrefix("apimacro: no macro named 'octocat' (looked in "), "\(result.stderr)")
        #expect(
            result.stderr.hasSuffix(
                "; if 'octocat' is meant for hello.py: a macro takes its arguments in a jobs file, one "
                    + "'MACRO ARGS...' per line: echo \"hello.py octocat 'two words'\" | apimacro batch --file -\n"),
            "\(result.stderr)")
        let piped = try await space.run("batch", "--file", "-", stdin: "hello.py octocat 'two words'\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout.contains("hello octocat two words"), "\(piped.stdout)")
        // A first word that is no macro is still just that.
        let missing = try await space.run("batch", "nosuch.py")
        #expect(missing.status == 2)
        #expect(!missing.stderr.contains("jobs file"), "\(missing.stderr)")
    }

    @Test("10: --format csv leaves a lone '-' as it is; a real formula still gets its quote")
    func csvLoneDash() async throws {
        let space = try Workspace(files: [
            "rows.py": "import apimacro\napimacro.output([{'a': '-', 'b': '-1+2'}, {'a': 'x', 'b': '-'}])\n"
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--format", "csv", "rows.py")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "a,b\n-,'-1+2\nx,-\n", "\(result.stdout)")
    }
}

extension FrictionTests {
    @Test("4: did you mean, for macro names, subcommand words (with that command's help) and a macro's options")
    func didYouMean() async throws {
        let space = try Workspace(files: [
            "macros/repo_report.py": "print('report')\n",
            "opts.py": "def main(login: str, limit: int = 5):\n    print(login, limit)\n",
        ])
        defer { space.remove() }
        let macro = try await space.run("run", "repo_reprot")
        #expect(macro.status == 2)
        #expect(macro.stderr.hasPrefix("apimacro: no macro named 'repo_reprot'; did you mean 'repo_report'?"))
        let path = try await space.run("run", "otps.py")
        #expect(path.status == 2)
        #expect(
            path.stderr.hasPrefix("apimacro: no such macro file: otps.py; did you mean 'opts.py'?"), "\(path.stderr)")
        let repl = try await space.run("repl", stdin: ":run repo_reprot\n")
        #expect(repl.stderr.contains("did you mean 'repo_report'?"), "\(repl.stderr)")
        for (words, meant) in [
            (["cache", "clearr"], "cache clear"), (["plugins", "shw", "x"], "plugins show"),
            (["macros", "lst"], "macros list"),
            (["auth", "stauts"], "auth status"),
        ] {
            let result = try await Binary.run(words, in: space.url)
            #expect(result.status == 2, "\(words)")
            #expect(
                result.stderr
                    == "apimacro: unknown command '\(words[0]) \(words[1])'; did you mean '\(meant)'? "
                    + "(see 'apimacro \(words[0]) --help')\n", "\(result.stderr)")
        }
        let option = try await space.run("run", "opts.py", "octocat", "--limt", "3")
        #expect(option.status == 2, "\(option.stderr)")
        #expect(option.stderr.contains("unrecognized arguments: --limt 3; did you mean '--limit'?"), "\(option.stderr)")
    }

    @Test(
        "7: login refusals: github without a client id says where to make the app; a redirect without a code speaks of ?code="
    )
    func loginMessages() async throws {
        let space = try Workspace()
        defer { space.remove() }
        // `login github` is GitHub's device flow now (issue 41): it needs the user's own app.
        let github = try await space.run("login", "github")
        #expect(github.status == 2)
        #expect(github.stderr.contains("set APIMACRO_GITHUB_CLIENT_ID"), "\(github.stderr)")
        #expect(github.stderr.contains("tick \"Enable Device Flow\""), "\(github.stderr)")
        let env = [
            "APIMACRO_INSTAGRAM_CLIENT_ID": "test-client", "APIMACRO_INSTAGRAM_CLIENT_SECRET": "test-secret",
            "APIMACRO_INSTAGRAM_REDIRECT_URI": "http://127.0.0.1:8765/callback",
        ]
        let started = try await space.run("login", "instagram", environment: env)
        #expect(started.status == 1, "nothing pasted is not a login: \(started.stderr)")
        let url = try #require(started.stdout.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init))
        let state = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "state" }?.value)
        let noCode = try await space.run(
            "login", "instagram", "--redirect-url", "http://127.0.0.1:8765/callback?state=\(state)", environment: env)
        #expect(noCode.status == 2)
        #expect(noCode.stderr.contains("the redirect holds no ?code= (it has: state)"), "\(noCode.stderr)")
    }
}

extension FrictionTests {
    @Test("8: gh's hosts.yml under one stated rule: read when others can read it, refused when they can write it")
    func hostsFileRule() async throws {
        try await Workspace.withServer(files: [:]) { server, space in
            let host = "127.0.0.1:\(server.port)"
            try space.write("ghconfig/hosts.yml", "\(host):\n    user: monalisa\n    oauth_token: gho_readable12345\n")
            let file = space.url.appendingPathComponent("ghconfig/hosts.yml").path
            let environment = [
                "APIMACRO_GITHUB_URL": server.baseURL,
                "GH_CONFIG_DIR": space.url.appendingPathComponent("ghconfig").path,
            ]
            // gh writes it 0600 and reads it whatever its mode: a readable one is read, as gh does.
            #expect(chmod(file, 0o644) == 0)
            let readable = try await space.run("auth", "status", environment: environment)
            #expect(
                GitHubPowerUserTests.line("github", of: readable) == "credentials from gh: hosts.yml (\(file))",
                "\(readable.stdout)")
            // One another user may change could point the token anywhere: refused, as apimacro's own files are.
            #expect(chmod(file, 0o666) == 0)
            let writable = try await space.run("auth", "status", environment: environment)
            #expect(GitHubPowerUserTests.line("github", of: writable) != "credentials from gh: hosts.yml (\(file))")
            #expect(
                (writable.stdout + writable.stderr).contains("others can write to it (mode 0666)"),
                "\(writable.stdout)\(writable.stderr)")
        }
    }
}

extension FrictionTests {
    @Test("12: plugins show names plugin.py's public functions, as a macro calls them, without running it")
    func pluginFunctions() async throws {
        let space = try Workspace(files: [
            "plugins/weather/plugin.toml":
                "name = \"weather\"\ndescription = \"Weather\"\nbase_url = \"https://example.com\"\n\n"
                + "[endpoints.now]\npath = \"/now\"\n",
            "plugins/weather/plugin.py":
                "raise SystemExit('plugin.py must not run for plugins show')\n"
                + "def forecast(client, city: str, days: int = 3):\n    return client.now()\n\n"
                + "def _helper(client):\n    pass\n\nasync def later(client):\n    pass\n\n"
                + "def spread(client,\n           a, b):\n    pass\n",
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]
        let shown = try await space.run("plugins", "show", "weather", environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(
            shown.stdout.contains(
                "  functions:    weather.forecast(city: str, days: int = 3), weather.later(), weather.spread(...)\n"),
            "\(shown.stdout)")
        #expect(!shown.stdout.contains("_helper"))
    }
}

extension FrictionTests {
    @Test("11: --no-stale (and stale_if_error = false) fail when the server is down; revalidation stays")
    func noStale() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let example = ExampleTests.examples.appendingPathComponent("github-profile.py").path
        let arguments = ["run", "--format", "csv", example, "--login", "octocat"]
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL]
        let first = try await Binary.run(arguments, in: space.url, environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        // Revalidation still works: the second run asks with its validators and gets a 304.
        server.clearRequests()
        let revalidated = try await Binary.run(
            ["run", "--no-stale"] + arguments.dropFirst(), in: space.url, environment: environment)
        #expect(revalidated.status == 0 && revalidated.stdout == first.stdout, "\(revalidated.stderr)")
        #expect(server.requests.first { $0.path == "/users/octocat" }?.header("if-none-match") != nil)
        // The server down: the flag, the variable and config.toml (in the same APIMACRO_HOME, so the
        // same cache key) each make the run fail.
        let ways: [(arguments: [String], environment: [String: String])] = [
            (["run", "--no-stale"] + arguments.dropFirst(), environment),
            (arguments + ["--no-stale"], environment),
            (arguments, environment.merging(["APIMACRO_STALE_IF_ERROR": "off"]) { $1 }),
            (arguments, environment),
        ]
        let config = space.url.appendingPathComponent(".config/apimacro/config.toml")
        for (index, way) in ways.enumerated() {
            if index == ways.count - 1 { try space.write(".config/apimacro/config.toml", "stale_if_error = false\n") }
            server.inject(Array(repeating: .status(503), count: 4), path: "/users/octocat")
            let down = try await Binary.run(way.arguments, in: space.url, environment: way.environment)
            #expect(down.status == 1, "\(way): \(down.stderr)")
            #expect(!down.stderr.contains("using the cached copy"), "\(way): \(down.stderr)")
            #expect(down.stderr.contains("503"), "\(way): \(down.stderr)")
        }
        try FileManager.default.removeItem(at: config)
        // Without it, the same failure is answered from the cache, as before.
        server.inject(Array(repeating: .status(503), count: 4), path: "/users/octocat")
        let stale = try await Binary.run(arguments, in: space.url, environment: environment)
        #expect(stale.status == 0 && stale.stderr.contains("using the cached copy"), "\(stale.stderr)")
        let bad = try await Binary.run(
            arguments, in: space.url, environment: environment.merging(["APIMACRO_STALE_IF_ERROR": "maybe"]) { $1 })
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("APIMACRO_STALE_IF_ERROR: 'maybe' is not on or off"), "\(bad.stderr)")
        try await server.shutdown()
    }
}

extension FrictionTests {
    @Test("3: a token shorter than 8 characters: auth status and the first request say it is too short, once")
    func shortToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "two.py": "from apimacro import github\nfor _ in range(2):\n    print(github.user('octocat')['name'])\n"
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "Octo"]
        let warning =
            "apimacro: warning: APIMACRO_GITHUB_TOKEN is 4 characters long, too short to be a real token (a real "
            + "one is longer than 7); it is still redacted (errors, -v lines, recordings, batch output), so text "
            + "there that holds the same characters shows REDACTED\n"
        let status = try await space.run("auth", "status", environment: environment)
        #expect(status.status == 0)
        #expect(status.stderr == warning, "\(status.stderr)")
        let run = try await space.run("run", "two.py", environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        // Said once for the two requests.
        #expect(run.stdout == "The Octocat\nThe Octocat\n", "\(run.stdout)")
        #expect(run.stderr == warning, "\(run.stderr)")
        // Where apimacro redacts (a batch's output), the warning's REDACTED shows.
        let batch = try await space.run("batch", "two.py", environment: environment)
        #expect(batch.stdout.contains("The REDACTEDcat"), "\(batch.stdout)")
        // Shorter than 4: redacted where it stands alone, never inside a word (a batch's output).
        let tiny = environment.merging(["APIMACRO_GITHUB_TOKEN": "Oc"]) { $1 }
        try space.write("words.py", "print('Oc and Octocat, (Oc), Ocean')\n")
        let words = try await space.run("batch", "words.py", environment: tiny)
        #expect(words.stdout.contains("REDACTED and Octocat, (REDACTED), Ocean"), "\(words.stdout)")
        let tinyStatus = try await space.run("auth", "status", environment: tiny)
        #expect(
            tinyStatus.stderr
                == "apimacro: warning: APIMACRO_GITHUB_TOKEN is 2 characters long, too short to be a real token (a "
                + "real one is longer than 7); it is still redacted where it stands as a word of its own (errors, -v "
                + "lines, recordings, batch output), so such words there show REDACTED\n", "\(tinyStatus.stderr)")
        // A real-length token: nothing said.
        let long = try await space.run(
            "auth", "status", environment: environment.merging(["APIMACRO_GITHUB_TOKEN": "ghp_longEnough123"]) { $1 })
        #expect(long.stderr == "", "\(long.stderr)")
        try await server.shutdown()
    }
}

extension FrictionTests {
    @Test("13: the REPL fed from stdin names the input's line numbers in tracebacks and syntax errors")
    func replLineNumbers() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let script = "x = 1\ny = 2\n\ndef f():\n    return 1 / 0\n\nf()\n"
        let failed = try await space.run("repl", stdin: script)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("File \"<repl>\", line 7, in <module>"), "\(failed.stderr)")
        #expect(failed.stderr.contains("File \"<repl>\", line 5, in f"), "\(failed.stderr)")
        let syntax = try await space.run("repl", stdin: "x = 1\nprint(x)\n  bad indent\n")
        #expect(syntax.stderr.contains("File \"<repl>\", line 3"), "\(syntax.stderr)")
        #expect(syntax.stdout == "1\n", "\(syntax.stdout)")
    }
}

extension FrictionTests {
    @Test("12: a manifest's problems are reported all at once, not one per run")
    func manifestProblemsAtOnce() async throws {
        let space = try Workspace(files: [
            "plugins/broken/plugin.toml":
                "name = \"broken\"\ndescription = \"Broken\"\nbase_url = \"ftp://example.com\"\ncolour = \"red\"\n\n"
                + "[endpoints.one]\npath = \"one\"\n\n[endpoints.two]\nmethod = \"FETCH\"\npath = \"/two\"\n"
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]
        let listed = try await space.run("plugins", "list", environment: environment)
        #expect(listed.status == 1)
        for problem in [
            "4 problems:", "colour: unknown key;", "base_url: \"ftp://example.com\" is not an http(s) URL",
            "endpoints.one.path: \"one\" must start with /", "endpoints.two.method: unknown method \"FETCH\"",
        ] {
            #expect(listed.stdout.contains(problem), "\(problem) in:\n\(listed.stdout)")
        }
    }
}

extension FrictionTests {
    @Test("13: auth status --check words a refused credential alike for every client, without the request's URL")
    func checkMessagesAlike() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "bad-token-98765",
            "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph",
            "APIMACRO_INSTAGRAM_TOKEN": "wrong-token-12345",
            "APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4", "APIMACRO_SHORTENER_TOKEN": "wrong-bitly-token1",
        ]
        let result = try await space.run("auth", "status", "--check", environment: environment)
        #expect(result.status == 1)
        let failures = result.stdout.split(separator: "\n").filter { $0.contains("✗ check failed: ") }
        #expect(failures.count == 3, "\(result.stdout)")
        for line in failures {
            #expect(line.contains("✗ check failed: the credential was refused ("), "\(line)")
            #expect(!line.contains("http://"), "no URL: \(line)")
        }
        try await server.shutdown()
    }
}
