import Foundation
import TestSupport
import Testing

/// Seeing the exchange (issue 40): `-vv` shows each request and response in full, redacted by
/// the credential rule; `api --dry-run` shows the request and sends nothing; `api --curl` prints
/// a curl command line that sends the same request with every secret as a `$VARIABLE`.
@Suite("Verbose exchanges, --dry-run, --curl")
struct VerboseExchangeTests {
    static let token = "ghp_fullexchange0123456789"

    static func environment(_ server: TestServer) -> [String: String] {
        ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token]
    }

    @Test("-vv: headers and body of request and response, never the token; -v stays one line")
    func fullExchange() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let full = try await space.run(
            "api", "github", "/echo/x", "-f", "note=hello", "-vv", environment: Self.environment(server))
        #expect(full.status == 0, "\(full.stderr)")
        #expect(full.stderr.contains("> POST \(server.baseURL)/echo/x"), "\(full.stderr)")
        #expect(full.stderr.contains("> Authorization: Bearer REDACTED"), "\(full.stderr)")
        #expect(full.stderr.contains("apimacro: {\"note\":\"hello\"}\n"), "\(full.stderr)")
        #expect(full.stderr.contains("< 200 OK"), "\(full.stderr)")
        #expect(full.stderr.lowercased().contains("< content-type: application/json"), "\(full.stderr)")
        // The echo holds the token: the response body shown has it redacted.
        #expect(full.stderr.contains("\"method\""), "\(full.stderr)")
        #expect(!full.stderr.contains(Self.token))
        #expect(!full.stdout.contains(Self.token))
        let one = try await space.run(
            "api", "github", "/echo/x", "-f", "note=hello", "-v", environment: Self.environment(server))
        #expect(one.status == 0, "\(one.stderr)")
        let lines = one.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(one.stderr)")
        #expect(!one.stderr.contains("Authorization"))
        try await server.shutdown()
    }

    @Test("-vv in run: basic auth's password and base64 never shown; a long body is cut at 4 KiB")
    func basicAndCap() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let password = "pw-secret-basic-42"
        let base64 = Data("someone:\(password)".utf8).base64EncodedString()
        let long = String(repeating: "abcdefgh", count: 1000)
        try space.write(
            "m.py",
            """
            import apimacro
            def main():
                apimacro.request("POST", "\(server.baseURL)/echo/b", auth=("someone", "\(password)"), data="\(long)")
            """)
        let result = try await space.run("run", "-vv", "m.py")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("> Authorization: Basic REDACTED"), "\(result.stderr.prefix(2000))")
        #expect(!result.stderr.contains(password))
        #expect(!result.stderr.contains(base64))
        #expect(result.stderr.contains(" more bytes"), "\(result.stderr.suffix(500))")
        #expect(!result.stderr.contains(long), "the body is cut")
        try await server.shutdown()
    }

    @Test("-vv is passed to batch's jobs")
    func batchForwards() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        try space.write(
            "m.py",
            """
            import apimacro
            def main():
                apimacro.github.get("/users/octocat")
            """)
        let result = try await space.run("batch", "-vv", "m.py", environment: Self.environment(server))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let all = result.stdout + result.stderr
        #expect(all.contains("> Authorization: Bearer REDACTED"), "\(all)")
        #expect(!all.contains(Self.token))
        try await server.shutdown()
    }

    @Test("api --dry-run: the request shown, redacted, and nothing sent")
    func dryRun() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run(
            "api", "github", "/echo/d", "-f", "title=hi", "-H", "X-Extra: 1", "--dry-run",
            environment: Self.environment(server))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("POST \(server.baseURL)/echo/d\n"), "\(result.stdout)")
        #expect(result.stdout.contains("Authorization: Bearer REDACTED"), "\(result.stdout)")
        #expect(result.stdout.contains("X-Extra: 1"))
        #expect(result.stdout.contains("{\"title\":\"hi\"}"))
        #expect(!result.stdout.contains(Self.token))
        #expect(server.requests.isEmpty)
        try await server.shutdown()
    }

    @Test("api --curl: runs with curl to the same answer; the token only as $APIMACRO_GITHUB_TOKEN")
    func curlLine() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let printed = try await space.run(
            "api", "github", "/users/octocat", "--curl", environment: Self.environment(server))
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.contains("-H \"Authorization: Bearer $APIMACRO_GITHUB_TOKEN\""), "\(printed.stdout)")
        #expect(!printed.stdout.contains(Self.token))
        #expect(server.requests.isEmpty)
        let direct = try await space.run("api", "github", "/users/octocat", environment: Self.environment(server))
        let curled = try await Self.shell(printed.stdout, environment: ["APIMACRO_GITHUB_TOKEN": Self.token])
        #expect(curled.status == 0, "\(curled.stderr)")
        #expect(curled.stdout == direct.stdout)
        let sent = try #require(server.requests.last)
        #expect(sent.header("authorization") == "Bearer \(Self.token)")
        #expect(sent.header("x-github-api-version") == "2022-11-28")
        #expect(sent.header("user-agent")?.hasPrefix("apimacro/") == true, "as apimacro sends it")
        // A POST with a JSON body, the same fields the server sees.
        let post = try await space.run(
            "api", "github", "/echo/p", "-f", "it's=a \"quote\" $HOME", "--curl", environment: Self.environment(server))
        let echoed = try await Self.shell(post.stdout, environment: ["APIMACRO_GITHUB_TOKEN": Self.token])
        #expect(echoed.status == 0, "\(echoed.stderr)")
        let echo = try JSONSerialization.jsonObject(with: Data(echoed.stdout.utf8)) as? [String: Any]
        #expect(echo?["method"] as? String == "POST")
        #expect((echo?["json"] as? [String: Any])?["it's"] as? String == "a \"quote\" $HOME", "\(echoed.stdout)")
        try await server.shutdown()
    }

    @Test("api --curl with a stored login: $TOKEN and a comment saying where it is kept")
    func storedLogin() async throws {
        let manifest =
            "name = \"keyed\"\ndescription = \"keyed\"\nbase_url = \"https://example.com\"\n"
            + "auth = { kind = \"header_key\", header = \"X-Key\", env = \"KEYED_KEY\" }\n"
            + "[endpoints.x]\npath = \"/x\"\n"
        let space = try Workspace(files: ["plugins/keyed/plugin.toml": manifest])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = ["APIMACRO_HOME": home.path, "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]
        let login = try await space.run("login", "keyed", environment: env, stdin: "stored-key-98765\n")
        #expect(login.status == 0, "\(login.stderr)")
        let printed = try await space.run("api", "keyed", "/x", "--curl", environment: env)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.contains("-H \"X-Key: $TOKEN\""), "\(printed.stdout)")
        #expect(printed.stdout.contains("# TOKEN: "), "\(printed.stdout)")
        #expect(printed.stdout.contains(home.appendingPathComponent("credentials.json").path), "\(printed.stdout)")
        #expect(!printed.stdout.contains("stored-key-98765"))
        let dry = try await space.run("api", "keyed", "/x", "--dry-run", environment: env)
        #expect(dry.stdout.contains("X-Key: REDACTED"), "\(dry.stdout)")
        #expect(!dry.stdout.contains("stored-key-98765"))
    }

    /// Runs `script` with `sh` (the variables exported), as a user pastes it.
    static func shell(_ script: String, environment: [String: String]) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }
}
