import Foundation
import TestSupport
import Testing

@Suite("examples")
struct ExampleTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples")

    static var offlineExamples: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: examples.path)) ?? []).filter { $0.hasSuffix(".py") }
            .sorted()
    }

    /// Every client pointed at the loopback server, with test credentials; for `example`, the
    /// settings its cassette names too (a legacy backend's base URL).
    static func environment(_ server: TestServer, example: String? = nil) -> [String: String] {
        [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph",
            "APIMACRO_INSTAGRAM_TOKEN": "ig-token-1", "APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4",
            "APIMACRO_SHORTENER_TOKEN": "bitly-test-token", "APIMACRO_SHORTENER_KEY": "AIza-test-key",
            "APIMACRO_GITHUB_TOKEN": "ghp_exampleTestToken0000",
        ].merging(example.map { ExampleReplayTests.liveEnvironment(of: $0, server: server) } ?? [:]) { $1 }
    }

    @Test("every example runs against the loopback server and prints JSON rows", arguments: offlineExamples)
    func example(name: String) async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run(
            "run", "--format", "json", Self.examples.appendingPathComponent(name).path,
            environment: Self.environment(server, example: name),
            stdin: "https://example.com/from-stdin\n")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        #expect((rows?.count ?? 0) > 0, "\(result.stdout)")
    }

    func runExample(_ name: String, _ arguments: String...) async throws -> RunResult {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Binary.run(
            ["run", "--format", "csv", Self.examples.appendingPathComponent(name).path] + arguments, in: space.url,
            environment: Self.environment(server, example: name))
        try await server.shutdown()
        return result
    }

    @Test("github-profile prints the profile card")
    func profile() async throws {
        let result = try await runExample("github-profile.py", "--login", "octocat")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "login,name,company,location,public_repos,followers,following,avatar_url")
        #expect(
            lines.dropFirst().first?.hasPrefix("octocat,The Octocat,'@github,San Francisco,8,3,2,") == true,
            "\(result.stdout)")
        let missing = try await runExample("github-profile.py", "--login", "nobody-here")
        #expect(missing.status == 1)
        #expect(missing.stderr == "no GitHub user named 'nobody-here'\n")
    }

    @Test("github-graphql-issues pages through GraphQL; a missing repository or token says what to do")
    func graphQLIssues() async throws {
        let result = try await runExample("github-graphql-issues.py", "--limit", "7", "--page-size", "3")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "number,title,labels,url")
        #expect(lines.count == 8, "\(result.stdout)\(result.stderr)")
        let missing = try await runExample("github-graphql-issues.py", "--repo", "nobody/nothing")
        #expect(missing.status == 1)
        #expect(
            missing.stderr
                == "nobody/nothing: Could not resolve to a Repository with the name 'nobody/nothing'. (NOT_FOUND)\n")
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        var environment = Self.environment(server)
        environment["APIMACRO_GITHUB_TOKEN"] = nil
        let anonymous = try await Binary.run(
            ["run", Self.examples.appendingPathComponent("github-graphql-issues.py").path], in: space.url,
            environment: environment)
        try await server.shutdown()
        #expect(anonymous.status == 1)
        #expect(anonymous.stderr == "GitHub's GraphQL API needs a token: set APIMACRO_GITHUB_TOKEN or GITHUB_TOKEN\n")
    }

    @Test("github-top-repos sorts every page of repos by stars")
    func topRepos() async throws {
        let result = try await runExample("github-top-repos.py", "--login", "many", "--top", "3")
        let rows = result.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",") }
        #expect(rows.count == 3, "\(result.stdout)\(result.stderr)")
        let stars = rows.compactMap { Int($0[1]) }
        #expect(stars == stars.sorted(by: >))
        // The server gives repo-N (N * 7919) % 5000 stars.
        #expect(stars.first == (1...2000).map { ($0 * 7919) % 5000 }.max())
    }

    @Test("github-followers lists followers with profile URLs, or whom a user follows")
    func followers() async throws {
        let result = try await runExample("github-followers.py", "--login", "many", "--limit", "120")
        let rows = result.stdout.split(separator: "\n").dropFirst()
        #expect(rows.count == 120)
        #expect(rows.first?.hasPrefix("user1,http") == true, "\(result.stdout.prefix(200))")
        let following = try await runExample("github-followers.py", "--login", "octocat", "--following")
        #expect(following.stdout.split(separator: "\n").count == 3)
    }

    @Test("the README's hello example prints its table")
    func hello() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run(
            "run", "--format", "table", Self.examples.appendingPathComponent("hello.py").path, "--name", "Ada",
            "--times", "2")
        #expect(
            result.stdout
                == "n  greeting       length\n-  -------------  ------\n1  Hello, Ada!         3\n2  Bonjour, Ada!       3\n"
        )
    }

    @Test("instagram-friends lists followers with their pictures")
    func instagramFriends() async throws {
        let result = try await runExample("instagram-friends.py", "--limit", "30")
        let rows = result.stdout.split(separator: "\n")
        #expect(rows.first == "username,name,picture")
        #expect(rows.count == 31, "\(result.stderr)")
        #expect(rows.dropFirst().allSatisfy { $0.contains("http") })
    }

    @Test("instagram-top-posts lists the account's media by likes, from every page")
    func instagramTopPosts() async throws {
        let result = try await runExample("instagram-top-posts.py", "--top", "4")
        let rows = result.stdout.split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        #expect(rows.first?.joined(separator: ",") == "posted,likes,comments,type,caption,link", "\(result.stderr)")
        #expect(rows.dropFirst().map { String($0[1]) } == ["2", "1", "1", "0"], "\(result.stdout)")
        #expect(rows.dropFirst().allSatisfy { $0.last?.hasPrefix("https://www.instagram.com/p/") == true })
    }

    @Test("instagram-filters prints a histogram of all 41 photos' filters")
    func instagramFilters() async throws {
        let result = try await runExample("instagram-filters.py")
        let counts = result.stdout.split(separator: "\n").dropFirst().compactMap { Int($0.split(separator: ",")[1]) }
        #expect(counts.reduce(0, +) == 41, "\(result.stdout)\(result.stderr)")
        #expect(counts == counts.sorted(by: >))
    }

    @Test("shorten round-trips every URL; a string that is not a URL is skipped")
    func shorten() async throws {
        let result = try await runExample("shorten.py", "https://example.com/a", "http://www.google.com/", "not a url")
        let rows = result.stdout.split(separator: "\n")
        try #require(rows.count == 4, "\(result.stdout)\(result.stderr)")
        #expect(rows[1].hasPrefix("https://example.com/a,https://goo.gl/") && rows[1].hasSuffix(",ok"))
        #expect(rows[2].hasPrefix("http://www.google.com/,https://goo.gl/") && rows[2].hasSuffix(",ok"))
        #expect(rows[3].hasPrefix("not a url,,\"skipped: shorten() long_url must be an absolute http(s) URL"))
        #expect(result.status == 1, "a skipped URL makes the run fail, so scripts notice")
    }

    @Test("shorten-file shortens each distinct link of a file once, on Bitly, with a domain if asked")
    func shortenFile() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "notes.txt": """
            See https://example.com/a, then (https://example.com/b) and "https://example.com/a".
            Not a link: ftp://example.com/c; https://google.com/ is already on Bitly.

            """
        ])
        defer { space.remove() }
        let environment = [
            "APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4", "APIMACRO_SHORTENER_TOKEN": "bitly-test-token",
        ]
        let script = Self.examples.appendingPathComponent("shorten-file.py").path
        let result = try await Binary.run(
            ["run", "--no-cache", "--format", "csv", script, "--file", "notes.txt"], in: space.url,
            environment: environment)
        let custom = try await Binary.run(
            ["run", "--no-cache", "--format", "csv", script, "--file", "notes.txt", "--domain", "j.mp"], in: space.url,
            environment: environment)
        let shortened = server.requests.filter { $0.path == "/bitly/v4/shorten" }
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 4 && rows.first == "old,new", "\(result.stdout)")
        #expect(
            rows.dropFirst().map { $0.split(separator: ",").first.map(String.init) ?? "" } == [
                "https://example.com/a", "https://example.com/b", "https://google.com/",
            ])
        #expect(rows.last == "https://google.com/,https://bit.ly/2WujBe0", "the recorded link")
        #expect(
            custom.status == 0
                && custom.stdout.split(separator: "\n").dropFirst().allSatisfy { $0.contains(",https://j.mp/") })
        #expect(shortened.count == 6, "each distinct link once per run")
    }
}
