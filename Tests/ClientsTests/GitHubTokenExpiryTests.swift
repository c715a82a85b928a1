import Clients
import Foundation
import Synchronization
import TestSupport
import Testing
import WebAPI

@Suite("GitHub-Authentication-Token-Expiration")
struct GitHubTokenExpiryTests {
    /// The header's text for a moment `days` from now.
    static func header(days: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date().addingTimeInterval(days * 86_400)) + " UTC"
    }

    @Test("the header's forms are read; anything else is not")
    func parse() {
        #expect(GitHubTokenExpiry.parse("2021-10-07 19:07:53 UTC") == 1_633_633_673)
        #expect(GitHubTokenExpiry.parse("2021-10-07 21:07:53 +0200") == 1_633_633_673)
        #expect(GitHubTokenExpiry.parse("2021-10-07 14:07:53 -0500") == 1_633_633_673)
        for bad in [
            "", "2021-10-07", "2021-13-07 19:07:53 UTC", "2021-10-07 25:07:53 UTC", "soon", "2021-10-07 19:07:53 CEST",
            "99999-10-07 19:07:53 UTC",
        ] {
            #expect(GitHubTokenExpiry.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("a token that expires within 7 days warns once per run; later answers do not warn again")
    func warnsOnce() async throws {
        let warnings = Mutex<[String]>([])
        try await withGitHubClient(
            token: "github_pat_expiringSoon", warn: { line in warnings.withLock { $0.append(line) } },
            {
                client, server in
                server.setTokenExpiration(Self.header(days: 3.5), for: "github_pat_expiringSoon")
                #expect(client.tokenExpiry.expiresAt == nil)
                for _ in 0..<3 { _ = try await client.send(.user(login: "octocat")) }
                let expiresAt = try #require(client.tokenExpiry.expiresAt)
                #expect(abs(expiresAt - Date().timeIntervalSince1970 - 3.5 * 86_400) < 600)
                let lines = warnings.withLock { $0 }
                #expect(lines.count == 1)
                #expect(lines.first?.hasPrefix("apimacro: warning: the GitHub token expires on ") == true)
                #expect(lines.first?.contains(", in 3 days;") == true)
            })
    }

    @Test("a token with weeks left, or one without the header, never warns; a replayed answer says nothing")
    func quiet() async throws {
        let warnings = Mutex<[String]>([])
        try await withGitHubClient(
            token: "github_pat_longLived", warn: { line in warnings.withLock { $0.append(line) } },
            {
                client, server in
                _ = try await client.send(.user(login: "octocat"))
                #expect(client.tokenExpiry.expiresAt == nil)
                server.setTokenExpiration(Self.header(days: 30), for: "github_pat_longLived")
                _ = try await client.send(.user(login: "octocat"))
                #expect(client.tokenExpiry.expiresAt != nil)
            })
        #expect(warnings.withLock { $0 }.isEmpty)
        let expiry = GitHubTokenExpiry(warn: { line in warnings.withLock { $0.append(line) } })
        var headers = Headers([(GitHubTokenExpiry.header, Self.header(days: -1))])
        expiry.watch(Response(status: 200, headers: headers, body: [], url: "https://api.github.com", source: .replay))
        #expect(expiry.expiresAt == nil && warnings.withLock { $0 }.isEmpty)
        headers = Headers([(GitHubTokenExpiry.header, "2020-01-01 00:00:00 UTC")])
        expiry.watch(Response(status: 200, headers: headers, body: [], url: "https://api.github.com"))
        #expect(
            warnings.withLock { $0 } == [
                "apimacro: warning: the GitHub token expired on 2020-01-01 00:00 UTC; make a new one (https://github.com/settings/tokens)"
            ])
    }
}
