import Foundation
import TestSupport
import Testing

/// GitHub as its power users need it (issue 28), through the built binary: an expiring token's
/// warning, the token `gh` already has, GitHub App authentication, search past 1,000 results,
/// secondary rate limits.
@Suite("GitHub for power users through the binary")
struct GitHubPowerUserTests {
    /// A server and a workspace for `body`, both gone afterwards.
    static func withServer(
        files: [String: String] = [:], _ body: (TestServer, Workspace) async throws -> Void
    ) async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: files)
        defer { space.remove() }
        do {
            try await body(server, space)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    /// The `GitHub-Authentication-Token-Expiration` text for a moment `days` from now.
    static func expiration(days: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date().addingTimeInterval(days * 86_400)) + " UTC"
    }

    @Test("a token with fewer than 7 days left: one warning per run, and github.token_expires_at")
    func expiringToken() async throws {
        let macro = """
            from apimacro import github
            print(github.token_expires_at)
            for _ in range(3):
                github.user('octocat')
            print(github.token_expires_at.tzname(), (github.token_expires_at.timestamp() - __import__('time').time()) // 86400)
            """
        try await Self.withServer(files: ["expiring.py": macro]) { server, space in
            server.setTokenExpiration(Self.expiration(days: 2.5), for: "github_pat_e2eExpiring")
            let result = try await space.run(
                "run", "expiring.py",
                environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "github_pat_e2eExpiring"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "None\nUTC 2.0\n")
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
            #expect(warnings.count == 1, "\(result.stderr)")
            #expect(warnings.first?.contains("the GitHub token expires on ") == true)
            #expect(warnings.first?.contains("in 2 days") == true)
            #expect(!result.stderr.contains("github_pat_e2eExpiring"))
        }
    }
}
