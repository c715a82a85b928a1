import Foundation
import TestSupport
import Testing

/// `apimacro api` (issue 27, "One-liners like gh api"), through the binary against the loopback
/// server: a client's base URL, credentials, cache and pages; fields and headers as gh sends
/// them; --jq in a bounded child process; the answer plain in a pipe, pretty and coloured (and
/// made harmless) on a terminal.
@Suite("apimacro api")
struct ApiTests {
    static let token = "ghp_apitoken0123456789"

    /// The test server's base URLs for every client the tests use, and GitHub's token.
    static func environment(_ server: TestServer) -> [String: String] {
        [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token,
            "APIMACRO_HACKERNEWS_URL": server.baseURL + "/hn/api/v1",
            "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/v1", "APIMACRO_INSTAGRAM_TOKEN": "ig-token-api",
        ]
    }

    @Test("api github /users/octocat: the body as the server sent it, with the client's token and headers")
    func plainAnswer() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let direct = try await space.run("api", "github", "/users/octocat", environment: Self.environment(server))
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(direct.stderr == "")
        let request = try #require(server.requests.first { $0.path == "/users/octocat" })
        #expect(request.header("authorization") == "Bearer \(Self.token)")
        #expect(request.header("accept") == "application/vnd.github+json")
        #expect(request.header("x-github-api-version") == "2022-11-28")
        // Exactly the server's bytes: what a GET of the same URL without apimacro returns.
        let user = try await space.run(
            "api", "\(server.baseURL)/users/octocat", environment: Self.environment(server))
        #expect(user.stdout == direct.stdout)
        #expect(direct.stdout.hasPrefix("{\"login\":\"octocat\","), "\(direct.stdout)")
        try await server.shutdown()
    }

    @Test("--paginate --jq '.[].name': every page's items through jq, strings as text")
    func paginateWithJQ() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let names = try await space.run(
            "api", "github", "/users/octocat/repos?per_page=3", "--paginate", "--jq", ".[].name",
            environment: Self.environment(server))
        #expect(names.status == 0, "\(names.stderr)")
        #expect(names.stdout == (1...8).map { "repo-\($0)\n" }.joined())
        #expect(server.requests.filter { $0.path == "/users/octocat/repos" }.count == 3)
        // Without --jq: one JSON array of all eight (asked for 100 a page, as the iterators do).
        let merged = try await space.run(
            "api", "github", "/users/octocat/repos", "--paginate", "--no-cache",
            environment: Self.environment(server))
        #expect(merged.status == 0, "\(merged.stderr)")
        let array = try JSONSerialization.jsonObject(with: Data(merged.stdout.utf8)) as? [[String: Any]]
        #expect(array?.count == 8)
        #expect(merged.stdout.hasSuffix("]\n"))
        #expect(!merged.stdout.contains("\n  "), "compact in a pipe: \(merged.stdout.prefix(200))")
        #expect(server.requests.last?.query["per_page"] == "100")
        try await server.shutdown()
    }

    @Test("--paginate: a plugin's page-numbered pages (items at its endpoint's result), Instagram's next_url pages")
    func paginateClients() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let hits = try await space.run(
            "api", "hackernews", "/search", "-X", "GET", "-f", "query=swift", "--paginate", "--jq", "length",
            environment: Self.environment(server))
        #expect(hits.status == 0, "\(hits.stderr)")
        #expect(hits.stdout == "45\n")
        #expect(
            server.requests.filter { $0.path == "/hn/api/v1/search" }.map { $0.query["page"] } == [nil, "1", "2", "3"])
        let media = try await space.run(
            "api", "instagram", "/users/self/media/recent?count=10", "--paginate", "--jq", "length",
            environment: Self.environment(server))
        #expect(media.status == 0, "\(media.stderr)")
        #expect(media.stdout == "41\n")
        #expect(!media.stdout.contains("ig-token-api") && !media.stderr.contains("ig-token-api"))
        // The Graph API (the default backend): paths under the versioned base URL, paging.next
        // followed with the client's one token (the link's own access_token left out).
        var graph = Self.environment(server)
        graph["APIMACRO_INSTAGRAM_URL"] = server.baseURL + "/instagram/graph"
        graph["APIMACRO_INSTAGRAM_TOKEN"] = "ig-token-1"
        let before = server.requests.count
        let posts = try await space.run(
            "api", "instagram", "/me/media", "--paginate", "--jq", "length", environment: graph)
        #expect(posts.status == 0, "\(posts.stderr)")
        #expect(posts.stdout == "9\n")
        let pages = server.requests.dropFirst(before).filter { $0.path == "/instagram/graph/v27.0/me/media" }
        #expect(pages.count == 3, "\(pages.map(\.uri))")
        #expect(pages.allSatisfy { $0.uri.components(separatedBy: "access_token=").count == 2 }, "\(pages.map(\.uri))")
        // The shortener's backends page as links() does: Bitly's pagination.next (121 links of the
        // test account), Shlink's page numbers up to pagesCount (60 short URLs, 10 a page: six
        // requests, no seventh for an empty page, as links() stops).
        var bitly = Self.environment(server)
        bitly["APIMACRO_SHORTENER_URL"] = server.baseURL + "/bitly/v4"
        bitly["APIMACRO_SHORTENER_TOKEN"] = "bitly-test-token"
        let links = try await space.run(
            "api", "shortener", "/groups/Bj1tjw4uLSN/bitlinks", "--paginate", "--jq", "length", environment: bitly)
        #expect(links.stdout == "121\n", "\(links.stderr)")
        var shlink = Self.environment(server)
        shlink["APIMACRO_SHORTENER"] = "shlink"
        shlink["APIMACRO_SHORTENER_URL"] = server.baseURL + "/shlink/rest/v3"
        shlink["APIMACRO_SHORTENER_KEY"] = "shlink-test-key"
        let sent = server.requests.count
        let urls = try await space.run(
            "api", "shortener", "/short-urls", "--paginate", "--jq", "length", environment: shlink)
        #expect(urls.stdout == "60\n", "\(urls.stderr)")
        let shlinkPages = server.requests.dropFirst(sent).filter { $0.path == "/shlink/rest/v3/short-urls" }
        #expect(
            shlinkPages.map { $0.query["page"] ?? "1" } == ["1", "2", "3", "4", "5", "6"], "\(shlinkPages.map(\.uri))")
        try await server.shutdown()
    }

    @Test("-F typed and -f raw fields: a JSON body for POST, the query for GET; -H headers; -X")
    func fieldsAndHeaders() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["note.txt": "from a file\n"])
        defer { space.remove() }
        let post = try await space.run(
            "api", "github", "/echo/new", "-F", "n=5", "-F", "ok=true", "-F", "none=null", "-f", "s=5",
            "-F", "list[]=a", "-F", "list[]=2", "-F", "obj[k]=v", "-F", "obj[deep][x]=false", "-F", "note=@note.txt",
            "-H", "X-Test: yes", "--jq", "{method, json, test: .headers[\"x-test\"]}",
            environment: Self.environment(server))
        #expect(post.status == 0, "\(post.stderr)")
        let echoed = try JSONSerialization.jsonObject(with: Data(post.stdout.utf8)) as? [String: Any]
        #expect(echoed?["method"] as? String == "POST")
        #expect(echoed?["test"] as? String == "yes")
        let body = try #require(server.requests.first { $0.path == "/echo/new" }).bodyText
        #expect(
            body
                == #"{"s":"5","n":5,"ok":true,"none":null,"list":["a",2],"obj":{"k":"v","deep":{"x":false}},"note":"from a file\n"}"#
        )
        let get = try await space.run(
            "api", "github", "/echo/get", "-X", "GET", "-f", "q=a b", "-F", "n=1", "--jq", ".method, .query",
            environment: Self.environment(server))
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == "GET\n{\"n\":\"1\",\"q\":\"a b\"}\n")
        // A path typed with a space and non-ASCII letters goes out percent-encoded, as gh's does;
        // what is already encoded stays as typed.
        let typed = try await space.run(
            "api", "github", "/echo/a b/ä%2Fx", "--jq", ".method", environment: Self.environment(server))
        #expect(typed.status == 0, "\(typed.stderr)")
        #expect(server.requests.contains { $0.uri == "/echo/a%20b/%C3%A4%2Fx" }, "\(server.requests.map(\.uri))")
        let put = try await space.run(
            "api", "github", "/echo/put", "-X", "put", "--jq", ".method", environment: Self.environment(server))
        #expect(put.stdout == "PUT\n")
        for (arguments, message) in [
            (["-f", "novalue"], "-f \"novalue\": write key=value"),
            (["-H", "NoColon"], "-H \"NoColon\": write 'Name: value'"),
            (["-F", "a[=1"], "-F/-f key \"a[\""),
            (["-F", "x=@missing.txt"], "-F: cannot read missing.txt"),
        ] {
            let bad = try await Binary.run(
                ["api", "github", "/echo/bad"] + arguments, in: space.url, environment: Self.environment(server))
            #expect(bad.status == 2, "\(arguments)")
            #expect(bad.stderr.hasPrefix("apimacro: \(message)"), "\(bad.stderr)")
        }
        #expect(!server.requests.contains { $0.path == "/echo/bad" })
        try await server.shutdown()
    }

    @Test(
        "the client's retries and rate limits apply: a reset and a 503 are retried, a short 429 waited out, a long one fails"
    )
    func retriesAndRateLimits() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = Self.environment(server)
        server.inject([.reset, .status(503), .rateLimited(retryAfter: 1)], path: "/users/octocat")
        let retried = try await space.run(
            "api", "github", "/users/octocat", "-v", "--no-cache", "--jq", ".login", environment: environment)
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stdout == "octocat\n")
        #expect(server.requests.filter { $0.path == "/users/octocat" }.count == 4)
        let lines = retried.stderr.split(separator: "\n").filter { $0.contains("/users/octocat") }
        #expect(lines.count == 4, "\(retried.stderr)")
        #expect(lines.first?.contains("(attempt 1 of 4, network error: ") == true, "\(retried.stderr)")
        #expect(lines.last?.contains(" 200 ") == true, "\(retried.stderr)")
        // A reset far away is the client's RateLimited: its line, exit 1, no wait.
        server.inject([.forbiddenRateLimit(resetIn: 600)], path: "/users/octocat")
        let limited = try await space.run("api", "github", "/users/octocat", "--no-cache", environment: environment)
        #expect(limited.status == 1)
        #expect(limited.stderr.contains("rate limit"), "\(limited.stderr)")
        for result in [retried, limited] { #expect(!result.stderr.contains(Self.token)) }
        try await server.shutdown()
    }

    @Test("-i: the status line and headers, then the body; a 404 is printed, then its error line, exit 1")
    func includeAndErrors() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let head = try await space.run("api", "-i", "github", "/users/octocat", environment: Self.environment(server))
        #expect(head.status == 0, "\(head.stderr)")
        #expect(head.stdout.hasPrefix("HTTP 200 OK\n"), "\(head.stdout)")
        #expect(head.stdout.contains("\nx-ratelimit-remaining: "), "\(head.stdout)")
        #expect(head.stdout.contains("\n\n{\"login\":\"octocat\""), "\(head.stdout)")
        let missing = try await space.run("api", "github", "/users/nobody-here", environment: Self.environment(server))
        #expect(missing.status == 1)
        #expect(missing.stdout.contains("\"message\":\"Not Found\""), "\(missing.stdout)")
        #expect(
            missing.stderr == "apimacro: GET \(server.baseURL)/users/nobody-here → 404 Not Found: Not Found\n",
            "\(missing.stderr)")
        try await server.shutdown()
    }

    @Test(
        "which client: a name (with did you mean), a URL under a client's base URL, any other URL with no credentials")
    func clientResolution() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = Self.environment(server)
        let under = try await space.run(
            "api", "\(server.baseURL)/echo/under", "--jq", ".headers.authorization", environment: environment)
        #expect(under.stdout == "Bearer REDACTED\n", "\(under.stderr)")
        // localhost is another origin than 127.0.0.1: the token stays home.
        let other = server.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/echo/other"
        let plain = try await space.run("api", other, "--jq", ".headers.authorization", environment: environment)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == "null\n")
        #expect(server.requests.first { $0.path == "/echo/other" }?.header("authorization") == nil)
        let typo = try await space.run("api", "gihtub", "/users/octocat", environment: environment)
        #expect(typo.status == 2)
        #expect(typo.stderr.hasPrefix("apimacro: no client named 'gihtub'; did you mean 'github'?"), "\(typo.stderr)")
        // A path with no client is GitHub's, as in gh api (issue 36).
        let bare = try await space.run("api", "/users/octocat", environment: environment)
        #expect(bare.status == 0, "\(bare.stderr)")
        #expect(bare.stdout.hasPrefix("{\"login\":\"octocat\","), "\(bare.stdout)")
        try await server.shutdown()
    }

    @Test("secrets: an answer echoing the token shows REDACTED, and jq's env and $ENV see no variable")
    func secrets() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        var environment = Self.environment(server)
        environment["GITHUB_TOKEN"] = "ghp_other0123456789"
        let raw = try await space.run("api", "github", "/echo/secret", environment: environment)
        #expect(raw.status == 0, "\(raw.stderr)")
        #expect(raw.stdout.contains("Bearer REDACTED"), "\(raw.stdout)")
        let filtered = try await space.run(
            "api", "github", "/echo/secret", "--jq", ".headers.authorization, env, $ENV", environment: environment)
        #expect(filtered.stdout == "Bearer REDACTED\n{}\n{}\n", "\(filtered.stdout)")
        for result in [raw, filtered] {
            for secret in [Self.token, "ghp_other0123456789"] {
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
            }
        }
        try await server.shutdown()
    }

    @Test("a --jq filter that does not compile is a usage error before any request; jq's runtime errors exit 1")
    func filterErrors() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let bad = try await space.run(
            "api", "github", "/users/octocat", "--jq", ".[[", environment: Self.environment(server))
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("apimacro: --jq: syntax error, unexpected $end"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("compile error"), "\(bad.stderr)")
        #expect(server.requests.isEmpty)
        let failing = try await space.run(
            "api", "github", "/users/octocat", "--jq", ".login | error", environment: Self.environment(server))
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("jq: error: octocat\n"), "\(failing.stderr)")
        #expect(failing.stderr.hasSuffix("apimacro: --jq: the filter failed (jq's message is above)\n"))
        // A body jq cannot parse (600 arrays deep, past jq's 256): a message, not a crash.
        let deep = try await space.run(
            "api", "\(server.baseURL)/hostile/json/empty-objects?form=deep", "--jq", "length",
            environment: Self.environment(server))
        #expect(deep.status == 1)
        #expect(
            deep.stderr.hasPrefix("apimacro: --jq: the response is not JSON: Exceeds depth limit"), "\(deep.stderr)")
        // A value nested so deep that jq overflows its stack freeing it: its process dies (SIGSEGV),
        // this one reports it.
        let crash = try await space.run(
            "api", "github", "/users/octocat", "--jq", "reduce range(3000000) as $i (null; [.]) | length",
            environment: Self.environment(server))
        #expect(crash.status == 1)
        #expect(crash.stderr == "apimacro: --jq: jq crashed running the filter (SIGSEGV)\n", "\(crash.stderr)")
        try await server.shutdown()
    }

    @Test("a filter that never ends is stopped at the --timeout; one that allocates without end at its memory limit")
    func boundedFilter() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let endless = try await space.run(
            "api", "github", "/users/octocat", "--jq", "repeat(.) | empty", "--timeout", "10",
            environment: Self.environment(server))
        #expect(endless.status == 1)
        #expect(
            endless.stderr == "apimacro: api ran longer than its --timeout of 10 s (the --jq filter was stopped)\n",
            "\(endless.stderr)")
        // A resource cap is tested with a resource, not a clock: with APIMACRO_JQ_MEMORY=64 the
        // child may use 64 MiB, and the filter's first string (100 MB, one allocation) is past it.
        var small = Self.environment(server)
        small["APIMACRO_JQ_MEMORY"] = "64"
        let hungry = try await space.run(
            "api", "github", "/users/octocat", "--jq",
            #"[range(200) as $i | ("x" * 1000) * 100000 + ($i | tostring)] | length"#, environment: small)
        #expect(hungry.status == 1)
        #expect(
            hungry.stderr
                == "apimacro: --jq: the filter ran out of memory (it may use 64 MiB; APIMACRO_JQ_MEMORY sets another "
                + "limit)\n", "\(hungry.stderr)")
        // Under that limit a small filter still runs: the cap is the filter's, not the child's start.
        let modest = try await space.run("api", "github", "/users/octocat", "--jq", ".login", environment: small)
        #expect(modest.status == 0, "\(modest.stderr)")
        #expect(modest.stdout == "octocat\n")
        // A limit below what the child needs to start is refused before anything is sent.
        small["APIMACRO_JQ_MEMORY"] = "8"
        let tiny = try await space.run("api", "github", "/users/octocat", "--jq", ".login", environment: small)
        #expect(tiny.status == 2)
        #expect(
            tiny.stderr
                == "apimacro: APIMACRO_JQ_MEMORY: '8' is not a number of MiB; accepted: a whole number of 32 or more "
                + "(such as 32)\n", "\(tiny.stderr)")
        try await server.shutdown()
    }

    @Test("the cache, --record and --replay work for api as for macros; a looping pagination stops with an error")
    func pipelineFeatures() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = Self.environment(server)
        let first = try await space.run(
            "api", "github", "/users/octocat", "-v", "--record", "user.har", environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await space.run("api", "github", "/users/octocat", "-v", environment: environment)
        #expect(second.stdout == first.stdout)
        #expect(second.stderr.contains(" cache hit") || second.stderr.contains(" revalidated"), "\(second.stderr)")
        try await server.shutdown()
        let replayed = try await space.run(
            "api", "github", "/users/octocat", "--replay", "user.har", environment: environment)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stdout == first.stdout)
        let har = try String(contentsOf: space.url.appendingPathComponent("user.har"), encoding: .utf8)
        #expect(!har.contains(Self.token))
        let looping = try await TestServer.start()
        let loop = try await space.run(
            "api", "\(looping.baseURL)/hostile/loop/self", "--paginate", environment: Self.environment(looping))
        #expect(loop.status == 1)
        #expect(loop.stderr.contains("was already fetched in this iteration"), "\(loop.stderr)")
        try await looping.shutdown()
    }

    @Test("on a terminal: pretty and coloured as jq shows it (snapshot); a server's escapes are shown, not obeyed")
    func onATerminal() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = Self.environment(server)
        let pretty = try await TerminalOutputTests.onTerminal(
            ["api", "github", "/users/octocat", "--jq", "{login, id, site_admin, email, plan: [1, 2.5]}"], in: space,
            environment: environment)
        #expect(pretty.status == 0, "\(pretty.output)")
        try TerminalOutputTests.snapshot(pretty.output, "api_terminal.txt")
        let json = try await TerminalOutputTests.onTerminal(
            ["api", "\(server.baseURL)/hostile/escapes"], in: space, environment: environment)
        let text = try await TerminalOutputTests.onTerminal(
            ["api", "\(server.baseURL)/hostile/escapes?type=text/plain"], in: space, environment: environment)
        let raw = try await TerminalOutputTests.onTerminal(
            ["api", "\(server.baseURL)/hostile/escapes", "--jq", ".[]"], in: space, environment: environment)
        for output in [json.output, text.output, raw.output] {
            // Only apimacro's own colours (ESC [ digits ; m) may reach the terminal.
            let escapes = output.components(separatedBy: "\u{1B}").dropFirst()
            #expect(
                escapes.allSatisfy { $0.range(of: #"^\[[0-9;]*m"#, options: .regularExpression) != nil }, "\(output)")
            #expect(!output.contains("\u{9B}") && !output.contains("\u{7F}"), "\(output)")
        }
        #expect(text.output.contains("\\x1b]0;pwned\\x07"), "\(text.output)")
        #expect(raw.output.contains("\\x1b[2J"), "\(raw.output)")
        #expect(json.output.contains("\\u009b31mred"), "\(json.output)")
        // An error message quoting the server (its JSON `message`) on a terminal: shown, not obeyed,
        // in api's error line and in a macro's traceback.
        let hostile = #"{"message":"\u001b]0;pwned\u0007\u001b[2J"}"#
        server.inject([.status(400, body: hostile)], path: "/users/octocat")
        let failed = try await TerminalOutputTests.onTerminal(
            ["api", "github", "/users/octocat", "--color", "never"], in: space, environment: environment)
        server.inject([.status(400, body: hostile)], path: "/users/octocat")
        try space.write("user.py", "from apimacro import github\ngithub.user('octocat')\n")
        let traceback = try await TerminalOutputTests.onTerminal(
            ["run", "--color", "never", "user.py"], in: space, environment: environment)
        for output in [failed.output, traceback.output] {
            #expect(!output.contains("\u{1B}"), "\(output)")
            #expect(output.contains("400 Bad Request: \\x1b]0;pwned\\x07\\x1b[2J"), "\(output)")
        }
        // In a pipe the bytes are the server's.
        let piped = try await space.run(
            "api", "\(server.baseURL)/hostile/escapes?type=text/plain", environment: environment)
        #expect(piped.stdout == TerminalEscapes.texts.map { $0.1 + "\n" }.joined())
        try await server.shutdown()
    }

    @Test("a long --paginate on a terminal shows a progress line on stderr, erased before the answer; none in a pipe")
    func progressLine() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        // Eight pages, each answered 300 ms late: the line appears once the pages take 0.5 s.
        server.inject(Array(repeating: .delay(milliseconds: 300), count: 8), path: "/users/octocat/repos")
        let shown = try await TerminalOutputTests.onTerminal(
            ["api", "github", "/users/octocat/repos?per_page=1", "--paginate", "--jq", "length", "--color", "never"],
            in: space,
            environment: Self.environment(server))
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("github: 2 pages · 2 items · 2 requests · rate limit "), "\(shown.output)")
        // Erased ("\r" and erase-line) before the answer, which is alone on its line.
        #expect(shown.output.hasSuffix("\r\u{1B}[K8\n"), "\(shown.output)")
        server.inject(Array(repeating: .delay(milliseconds: 300), count: 8), path: "/users/octocat/repos")
        let piped = try await space.run(
            "api", "github", "/users/octocat/repos?per_page=1", "--paginate", "--jq", "length", "--no-cache",
            environment: Self.environment(server))
        #expect(piped.stdout == "8\n")
        #expect(piped.stderr == "")
        try await server.shutdown()
    }
}
