import Foundation
import TestSupport
import Testing

/// The secrets audit (issue 8): every example and plugin example, error scenarios, a REPL session
/// and the informational commands run with recognisable fake secrets in every credential slot;
/// nothing they print or leave behind — stdout, stderr, `-v` lines, HAR recordings, the HTTP
/// cache database, the JUnit report, per-macro output files, tracebacks, REPL history — may
/// hold one.
///
/// The stores that must hold them are owner-only.
@Suite("secrets audit", .serialized)
struct SecretsAuditTests {
    /// Secrets the loopback server accepts (so success paths run) or refuses (so error paths run).
    static let secrets = [
        "ghp_AuditGitHubToken0123456789", "ig-token-1", "AIza-test-key", "ow-test-key", "fsq-token-1",
        "ig-refused-audit-secret", "audit-basic-password",
    ]

    static let repository = ExampleTests.examples.deletingLastPathComponent()

    /// Macros that try to leak: a traceback quoting the token, an HTTP error whose URL carries a
    /// key, basic auth in an error, a 401 with a refused token.
    static let scenarios = [
        "leak_traceback.py": """
        import os
        raise RuntimeError("the token is " + os.environ["APIMACRO_GITHUB_TOKEN"])
        """,
        "leak_url.py": """
        import os, apimacro
        base = os.environ["APIMACRO_GITHUB_URL"]
        apimacro.get(base + "/status/500?key=" + os.environ["APIMACRO_SHORTENER_KEY"] + "&appid=ow-test-key")
        """,
        "leak_basic.py": """
        import os, apimacro
        base = os.environ["APIMACRO_GITHUB_URL"]
        apimacro.get(base + "/status/403", auth=("user", "audit-basic-password"))
        """,
        "leak_refused.py": """
        import apimacro
        from apimacro import instagram, github
        print(github.user("octocat")["login"])
        instagram.get("users/self", params={"access_token": "ig-refused-audit-secret"})
        """,
        "leak_plugins.py": """
        import apimacro
        print(list(apimacro.client("openweather").find(q="Altstadt", type="like")))
        print(list(apimacro.client("foursquare").search_venues(near="Brooklyn, NY", limit=2)))
        apimacro.client("openweather").find(q="")
        """,
    ]

    static func environment(_ server: TestServer) -> [String: String] {
        ExampleTests.environment(server).merging([
            "APIMACRO_GITHUB_TOKEN": "ghp_AuditGitHubToken0123456789",
            "APIMACRO_OPENWEATHER_URL": server.baseURL + "/openweather/data/2.5",
            "APIMACRO_OPENWEATHER_KEY": "ow-test-key",
            "APIMACRO_FOURSQUARE_URL": server.baseURL + "/foursquare/v2",
            "APIMACRO_HACKERNEWS_URL": server.baseURL + "/hn/api/v1",
        ]) { $1 }
    }

    @Test("no secret in any output, log, recording, cache, report or traceback; stores are owner-only")
    func audit() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: Self.scenarios)
        defer { space.remove() }
        var environment = Self.environment(server)
        var results: [(String, RunResult)] = []

        // A stored login: foursquare's token goes through `login`, then `login --redirect-url` with
        // the state the first half saved, into credentials.json.
        var loginEnvironment = environment
        loginEnvironment["APIMACRO_FOURSQUARE_CLIENT_ID"] = "audit-client"
        loginEnvironment["APIMACRO_FOURSQUARE_REDIRECT_URI"] = "http://127.0.0.1:8765/callback"
        let start = try await space.run("login", "foursquare", environment: loginEnvironment)
        results.append(("login start", start))
        let state = try #require(
            start.stdout.split(separator: "\n").first { $0.hasPrefix("http") }
                .flatMap { URLComponents(string: String($0))?.queryItems?.first { $0.name == "state" }?.value },
            "\(start.stdout)\(start.stderr)")
        let login = try await space.run(
            "login", "foursquare", "--redirect-url",
            "http://127.0.0.1:8765/callback#access_token=fsq-token-1&state=\(state)",
            environment: loginEnvironment)
        #expect(login.status == 0, "\(login.stderr)")
        results.append(("login", login))

        let macros =
            ExampleTests.offlineExamples.map { ExampleTests.examples.appendingPathComponent($0).path }
            + ExampleReplayTests.pluginExamples.map { Self.repository.appendingPathComponent($0).path }
            + Self.scenarios.keys.sorted().map { space.url.appendingPathComponent($0).path }
        let batch = try await Binary.run(
            [
                "batch", "-v", "-j", "2", "--record", space.url.appendingPathComponent("run.har").path,
                "--junit", space.url.appendingPathComponent("junit.xml").path,
                "--output-dir", space.url.appendingPathComponent("out").path,
            ] + macros,
            in: space.url, environment: environment, limit: 600)
        results.append(("batch", batch))
        #expect(batch.status == 1, "the leak scenarios fail, so the batch does: \(batch.stdout)")

        // Each example once more in the foreground with -v, so its traceback and log go to our stderr.
        for macro in macros {
            results.append(
                (macro, try await Binary.run(["run", "-v", macro], in: space.url, environment: environment)))
        }

        // A REPL session fed from stdin, with an exception quoting a key.
        environment["APIMACRO_HOME"] = space.url.appendingPathComponent(".config/apimacro").path
        let repl = try await space.run(
            "repl", "-v",
            environment: environment,
            stdin: """
                github.user("octocat")["login"]
                import os
                raise ValueError(os.environ["APIMACRO_SHORTENER_KEY"])
                apimacro.get(os.environ["APIMACRO_GITHUB_URL"] + "/status/404?access_token=ig-token-1")
                :run leak_traceback.py
                os.environ["APIMACRO_GITHUB_TOKEN"]

                """)
        results.append(("repl", repl))
        for command in [
            ["auth", "status"], ["plugins", "list"], ["cache", "info"], ["plugins", "show", "foursquare"],
        ] {
            results.append(
                (command.joined(separator: " "), try await Binary.run(command, in: space.url, environment: environment))
            )
        }
        try await server.shutdown()

        // The scenarios really produced the errors and logs being audited.
        let everything = results.map { $0.1.stdout + $0.1.stderr }.joined()
        #expect(everything.contains("REDACTED"))
        #expect(everything.contains("Traceback"))
        #expect(everything.contains(" 500 "), "-v lines are present")

        for (name, result) in results {
            for secret in Self.secrets {
                #expect(!result.stdout.contains(secret), "\(name) printed \(secret) on stdout")
                #expect(!result.stderr.contains(secret), "\(name) printed \(secret) on stderr")
            }
        }

        // Every file left behind, except the credential store whose job is to hold them.
        let store = space.url.appendingPathComponent(".config/apimacro/credentials.json")
        var audited: [String] = []
        let files = FileManager.default.enumerator(at: space.url, includingPropertiesForKeys: [.isRegularFileKey])
        while let file = files?.nextObject() as? URL {
            // The inputs (the scenario macros, the runner's stdin file) hold secrets on purpose.
            guard (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                file.resolvingSymlinksInPath().path != store.resolvingSymlinksInPath().path,
                Self.scenarios[file.lastPathComponent] == nil, !file.lastPathComponent.hasPrefix(".stdin-")
            else { continue }
            let bytes = try Data(contentsOf: file)
            audited.append(file.lastPathComponent)
            for secret in Self.secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file.path) holds \(secret)")
            }
        }
        #expect(audited.contains("junit.xml"))
        #expect(audited.contains { $0.hasSuffix(".har") })
        #expect(audited.contains { $0.hasSuffix(".sqlite") || $0.hasSuffix(".db") }, "the cache database: \(audited)")

        // The store holds the login, owner-only, in an owner-only folder; so does the cache.
        #expect(String(decoding: try Data(contentsOf: store), as: UTF8.self).contains("fsq-token-1"))
        #expect(try Self.mode(store) == 0o600)
        #expect(try Self.mode(store.deletingLastPathComponent()) == 0o700)
        let cache = space.url.appendingPathComponent(".cache/apimacro")
        #expect(try Self.mode(cache) == 0o700)
        for name in try FileManager.default.subpathsOfDirectory(atPath: cache.path) {
            let item = cache.appendingPathComponent(name)
            let folder = (try? item.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true
            #expect(try Self.mode(item) == (folder ? 0o700 : 0o600), "\(name) in the cache folder")
        }
    }

    static func mode(_ url: URL) throws -> Int {
        ((try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? 0)
            & 0o777
    }
}
