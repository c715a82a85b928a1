import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

@Suite("GitHub GraphQL against the loopback server")
struct GitHubGraphQLTests {
    static let issues = """
        query($owner: String!, $name: String!, $cursor: String) {
          repository(owner: $owner, name: $name) {
            issues(first: 5, after: $cursor) { pageInfo { hasNextPage endCursor } nodes { number title } }
          }
        }
        """
    static let variables = Array(#"{"owner":"octokit-fixture-org","name":"paginate-issues"}"#.utf8)

    func withGitHub(
        token: String? = "ghp_graphqltest123", baseURL: ((TestServer) -> String)? = nil,
        graphQLURL: ((TestServer) -> String)? = nil,
        _ body: (GitHubClient, TestServer) async throws -> Void
    ) async throws {
        try await withGitHubClient(token: token, baseURL: baseURL, graphQLURL: graphQLURL, body)
    }

    @Test("the endpoint: api.github.com/graphql, GitHub Enterprise's /api/v3 → /api/graphql, the override wins")
    func endpoints() {
        #expect(GitHubConfiguration().graphQLEndpoint == "https://api.github.com/graphql")
        #expect(GitHubGraphQL.endpoint(forREST: "https://api.github.com/") == "https://api.github.com/graphql")
        #expect(
            GitHubGraphQL.endpoint(forREST: "https://ghe.example.com/api/v3") == "https://ghe.example.com/api/graphql")
        #expect(
            GitHubGraphQL.endpoint(forREST: "https://ghe.example.com/api/v3/") == "https://ghe.example.com/api/graphql")
        let enterprise = GitHubConfiguration(
            SettingsView(environment: ["APIMACRO_GITHUB_URL": "https://ghe.example.com/api/v3"]))
        #expect(enterprise.graphQLEndpoint == "https://ghe.example.com/api/graphql")
        let overridden = GitHubConfiguration(
            SettingsView(environment: [
                "APIMACRO_GITHUB_URL": "https://ghe.example.com/api/v3",
                "APIMACRO_GITHUB_GRAPHQL_URL": "https://graph.example.com/gql",
            ]))
        #expect(overridden.graphQLEndpoint == "https://graph.example.com/gql")
        #expect(
            GitHubConfiguration(SettingsView(environment: ["APIMACRO_GITHUB_GRAPHQL_URL": ""])).graphQLEndpoint
                == "https://api.github.com/graphql")
    }

    @Test(
        "a query is one POST of {query, variables} with the token; data comes back; rate_limit is the graphql resource")
    func query() async throws {
        try await withGitHub { client, server in
            _ = try await client.send(.user(login: "octocat"))
            #expect(client.rateLimit?.resource == "core")
            let response = try await client.graphQL(Self.issues, variablesJSON: Self.variables)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let issues = (body["data"] as? [String: Any]).flatMap { $0["repository"] as? [String: Any] }.flatMap {
                $0["issues"] as? [String: Any]
            }
            #expect((issues?["nodes"] as? [Any])?.count == 5)
            let request = try #require(server.requests.last)
            #expect(request.method == "POST" && request.path == "/graphql")
            #expect(request.header("authorization") == "Bearer ghp_graphqltest123")
            #expect(request.header("content-type") == "application/json")
            let sent = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            #expect(sent["query"] as? String == Self.issues)
            #expect(
                (sent["variables"] as? [String: String]) == ["owner": "octokit-fixture-org", "name": "paginate-issues"])
            #expect(client.rateLimit?.resource == "graphql")
            #expect(client.rateLimit?.limit == 5000)
        }
    }

    @Test("an answer with errors throws GraphQLError with the first message and the partial data")
    func errors() async throws {
        try await withGitHub { client, _ in
            do {
                _ = try await client.graphQL(
                    Self.issues, variablesJSON: Array(#"{"owner":"nobody","name":"nothing"}"#.utf8))
                Issue.record("expected GraphQLError")
            } catch let error as GraphQLError {
                #expect(error.description == "Could not resolve to a Repository with the name 'nobody/nothing'.")
                #expect(error.hasData)
                #expect(error.response.status == 200)
            }
        }
    }

    @Test("an error message that quotes the token reads REDACTED in its place")
    func errorsRedacted() async throws {
        try await withGitHub { client, _ in
            do {
                _ = try await client.graphQL("query { echoToken }")
                Issue.record("expected GraphQLError")
            } catch let error as GraphQLError {
                #expect(error.messages.count == 2)
                #expect(error.messages.allSatisfy { !$0.contains("ghp_graphqltest123") }, "\(error.messages)")
                #expect(error.description.hasPrefix("Your token Bearer REDACTED may not"), "\(error.description)")
            }
        }
    }

    @Test("no token: GitHub's 401 is Unauthorized")
    func unauthorized() async throws {
        try await withGitHub(token: nil) { client, _ in
            do {
                _ = try await client.graphQL(Self.issues, variablesJSON: Self.variables)
                Issue.record("expected Unauthorized")
            } catch let error as APIError {
                #expect(error.kind == .unauthorized)
                #expect(error.status == 401)
                #expect(error.message.contains("requires you to be authenticated"))
            }
        }
    }

    @Test("GitHub Enterprise: APIMACRO_GITHUB_URL …/api/v3 sends GraphQL to …/api/graphql, with the token")
    func enterprise() async throws {
        let baseURL: (TestServer) -> String = { $0.baseURL + "/api/v3" }
        try await withGitHub(baseURL: baseURL) { client, server in
            #expect(client.configuration.graphQLEndpoint == server.baseURL + "/api/graphql")
            _ = try await client.graphQL(Self.issues, variablesJSON: Self.variables)
            let request = try #require(server.requests.last)
            #expect(request.path == "/api/graphql")
            #expect(request.header("authorization") == "Bearer ghp_graphqltest123")
        }
    }

    @Test("APIMACRO_GITHUB_GRAPHQL_URL on another host: GraphQL goes there with the token, REST keeps its own host")
    func override() async throws {
        let graphQLURL: (TestServer) -> String = { $0.otherHostURL + "/graphql" }
        try await withGitHub(graphQLURL: graphQLURL) { client, server in
            _ = try await client.graphQL(Self.issues, variablesJSON: Self.variables)
            _ = try await client.send(.user(login: "octocat"))
            let graphQL = try #require(server.requests.first { $0.path == "/graphql" })
            #expect(graphQL.listener == TestServer.otherHost)
            #expect(graphQL.header("authorization") == "Bearer ghp_graphqltest123")
            let rest = try #require(server.requests.first { $0.path == "/users/octocat" })
            #expect(rest.listener == TestServer.mainHost)
        }
    }

    @Test("the token never goes to a pagination link or redirect off the GraphQL host")
    func credentialsStayHome() async throws {
        try await withGitHub { client, server in
            // The GraphQL client's credential rule is the REST one, anchored at the GraphQL endpoint's origin.
            _ = try await client.graphQLAPI.send(Request("GET", server.otherHostURL + "/users/octocat"))
            let request = try #require(server.requests.last)
            #expect(request.listener == TestServer.otherHost)
            #expect(request.header("authorization") == nil)
        }
    }
}
