import Foundation
import TestSupport
import Testing

/// `apimacro api` following `gh api`'s rules (issue 36, "gh's exit rules"): a GraphQL answer
/// with `errors` fails, a failed answer's body ends with a newline, `--input`, `--silent`,
/// `--hostname`, `--template`, a path with no client is GitHub's, and a paginated POST warns.
@Suite("apimacro api: gh's exit rules and options")
struct ApiGhRulesTests {
    static func environment(_ server: TestServer) -> [String: String] {
        ApiTests.environment(server)
    }

    @Test("a GraphQL answer holding errors: the body on stdout, the first message on stderr, exit 1")
    func graphQLErrorsExitOne() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        // The test server answers a query with no selection with 200 and `errors`, as GitHub does.
        let failed = try await space.run(
            "api", "github", "graphql", "-f", "query=query", environment: Self.environment(server))
        #expect(failed.status == 1, "\(failed.stderr)")
        #expect(failed.stdout.hasPrefix("{\"errors\":["), "\(failed.stdout)")
        #expect(failed.stdout.hasSuffix("}\n"), "the body ends with a newline: \(failed.stdout.debugDescription)")
        #expect(failed.stderr == "apimacro: GraphQL: Parse error: no selection in the query\n", "\(failed.stderr)")
        // An answer without errors exits 0.
        let query =
            #"query { repository(owner: "octokit-fixture-org", name: "paginate-issues") "#
            + "{ issues(first: 2) { nodes { number } pageInfo { hasNextPage endCursor } } } }"
        let fine = try await space.run(
            "api", "github", "graphql", "-f", "query=\(query)", environment: Self.environment(server))
        #expect(fine.status == 0, "\(fine.stderr)")
        #expect(fine.stdout.hasPrefix("{\"data\":"), "\(fine.stdout)")
        // A message quoting the token: REDACTED on stderr, as in the body; "(and 1 more)" as github.graphql() says.
        let echoed = try await space.run(
            "api", "github", "graphql", "-f", "query=query { echoToken }", environment: Self.environment(server))
        #expect(echoed.status == 1)
        #expect(!echoed.stderr.contains(ApiTests.token) && !echoed.stdout.contains(ApiTests.token))
        #expect(
            echoed.stderr
                == "apimacro: GraphQL: Your token Bearer REDACTED may not ask for echoToken (FORBIDDEN) (and 1 more)\n",
            "\(echoed.stderr)")
        try await server.shutdown()
    }

    @Test("a non-2xx body printed by api ends with a newline before the error line")
    func failedBodyEndsWithNewline() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let missing = try await space.run("api", "github", "/users/nobody-here", environment: Self.environment(server))
        #expect(missing.status == 1)
        #expect(missing.stdout.hasSuffix("}\n"), "\(missing.stdout.debugDescription)")
        #expect(missing.stdout.filter { $0 == "\n" }.count == 1, "\(missing.stdout.debugDescription)")
        try await server.shutdown()
    }

    @Test("--input FILE and --input -: the raw body, fields to the query string; --silent prints no body")
    func inputAndSilent() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["body.json": #"{"title": "from a file", "n": [1, 2]}"#])
        defer { space.remove() }
        let echo = server.baseURL + "/echo/issues"
        let fromFile = try await space.run(
            "api", "\(echo)", "--input", "body.json", "-f", "page=2", environment: Self.environment(server))
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        let request = try #require(server.requests.last)
        #expect(request.method == "POST")
        #expect(request.bodyText == #"{"title": "from a file", "n": [1, 2]}"#)
        #expect(request.query["page"] == "2")
        #expect(request.header("content-type") == "application/json")
        let fromStdin = try await space.run(
            "api", "\(echo)", "-X", "PUT", "--input", "-", "-H", "Content-Type: text/plain",
            environment: Self.environment(server), stdin: "plain text\n")
        #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
        let second = try #require(server.requests.last)
        #expect(second.method == "PUT")
        #expect(second.bodyText == "plain text\n")
        #expect(second.header("content-type") == "text/plain")
        let missing = try await space.run("api", "\(echo)", "--input", "nope.json")
        #expect(missing.status == 2)
        #expect(missing.stderr == "apimacro: --input: cannot read nope.json: No such file or directory\n")
        let silent = try await space.run(
            "api", "github", "/users/octocat", "--silent", environment: Self.environment(server))
        #expect(silent.status == 0, "\(silent.stderr)")
        #expect(silent.stdout == "")
        let silentFailure = try await space.run(
            "api", "github", "/users/nobody-here", "--silent", environment: Self.environment(server))
        #expect(silentFailure.status == 1)
        #expect(silentFailure.stdout == "")
        #expect(silentFailure.stderr.contains("404 Not Found"), "\(silentFailure.stderr)")
        try await server.shutdown()
    }

    @Test("--template '{name} {stargazers_count}': a line per item of every page; a bad template is a usage error")
    func template() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let lines = try await space.run(
            "api", "github", "/users/octocat/repos?per_page=3", "--paginate", "--template", "{name}: {owner.login}",
            environment: Self.environment(server))
        #expect(lines.status == 0, "\(lines.stderr)")
        #expect(lines.stdout == (1...8).map { "repo-\($0): octocat\n" }.joined(), "\(lines.stdout)")
        let one = try await space.run(
            "api", "github", "/users/octocat", "-t", "{login} has {{{public_repos}}} repos, {nothing}.",
            environment: Self.environment(server))
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.hasPrefix("octocat has {"), "\(one.stdout)")
        #expect(one.stdout.hasSuffix("} repos, .\n"), "\(one.stdout)")
        for bad in ["{name", "name}", "{}", "{name:>10}"] {
            let refused = try await space.run(
                "api", "github", "/users/octocat", "--template", bad, environment: Self.environment(server))
            #expect(refused.status == 2, "\(bad): \(refused.stderr)")
            #expect(refused.stderr.hasPrefix("apimacro: --template "), "\(bad): \(refused.stderr)")
        }
        let both = try await space.run(
            "api", "github", "/users/octocat", "--template", "{a}", "--jq", ".", environment: Self.environment(server))
        #expect(both.status == 2)
        #expect(both.stderr == "apimacro: --jq and --template cannot be used together\n")
        try await server.shutdown()
    }

    @Test("a path with no client is GitHub's; --hostname picks GitHub's host")
    func gitHubByDefaultAndHostname() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let plain = try await space.run("api", "users/octocat", environment: Self.environment(server))
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.hasPrefix("{\"login\":\"octocat\","), "\(plain.stdout)")
        #expect(server.requests.last?.header("authorization") == "Bearer \(ApiTests.token)")
        // A loopback host: http, GitHub Enterprise Server's /api/v3 prefix, GitHub's token.
        let host = String(server.baseURL.dropFirst("http://".count))
        let enterprise = try await space.run(
            "api", "--hostname", host, "users/octocat", environment: ["APIMACRO_GITHUB_TOKEN": ApiTests.token])
        let request = try #require(server.requests.last)
        #expect(request.path == "/api/v3/users/octocat", "\(enterprise.stderr)")
        #expect(request.header("authorization") == "Bearer \(ApiTests.token)")
        // A client's name alone is not taken for a GitHub path.
        let alone = try await space.run("api", "instagram", environment: Self.environment(server))
        #expect(alone.status == 2)
        #expect(
            alone.stderr.hasPrefix(
                "apimacro: 'instagram' is a client: give the path after it (apimacro api instagram /PATH)"),
            "\(alone.stderr)")
        let wrong = try await space.run("api", "--hostname", host, "hackernews", "/item/1")
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("--hostname is GitHub's host"), "\(wrong.stderr)")
        let bad = try await space.run("api", "--hostname", "https://ghe.example.com", "users/octocat")
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("apimacro: --hostname \"https://ghe.example.com\": give a host name"))
        try await server.shutdown()
    }

    @Test("-f with --paginate makes a POST, as gh does, and warns once")
    func paginatedPostWarnsOnce() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let posted = try await space.run(
            "api", "\(server.baseURL)/echo/search", "--paginate", "-f", "q=octocat",
            environment: Self.environment(server))
        #expect(posted.status == 0, "\(posted.stderr)")
        #expect(server.requests.last?.method == "POST")
        let warnings = posted.stderr.components(separatedBy: "--paginate with fields sent a POST").count - 1
        #expect(warnings == 1, "\(posted.stderr)")
        let get = try await space.run(
            "api", "\(server.baseURL)/echo/search", "--paginate", "-X", "GET", "-f", "q=octocat",
            environment: Self.environment(server))
        #expect(get.status == 0)
        #expect(get.stderr == "")
        try await server.shutdown()
    }
}
