import Foundation
import TestSupport
import Testing

/// A hostile or broken `credentials.json` (issue 18, item 11): a FIFO hangs nothing, a corrupt
/// file is an error naming it (never anonymous requests), and `logout` never deletes it whole.
@Suite("credentials.json: FIFO, corrupt file, logout", .serialized)
struct CredentialFileTests {
    func environment(_ server: TestServer, home: URL) -> [String: String] {
        ["APIMACRO_HOME": home.path, "APIMACRO_SHORTENER_URL": server.baseURL + "/urlshortener/v1"]
    }

    @Test("a FIFO as credentials.json hangs no command: run hello.py works, auth status and the shortener say why")
    func fifo() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "hello.py": "print('hello')\n",
            "short.py": "from apimacro import shortener\nshortener.shorten('https://example.com/a')\n",
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let store = home.appendingPathComponent("credentials.json")
        #expect(mkfifo(store.path, 0o600) == 0)
        let env = environment(server, home: home)
        // Before the fix each of these blocked opening the FIFO until the runner's 60 s limit killed it.
        let hello = try await space.run("run", "hello.py", environment: env)
        #expect(hello.status == 0, "\(hello.stderr)")
        #expect(hello.stdout == "hello\n")
        let status = try await space.run("auth", "status", environment: env)
        #expect(status.status == 0)
        #expect(status.stdout.contains("not a regular file"), "\(status.stdout)")
        let short = try await space.run("run", "short.py", environment: env)
        #expect(short.status == 1)
        #expect(short.stderr.contains("not a regular file") && short.stderr.contains(store.path), "\(short.stderr)")
        #expect(!server.requests.contains { $0.path.hasPrefix("/urlshortener") }, "no anonymous request")
        try await server.shutdown()
    }

    @Test(
        "a corrupt credentials.json: the shortener raises an error naming it (no anonymous request); logout refuses and keeps it"
    )
    func corrupt() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "short.py": "from apimacro import shortener\nprint(shortener.shorten('https://example.com/a'))\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let store = home.appendingPathComponent("credentials.json")
        let corrupt = #"{"shortener": {"token": "corrupt-file-key-77", "kind": "api_key"}, "instagram": {"tok"#
        try Data(corrupt.utf8).write(to: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store.path)
        let env = environment(server, home: home)

        let short = try await space.run("run", "short.py", environment: env)
        #expect(short.status == 1, "\(short.stdout)")
        #expect(short.stderr.contains(store.path) && short.stderr.contains("not valid JSON"), "\(short.stderr)")
        #expect(!server.requests.contains { $0.path.hasPrefix("/urlshortener") }, "no anonymous request")

        let logout = try await space.run("logout", "shortener", environment: env)
        #expect(logout.status != 0)
        #expect(!logout.stdout.contains("logged out"), "\(logout.stdout)")
        #expect(logout.stderr.contains("not valid JSON"), "\(logout.stderr)")
        #expect(try String(contentsOf: store, encoding: .utf8) == corrupt, "the file is left as it was")
        #expect(!(short.stdout + short.stderr + logout.stdout + logout.stderr).contains("corrupt-file-key-77"))
        try await server.shutdown()
    }
}
