import Foundation
import TestSupport
import Testing

/// `apimacro auth status --check` (issue 27): each service is asked whose credential it is, as
/// `gh auth status` does, through the binary against the loopback server.
@Suite("auth status --check asks each service who the credential belongs to")
struct AuthCheckTests {
    static let githubToken = "ghp_checkToken0123456789"

    func environment(_ server: TestServer, home: URL, github: String = AuthCheckTests.githubToken) -> [String: String] {
        [
            "APIMACRO_HOME": home.path, "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": github,
            "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph", "APIMACRO_INSTAGRAM_TOKEN": "ig-token-1",
            "APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4", "APIMACRO_SHORTENER_TOKEN": "bitly-test-token",
        ]
    }

    /// The line after `name`'s `auth status` line (the check's), or nil.
    func checkLine(_ output: String, _ name: String) -> String? {
        let lines = output.split(separator: "\n").map(String.init)
        guard let index = lines.firstIndex(where: { $0.hasPrefix(name + " ") }), index + 1 < lines.count else {
            return nil
        }
        return lines[index + 1].trimmingCharacters(in: .whitespaces)
    }

    @Test("each client names its account: GitHub's login and scopes, Instagram's user, Bitly's; never a token")
    func accounts() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let result = try await space.run("auth", "status", "--check", environment: environment(server, home: home))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(checkLine(result.stdout, "github") == "✓ octocat (scopes: repo, read:org)", "\(result.stdout)")
        #expect(
            checkLine(result.stdout, "instagram") == "✓ facebookfordevelopers (business account)", "\(result.stdout)")
        #expect(checkLine(result.stdout, "shortener") == "✓ apimacro-test", "\(result.stdout)")
        // One request each, with the client's own credential.
        let users = server.requests.filter { $0.path == "/user" }
        #expect(users.count == 1 && users.first?.header("Authorization") == "Bearer \(Self.githubToken)")
        #expect(server.requests.contains { $0.path == "/bitly/v4/user" })
        for secret in [Self.githubToken, "ig-token-1", "bitly-test-token"] {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
        }
        // A fine-grained token's answer lists no scopes; without --check, no request at all.
        let before = server.requests.count
        let plain = try await space.run("auth", "status", environment: environment(server, home: home))
        #expect(server.requests.count == before && !plain.stdout.contains("✓"))
        let fine = try await space.run(
            "auth", "status", "--check",
            environment: environment(server, home: home, github: "github_pat_fineGrained0123456789"))
        #expect(checkLine(fine.stdout, "github") == "✓ octocat (scopes not listed (a fine-grained token))")
        try await server.shutdown()
    }

    @Test("a refused token fails the check (exit 1) with GitHub's reason; other clients are still checked")
    func refused() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let result = try await space.run(
            "auth", "status", "--check", environment: environment(server, home: home, github: "bad-token-98765"))
        #expect(result.status == 1)
        let line = try #require(checkLine(result.stdout, "github"), "\(result.stdout)")
        #expect(line.hasPrefix("✗ check failed:") && line.contains("Bad credentials"), "\(line)")
        #expect(checkLine(result.stdout, "shortener") == "✓ apimacro-test")
        #expect(!result.stdout.contains("bad-token-98765") && !result.stderr.contains("bad-token-98765"))
        try await server.shutdown()
    }

    @Test("a hostile answer: its terminal escapes are neutralised and the token it echoes is REDACTED")
    func hostileAnswer() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        var env = environment(server, home: space.url.appendingPathComponent("home"))
        env["APIMACRO_GITHUB_URL"] = server.baseURL + "/hostile/identity"
        let result = try await space.run("auth", "status", "--check", environment: env)
        let line = try #require(checkLine(result.stdout, "github"), "\(result.stdout)")
        #expect(!result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{07}"), "\(result.stdout)")
        #expect(!result.stdout.contains(Self.githubToken), "\(result.stdout)")
        #expect(line.contains("octo") && line.contains("REDACTED"), "\(line)")
        try await server.shutdown()
    }

    @Test("a client with no check says so; one with no credential is not asked")
    func unsupported() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let env = [
            "APIMACRO_HOME": space.url.appendingPathComponent("home").path,
            "APIMACRO_SHORTENER_URL": server.baseURL + "/urlshortener/v1", "APIMACRO_SHORTENER_KEY": "AIza-test-key",
            "APIMACRO_GITHUB_URL": server.baseURL,
        ]
        let result = try await space.run("auth", "status", "--check", environment: env)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(checkLine(result.stdout, "shortener") == "check not supported for shortener", "\(result.stdout)")
        #expect(result.stdout.contains("github") && !server.requests.contains { $0.path == "/user" })
        try await server.shutdown()
    }
}
