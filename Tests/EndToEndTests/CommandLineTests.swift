import Foundation
import TestSupport
import Testing

/// The command line as a new user expects it (issue 15): options anywhere, batch jobs
/// with arguments, strict settings, the test server's --env, map with every argument.
@Suite("the command line as a new user expects it")
struct CommandLineTests {
    /// A macro whose main() takes a user and prints it through apimacro.output.
    static let show = """
        import apimacro
        def main(user: str):
            apimacro.output([{"login": user}])
        """

    // MARK: options after the macro's name

    @Test("run options after the macro's name are apimacro's: --format, --timeout, -v")
    func optionsAfterMacro() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "show.py": Self.show,
            "busy.py": "def main(n: int):\n    while True:\n        pass\n",
            "fetch.py": "from apimacro import github\ndef main(login: str):\n    print(github.user(login)['login'])\n",
        ])
        defer { space.remove() }
        let csv = try await space.run("run", "show.py", "octocat", "--format", "csv")
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout == "login\noctocat\n")
        let equals = try await space.run("run", "show.py", "--format=ndjson", "octocat")
        #expect(equals.stdout == "{\"login\":\"octocat\"}\n", "\(equals.stderr)")
        let busy = try await space.run("run", "busy.py", "3", "--timeout", "1")
        #expect(busy.status == 1)
        #expect(busy.stderr.contains("busy.py ran longer than its --timeout of 1 s"), "\(busy.stderr)")
        let verbose = try await space.run(
            "run", "fetch.py", "octocat", "-v", "--no-cache", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        #expect(verbose.stdout == "octocat\n", "\(verbose.stderr)")
        #expect(verbose.stderr.contains("GET \(server.baseURL)/users/octocat 200"), "\(verbose.stderr)")
        try await server.shutdown()
    }

    @Test("an option is the macro's when its main() has a parameter of that name; -- ends apimacro's options")
    func macroOwnsItsOptions() async throws {
        let space = try Workspace(files: [
            "own.py":
                "def main(user: str, format: str = 'plain', cache: bool = True):\n    print(user, format, cache)\n",
            "rest.py": "def main(*rest):\n    print(list(rest))\n",
            "argv.py": "import sys\nprint(sys.argv[1:])\n",
        ])
        defer { space.remove() }
        // 'yaml' would be a bad --format for apimacro: the macro took it.
        let own = try await space.run("run", "own.py", "ada", "--format", "yaml", "--no-cache")
        #expect(own.status == 0, "\(own.stderr)")
        #expect(own.stdout == "ada yaml False\n")
        let rest = try await space.run("run", "rest.py", "--", "--format", "csv", "-v")
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(rest.stdout == "['--format', 'csv', '-v']\n")
        // A macro without main() reads sys.argv: apimacro's options are still apimacro's, the rest its own.
        let argv = try await space.run("run", "argv.py", "a", "--format", "json", "b", "--", "--offline")
        #expect(argv.stdout == "['a', 'b', '--', '--offline']\n", "\(argv.stderr)")
        // A bad run option after the macro is a usage error like one before it.
        let bad = try await space.run("run", "argv.py", "--timeout", "soon")
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("apimacro: "), "\(bad.stderr)")
    }

    // MARK: batch jobs files

    @Test("batch --file: shell-quoted jobs with arguments, comments, name=, JUnit and --output-dir")
    func jobsFile() async throws {
        let space = try Workspace(files: [
            "greet.py":
                "def main(who: str, *, times: int = 1):\n    for _ in range(times):\n        print('hello', who)\n",
            "jobs.txt": """
            # two jobs of one macro, told apart by name=
            name=ada greet.py 'Ada Lovelace' --times 2

            name=grace greet.py "Grace \\"Amazing\\" Hopper"   # a comment after a job
            greet.py plain
            """,
        ])
        defer { space.remove() }
        let result = try await space.run("batch", "--file", "jobs.txt", "--junit", "report.xml", "--output-dir", "out")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(
            rows.filter { ["ada", "grace", "greet"].contains($0.first ?? "") }.map { $0[0...1] } == [
                ["ada", "ok"], ["grace", "ok"], ["greet", "ok"],
            ])
        #expect(
            try String(contentsOf: space.url.appendingPathComponent("out/ada.out"), encoding: .utf8)
                == "hello Ada Lovelace\nhello Ada Lovelace\n")
        #expect(
            try String(contentsOf: space.url.appendingPathComponent("out/grace.out"), encoding: .utf8)
                == "hello Grace \"Amazing\" Hopper\n")
        #expect(
            try String(contentsOf: space.url.appendingPathComponent("out/greet.out"), encoding: .utf8)
                == "hello plain\n")
        let xml = try Data(contentsOf: space.url.appendingPathComponent("report.xml"))
        #expect(JUnitSchemaCheck.problems(in: xml) == [])
        #expect(String(decoding: xml, as: UTF8.self).contains(#"<testcase name="grace" classname="apimacro.batch""#))

        let piped = try await space.run("batch", "--file", "-", stdin: "greet.py stdin\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout.contains("hello stdin"), "\(piped.stdout)")
    }

    @Test(
        "a bad jobs line is a usage error naming the file and line, before anything runs",
        arguments: [
            ("touch.py\ngreet.py 'unclosed\n", "jobs.txt:2: unbalanced '"),
            ("touch.py\n\nnosuch --x 1\n", "jobs.txt:3: no macro named 'nosuch'"),
            ("name=a touch.py\nname=a greet.py x\n", "jobs.txt:2: the name 'a' is already used by jobs.txt:1"),
            ("name=a/b touch.py\n", "jobs.txt:1: name=a/b is not a usable name"),
        ])
    func badJobsLine(jobs: String, message: String) async throws {
        let space = try Workspace(files: [
            "touch.py": pythonTouch("ran"), "greet.py": "def main(who):\n    print(who)\n", "jobs.txt": jobs,
        ])
        defer { space.remove() }
        let result = try await space.run("batch", "--file", "jobs.txt")
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("apimacro: \(message)"), "\(result.stderr)")
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "one line: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran").path), "nothing ran")
    }

    @Test("batch 'MACRO ARGS' says to use a jobs file")
    func batchWithArgumentsInOneWord() async throws {
        let space = try Workspace(files: ["macros/stars.py": "def main(user):\n    print(user)\n"])
        defer { space.remove() }
        let result = try await space.run("batch", "stars octocat")
        #expect(result.status == 2)
        #expect(result.stderr.contains("apimacro batch --file jobs.txt"), "\(result.stderr)")
    }

    // MARK: strict settings

    @Test(
        "a bad setting stops the command with one line naming its source, the key and the accepted values",
        arguments: [
            (
                ["APIMACRO_FORMAT": "yaml"], nil, ["run", "x.py"],
                "APIMACRO_FORMAT: 'yaml' is not an output format; accepted: table, json, csv, ndjson"
            ),
            (
                [:], nil, ["run", "--format", "jsn", "x.py"],
                "--format: 'jsn' is not an output format; accepted: table, json, csv, ndjson; did you mean 'json'?"
            ),
            (
                [:], nil, ["run", "x.py", "--format", "tabel"],
                "--format: 'tabel' is not an output format; accepted: table, json, csv, ndjson; did you mean 'table'?"
            ),
            (
                ["APIMACRO_MAX_WAIT": "abc"], nil, ["run", "x.py"],
                "APIMACRO_MAX_WAIT: 'abc' is not a number of seconds"
            ),
            (
                ["APIMACRO_REQUEST_TIMEOUT": "0"], nil, ["macros", "list"],
                "APIMACRO_REQUEST_TIMEOUT: '0' is not a number of seconds; accepted: a number above 0"
            ),
            (
                ["APIMACRO_GITHUB_URL": "api.github.com"], nil, ["run", "x.py"],
                "APIMACRO_GITHUB_URL: 'api.github.com' is not an http:// or https:// URL"
            ),
            ([:], "format = \"yaml\"\n", ["run", "x.py"], "config.toml: format: 'yaml' is not an output format"),
            ([:], "fromat = \"csv\"\n", ["run", "x.py"], "config.toml: unknown key 'fromat'; did you mean 'format'?"),
            (
                [:], "[github]\nulr = \"http://x\"\n", ["auth", "status"],
                "config.toml: unknown key 'ulr' in [github]; did you mean 'url'?"
            ),
            (
                [:], "[githb]\nurl = \"http://x\"\n", ["plugins", "list"],
                "config.toml: unknown table [githb]: no client or plugin of that name; did you mean 'github'?"
            ),
            ([:], "max_wait = -1\n", ["cache", "info"], "config.toml: max_wait: '-1' is not a number of seconds"),
            // Issue 24: each of these was accepted, then trapped (SIGILL) where it became an integer.
            (
                [:], nil, ["run", "--timeout", "1e300", "x.py"],
                "--timeout: 1e+300 is not a number of seconds; accepted: a number above 0 and at most 1000000000"
            ),
            (
                ["APIMACRO_SHARED_STATE": "redis://127.0.0.1:9/0", "APIMACRO_SHARED_STATE_TIMEOUT": "1e300"], nil,
                ["run", "x.py"], "APIMACRO_SHARED_STATE_TIMEOUT: '1e300' is not a number of seconds"
            ),
            (
                ["APIMACRO_SHARED_STATE": "redis://127.0.0.1:9/0", "APIMACRO_MAX_RATE": "1e-300"], nil,
                ["run", "x.py"], "APIMACRO_MAX_RATE: '1e-300' is not a number of requests per second"
            ),
            (
                ["APIMACRO_MAX_WAIT": "1e300"], nil, ["run", "x.py"],
                "APIMACRO_MAX_WAIT: '1e300' is not a number of seconds"
            ),
            (
                [:], "max_rate = 1e-300\n", ["run", "x.py"],
                "config.toml: max_rate: '1e-300' is not a number of requests per second"
            ),
            (
                [:], "[shared]\ntimeout = 1e300\n", ["run", "x.py"],
                "config.toml: shared.timeout: '1e+300' is not a number of seconds"
            ),
            // Issue 24: a date, a space and a digit aborted every command inside toml++.
            ([:], "a = 1979-05-27 5\n", ["run", "x.py"], "config.toml is not valid TOML: line 1, column 16"),
            // Issue 27: a value of the wrong type, a plugin folder that is not one, a string without quotes.
            (
                [:], "plugins = \"/nonexistent\"\n", ["plugins", "list"],
                "config.toml: plugins is a string; it takes a list of strings, such as: plugins = [\"/nonexistent\"]"
            ),
            (
                [:], "plugins = [\"/nonexistent\"]\n", ["run", "x.py"],
                "config.toml: plugins: /nonexistent is not a folder"
            ),
            (
                [:], "max_wait = \"30\"\n", ["run", "x.py"],
                "config.toml: max_wait is a string; it takes a number, such as: max_wait = 30"
            ),
            (
                [:], "format = csv\n", ["run", "x.py"],
                "config.toml is not valid TOML: line 1, column 10: expected a value (a \"string\", a number, true, "
                    + "false, a date, [an array] or {an inline table}), found csv; text goes in quotes: \"csv\""
            ),
        ] as [([String: String], String?, [String], String)])
    func badSetting(environment: [String: String], config: String?, arguments: [String], message: String) async throws {
        var files = ["x.py": "print('ran')\n"]
        if let config { files["home/config.toml"] = config }
        let space = try Workspace(files: files)
        defer { space.remove() }
        var variables = environment
        variables["APIMACRO_HOME"] = space.url.appendingPathComponent("home").path
        let result = try await Binary.run(arguments, in: space.url, environment: variables)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing ran: \(result.stdout)")
        #expect(result.stderr.hasPrefix("apimacro: "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "one line: \(result.stderr)")
        if config != nil {
            #expect(
                result.stderr.contains(space.url.appendingPathComponent("home/config.toml").path),
                "names the file: \(result.stderr)")
        }
    }

    @Test(
        "the request timeout is a setting: --request-timeout, APIMACRO_REQUEST_TIMEOUT, request_timeout in config.toml")
    func requestTimeout() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "slow.py": "from apimacro import github\ngithub.get('/slow', params={'ms': 30000})\n",
            "home/config.toml": "request_timeout = 1\n",
        ])
        defer { space.remove() }
        let base = ["APIMACRO_GITHUB_URL": server.baseURL]
        let home = ["APIMACRO_HOME": space.url.appendingPathComponent("home").path]
        // Each way, the 30 s answer is given up on: the client raises Timeout (the default, 30 s, would wait for it).
        for (arguments, environment) in [
            (["run", "--no-cache", "--request-timeout", "1", "slow.py"], base),
            (["run", "--no-cache", "slow.py"], base.merging(["APIMACRO_REQUEST_TIMEOUT": "1"]) { $1 }),
            (["run", "--no-cache", "slow.py"], base.merging(home) { $1 }),
        ] {
            let result = try await Binary.run(arguments, in: space.url, environment: environment)
            #expect(result.status == 1, "\(arguments) \(environment): \(result.stderr)")
            #expect(result.stderr.contains("apimacro.Timeout"), "\(arguments) \(environment): \(result.stderr)")
        }
        try await server.shutdown()
    }

    // MARK: github.map

    @Test("map(github.get, ...) calls the same route as github.get: params and headers arrive, natively")
    func mapKeepsEveryArgument() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "map.py": """
            import functools, _apimacro
            from apimacro import github, map
            def threads(*args):
                raise AssertionError("ran on Python threads, not natively")
            _apimacro._map_threads = threads
            get = functools.partial(github.get, params={'per_page': 5, 'q': 'a b'}, headers={'X-Test': 'yes'})
            for echo in map(get, ['/echo/one', '/echo/two']):
                print(echo['path'], echo['query'], echo['headers'].get('x-test'))
            print([e['path'] for e in map(github.get, ['/echo/three'])])
            """
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "--no-cache", "map.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                /echo/one {'per_page': '5', 'q': 'a b'} yes
                /echo/two {'per_page': '5', 'q': 'a b'} yes
                ['/echo/three']

                """)
    }

    // MARK: the test server

    @Test("apimacro-testserver --env prints export lines and serves in the background until killed")
    func testServerEnv() async throws {
        let space = try Workspace(files: [
            "hello.py": "from apimacro import github\nprint(github.user('octocat')['login'])\n",
            "short.py": "from apimacro import shortener\nprint(shortener.shorten('https://google.com/')['backend'])\n",
        ])
        defer { space.remove() }
        let pipe = Pipe()
        let process = try Spawned(
            Binary.url.deletingLastPathComponent().appendingPathComponent("apimacro-testserver").path, ["--env"],
            environment: ProcessInfo.processInfo.environment,
            stdout: .descriptor(pipe.fileHandleForWriting.fileDescriptor))
        try pipe.fileHandleForWriting.close()
        // --env returns once the server is up: reading to the end is what `eval "$(...)"` does.
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let exit = await process.exit()
        #expect(exit.status == 0 && !exit.signalled)
        var variables: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst(7).split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { variables[pair[0]] = pair[1] }
        }
        let pid = try #require(variables["APIMACRO_TESTSERVER_PID"].flatMap { Int32($0) }, "\(output)")
        defer { kill(pid, SIGTERM) }
        #expect(variables["APIMACRO_GITHUB_URL"]?.hasPrefix("http://127.0.0.1:") == true, "\(output)")
        #expect(variables["APIMACRO_INSTAGRAM_URL"]?.hasSuffix("/instagram/graph") == true)
        // The shortener at Bitly, its default backend (issue 36), with the server's token.
        #expect(variables["APIMACRO_SHORTENER_URL"]?.hasSuffix("/bitly/v4") == true, "\(output)")
        #expect(variables["APIMACRO_SHORTENER_TOKEN"] == "bitly-test-token", "\(output)")
        #expect(output.contains("kill $APIMACRO_TESTSERVER_PID"))
        // The exports work in a shell, and the server answers after --env has returned.
        let result = try await space.run("run", "--no-cache", "hello.py", environment: variables)
        #expect(result.stdout == "octocat\n", "\(result.stderr)")
        let short = try await space.run("run", "short.py", environment: variables)
        #expect(short.stdout == "bitly\n", "\(short.stderr)")
    }

    // MARK: smaller things

    @Test("a mistyped command says which one was meant")
    func mistypedCommand() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run("rnu", "x.py")
        #expect(result.status == 2)
        #expect(result.stderr == "apimacro: unknown command 'rnu'; did you mean 'run'? (see 'apimacro --help')\n")
        let other = try await space.run("zzz")
        #expect(other.status == 2)
        #expect(other.stderr.contains("the commands are run, batch, repl"), "\(other.stderr)")
    }

    @Test("a failing macro's traceback shows only the macro's frames, as python script.py would")
    func macroFramesOnly() async throws {
        let space = try Workspace(files: [
            "fails.py": "def helper():\n    raise ValueError('boom')\n\ndef main(n: int = 1):\n    helper()\n",
            "top.py": "import apimacro\ndef f(x):\n    raise KeyError(x)\napimacro.map(f, [1])\n",
        ])
        defer { space.remove() }
        let result = try await space.run("run", "fails.py")
        #expect(result.status == 1)
        let path = space.url.appendingPathComponent("fails.py").standardizedFileURL.path
        #expect(
            result.stderr == """
                Traceback (most recent call last):
                  File "\(path)", line 5, in main
                    helper()
                  File "\(path)", line 2, in helper
                    raise ValueError('boom')
                ValueError: boom

                """, "\(result.stderr)")
        let top = try await space.run("run", "top.py")
        #expect(top.status == 1)
        #expect(!top.stderr.contains("<apimacro>") && !top.stderr.contains("<_apimacro>"), "\(top.stderr)")
        #expect(top.stderr.hasSuffix("KeyError: 1\n"), "\(top.stderr)")
    }

    @Test("help: logout mentions plugins; batch and repl help do not break mid-sentence")
    func helpTexts() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let logout = try await space.run("logout", "--help")
        #expect(logout.stdout.contains("plugin"), "\(logout.stdout)")
        for command in ["batch", "repl", "run"] {
            let help = try await space.run(command, "--help")
            #expect(help.status == 0)
            // Every line of the discussion ends a sentence or is followed by its continuation,
            // never a line of one or two words left over from a hard break.
            let lines = help.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            for line in lines where !line.isEmpty && !line.hasPrefix("-") {
                #expect(
                    line.split(separator: " ").count > 2 || line.hasSuffix(":") || line.hasSuffix("."),
                    "\(command): '\(line)'")
            }
        }
    }

    @Test("shell completion completes macro names for run and plugin names for plugins show")
    func completion() async throws {
        let space = try Workspace(files: [
            "macros/stars.py": "print(1)\n", "macros/starlight.py": "print(2)\n", "local.py": "",
        ])
        defer { space.remove() }
        for shell in ["bash", "zsh", "fish"] {
            let script = try await space.run("--generate-completion-script", shell)
            #expect(script.status == 0)
            #expect(script.stdout.contains("---completion"), "\(shell): the script calls back into apimacro")
        }
        // What the generated bash script runs for `apimacro run sta<TAB>` and `apimacro plugins show open<TAB>`:
        // the argument's id, the word's index and the cursor's, then the words typed.
        let macros = try await space.run(
            "---completion", "run", "--", "positional@0", "2", "3", "apimacro", "run", "sta")
        #expect(
            macros.stdout.split(separator: "\n").map(String.init) == ["starlight", "stars"],
            "\(macros.stdout)\(macros.stderr)")
        let files = try await space.run("---completion", "run", "--", "positional@0", "2", "2", "apimacro", "run", "lo")
        #expect(files.stdout.split(separator: "\n").map(String.init) == ["local.py"], "\(files.stdout)\(files.stderr)")
        let plugins = try await space.run(
            "---completion", "plugins", "show", "--", "positional@0", "3", "4", "apimacro", "plugins", "show", "open")
        #expect(
            plugins.stdout.split(separator: "\n").map(String.init) == ["openweather"],
            "\(plugins.stdout)\(plugins.stderr)")
    }
}
