import Foundation
import TestSupport
import Testing

/// The secrets audit extended to stored logins, `--output-dir` files and the JUnit report, and
/// the REPL history after a login (issue 18, items 9 and 12): a key saved by `apimacro login` is
/// a secret like one from the environment.
///
/// A negative control proves the scan sees a planted secret.
@Suite("secrets audit: stored logins, --output-dir, JUnit, REPL history", .serialized)
struct StoredSecretsAuditTests {
    static let shortenerKey = "stored-shortener-key-42"
    static let openweatherKey = "stored-openweather-key-43"
    static let environmentToken = "ghp_AuditStoredRunToken9876"
    static let secrets = [shortenerKey, openweatherKey, environmentToken]

    /// A macro that puts every stored key in a `-v` line, on stdout and in a traceback.
    static let leakStored = """
        import json, os, apimacro
        stored = json.load(open(os.path.join(os.environ["APIMACRO_HOME"], "credentials.json")))
        keys = sorted(entry["token"] for entry in stored.values())
        print("stdout has", os.environ["APIMACRO_GITHUB_TOKEN"], *keys)
        try:
            apimacro.get(os.environ["APIMACRO_GITHUB_URL"] + "/status/404?q=" + keys[0] + "&r=" + keys[1])
        except apimacro.APIError as error:
            print("caught", error)
        raise RuntimeError("the stored keys are " + " ".join(keys))

        """

    /// The secrets found in `text` (the scan every check below uses).
    static func leaks(in text: String) -> [String] {
        secrets.filter { text.contains($0) }
    }

    /// The files under `folder` holding a secret, by name.
    static func leakingFiles(under folder: URL) throws -> [String] {
        var found: [String] = []
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let file = files?.nextObject() as? URL {
            guard (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            if !leaks(in: text).isEmpty { found.append(file.lastPathComponent) }
        }
        return found
    }

    func environment(_ server: TestServer, home: URL) -> [String: String] {
        [
            "APIMACRO_HOME": home.path, "APIMACRO_GITHUB_URL": server.baseURL,
            "APIMACRO_GITHUB_TOKEN": Self.environmentToken,
            "APIMACRO_SHORTENER_URL": server.baseURL + "/urlshortener/v1",
            "APIMACRO_OPENWEATHER_URL": server.baseURL + "/openweather/data/2.5",
        ]
    }

    @Test("the scan finds a planted secret (negative control)")
    func negativeControl() throws {
        #expect(Self.leaks(in: "a line with \(Self.shortenerKey) in it") == [Self.shortenerKey])
        let space = try Workspace(files: ["out/planted.out": "x \(Self.openweatherKey) y", "out/clean.out": "nothing"])
        defer { space.remove() }
        #expect(try Self.leakingFiles(under: space.url) == ["planted.out"])
    }

    @Test("keys stored by apimacro login never show in -v lines, tracebacks, batch output, --output-dir files or JUnit")
    func storedLoginsAreRedacted() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["leak_stored.py": Self.leakStored])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = environment(server, home: home)
        let shortener = try await space.run("login", "shortener", environment: env, stdin: Self.shortenerKey + "\n")
        #expect(shortener.status == 0, "\(shortener.stderr)")
        let openweather = try await space.run(
            "login", "openweather", environment: env, stdin: Self.openweatherKey + "\n")
        #expect(openweather.status == 0, "\(openweather.stderr)")

        let run = try await space.run("run", "-v", "leak_stored.py", environment: env)
        #expect(run.status == 1)
        #expect(run.stderr.contains("Traceback") && run.stderr.contains(" 404 "), "the scenario ran: \(run.stderr)")
        #expect(run.stderr.contains("the stored keys are REDACTED REDACTED"), "\(run.stderr)")
        #expect(Self.leaks(in: run.stderr).isEmpty, "run -v stderr: \(run.stderr)")

        let junit = space.url.appendingPathComponent("junit.xml")
        let outputs = space.url.appendingPathComponent("outputs")
        let batch = try await space.run(
            "batch", "-v", "--junit", junit.path, "--output-dir", outputs.path, "leak_stored.py", environment: env)
        #expect(batch.status == 1)
        #expect(Self.leaks(in: batch.stdout + batch.stderr).isEmpty, "batch: \(batch.stdout)\(batch.stderr)")
        let report = try String(contentsOf: junit, encoding: .utf8)
        #expect(report.contains("REDACTED"))
        #expect(Self.leaks(in: report).isEmpty, "junit: \(report)")
        let out = try String(contentsOf: outputs.appendingPathComponent("leak_stored.out"), encoding: .utf8)
        #expect(out.contains("stdout has REDACTED REDACTED REDACTED"), "\(out)")
        #expect(try Self.leakingFiles(under: outputs).isEmpty)
        for name in ["leak_stored.out", "leak_stored.err"] {
            #expect(try SecretsAuditTests.mode(outputs.appendingPathComponent(name)) == 0o600, "\(name)")
        }
        try await server.shutdown()
    }

    @Test("a pasted instagram redirect is kept out of the REPL history; logout removes history lines holding the token")
    func replHistory() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = [
            "APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/v1",
            "APIMACRO_INSTAGRAM_CLIENT_ID": "test-client",
            "APIMACRO_INSTAGRAM_REDIRECT_URI": "http://127.0.0.1:8765/callback",
        ]
        let terminal = try await ReplTests.start(space, environment: env)
        defer { terminal.close() }
        try await ReplTests.enter("print('kept' + '-line')", on: terminal)
        let start = terminal.count
        terminal.type(":login instagram\r")
        _ = try await terminal.expect("sent to: ", after: start)
        let shown = String(decoding: Array(terminal.output.utf8)[start...], as: UTF8.self)
        let state = try #require(
            shown.components(separatedBy: "state=").dropFirst().first?.prefix {
                $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_"
            },
            "\(shown)")
        try await ReplTests.enter("http://127.0.0.1:8765/callback#access_token=ig-token-1&state=\(state)", on: terminal)
        // A typed line that quotes the token goes too: the session knows it now.
        try await ReplTests.enter("len('ig-token-1')", on: terminal)
        terminal.type(":quit\r")
        #expect(try await terminal.waitForExit() == 0)
        let history = home.appendingPathComponent("history")
        let saved = try String(contentsOf: history, encoding: .utf8)
        #expect(saved.contains("print('kept' + '-line')"), "\(saved)")
        #expect(!saved.contains("ig-token-1"), "\(saved)")
        let credentials = try String(contentsOf: home.appendingPathComponent("credentials.json"), encoding: .utf8)
        #expect(credentials.contains("ig-token-1"), "the login itself worked")

        // A history written before this fix (or by hand) that holds the token: logout scrubs it.
        try Data(
            "print('kept' + '-line')\ninstagram.complete_login('http://x/cb#access_token=ig-token-1&state=s')\n".utf8
        )
        .write(to: history)
        let logout = try await space.run("logout", "instagram", environment: env)
        #expect(logout.status == 0, "\(logout.stderr)")
        let scrubbed = try String(contentsOf: history, encoding: .utf8)
        #expect(!scrubbed.contains("ig-token-1"), "\(scrubbed)")
        #expect(scrubbed.contains("print('kept' + '-line')"))
        #expect(try SecretsAuditTests.mode(history) == 0o600)
        try await server.shutdown()
    }
}
