import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

@Suite("the GitHub client against the loopback server")
struct GitHubClientTests {
    func withGitHub(token: String? = "ghp_clienttest123", _ body: (GitHubClient, TestServer) async throws -> Void)
        async throws
    {
        try await withGitHubClient(token: token, body)
    }

    @Test("requests send Accept, X-GitHub-Api-Version, User-Agent and the bearer token")
    func headers() async throws {
        try await withGitHub { client, server in
            _ = try await client.send(.user(login: "octocat"))
            let request = try #require(server.requests.first)
            #expect(request.path == "/users/octocat")
            #expect(request.header("accept") == "application/vnd.github+json")
            #expect(request.header("x-github-api-version") == "2022-11-28")
            #expect(request.header("user-agent") == "apimacro/test")
            #expect(request.header("authorization") == "Bearer ghp_clienttest123")
            #expect(client.rateLimit?.remaining != nil)
        }
    }

    @Test("environment: APIMACRO_GITHUB_TOKEN beats GITHUB_TOKEN; URL and API version overrides")
    func environment() {
        let both = GitHubConfiguration(SettingsView(environment: ["APIMACRO_GITHUB_TOKEN": "a", "GITHUB_TOKEN": "b"]))
        #expect(both.token?.revealed == "a")
        #expect(GitHubConfiguration(SettingsView(environment: ["GITHUB_TOKEN": "b"])).token?.revealed == "b")
        #expect(GitHubConfiguration(SettingsView(environment: [:])).token == nil)
        let custom = GitHubConfiguration(
            SettingsView(environment: [
                "APIMACRO_GITHUB_URL": "http://127.0.0.1:9", "APIMACRO_GITHUB_API_VERSION": "2026-03-10",
            ]))
        #expect(custom.baseURL == "http://127.0.0.1:9")
        #expect(custom.apiVersion == "2026-03-10")
        #expect(GitHubConfiguration(SettingsView(environment: [:])).baseURL == "https://api.github.com")
    }

    @Test("a login is one path segment: '../x' cannot reach another endpoint")
    func escaping() {
        #expect(GitHubRouter.user(login: "../orgs/x").request.target == "/users/..%2Forgs%2Fx")
        #expect(GitHubRouter.followers(login: "a b").request.target == "/users/a%20b/followers")
    }

    @Test("pages ask for 100 items, or fewer when the limit is smaller; every page is reachable by Link")
    func pagination() async throws {
        try await withGitHub { client, server in
            #expect(
                GitHubRouter.repos(login: "many", parameters: []).firstPage(limit: 30).query.contains {
                    $0 == ("per_page", "30")
                })
            var request: Request? = GitHubRouter.repos(login: "many", parameters: [("type", "owner")]).firstPage(
                limit: nil)
            var items = 0
            var pages = 0
            while let current = request {
                let response = try await client.api.send(current)
                let count = (try JSONSerialization.jsonObject(with: Data(response.body)) as? [Any])?.count ?? 0
                items += count
                pages += 1
                request = GitHubClient.pagination.next(after: response, request: current, itemCount: count)
            }
            #expect(items == 2000)
            #expect(pages == 20)
            #expect(server.requests.allSatisfy { $0.query["per_page"] == "100" && $0.query["type"] == "owner" })
        }
    }

    @Test("the recorded octokit issue pages paginate through their real Link headers")
    func recordedPagination() async throws {
        try await withGitHub(token: nil) { client, server in
            var request: Request? = GitHubRouter.paginate(
                path: "/repos/octokit-fixture-org/paginate-issues/issues", parameters: [("per_page", "3")]
            ).request
            var items = 0
            while let current = request {
                let response = try await client.api.send(current)
                let count = (try JSONSerialization.jsonObject(with: Data(response.body)) as? [Any])?.count ?? 0
                items += count
                request = GitHubClient.pagination.next(after: response, request: current, itemCount: count)
            }
            #expect(items == 13)
            #expect(server.requests.count == 5)
        }
    }
}
