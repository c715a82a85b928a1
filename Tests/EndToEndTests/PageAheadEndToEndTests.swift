import Foundation
import TestSupport
import Testing

/// A page iterator fetches the next page while the macro uses up the one before it, through the
/// binary, counted in the loopback server's request log (`/pages/numbered`: 3 items a page).
@Suite("pages fetched ahead, through the binary", .serialized)
struct PageAheadEndToEndTests {
    /// Python defining `wait_for_go()`, which returns once the file `go` exists (the test
    /// creates it when it has seen the request it waits for): an event, with a long guard.
    static let waitForGo = """
        import os, time
        def wait_for_go():
            end = time.monotonic() + 600
            while not os.path.exists('go'):
                if time.monotonic() > end:
                    raise SystemExit('gave up waiting for go')
                time.sleep(0.01)

        """

    /// The page numbers of the `/pages/numbered` requests carrying `tag`, in arrival order.
    static func pages(_ server: TestServer, tag: String) -> [Int] {
        server.requests.filter { $0.path == "/pages/numbered" && $0.query["tag"] == tag }
            .map { Int($0.query["page"] ?? "1") ?? 1 }
    }

    static func environment(_ server: TestServer, _ space: Workspace) -> [String: String] {
        [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_pageahead",
            "APIMACRO_GITHUB_PACE": "off", "XDG_CACHE_HOME": space.url.appendingPathComponent("cache").path,
        ]
    }

    @Test("a whole loop fetches each page once; a second loop is answered by the cache, no request")
    func wholeLoop() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "all.py": """
            from apimacro import github
            for _ in range(2):
                ids = [r['id'] for r in github.paginate('/pages/numbered', params={'pages': 5, 'tag': 'all'})]
                print(len(ids), ids == list(range(1, 16)))
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "all.py", environment: Self.environment(server, space))
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "15 True\n15 True\n")
        #expect(Self.pages(server, tag: "all") == [1, 2, 3, 4, 5])
    }

    @Test("limit fetches no page past the one holding its last item")
    func limitStops() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "limit.py": """
            from apimacro import github
            six = [r['id'] for r in github.paginate('/pages/numbered', params={'tag': 'six'}, limit=6)]
            seven = [r['id'] for r in github.paginate('/pages/numbered', params={'tag': 'seven'}, limit=7)]
            print(six, seven)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "limit.py", environment: Self.environment(server, space))
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "[1, 2, 3, 4, 5, 6] [1, 2, 3, 4, 5, 6, 7]\n")
        #expect(Self.pages(server, tag: "six") == [1, 2])
        #expect(Self.pages(server, tag: "seven") == [1, 2, 3])
    }

    @Test("the next page is asked for while the macro is still on the first; a break then costs that one request")
    func breakEarly() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "early.py": Self.waitForGo + """
                from apimacro import github
                for repo in github.paginate('/pages/numbered', params={'tag': 'early'}):
                    wait_for_go()
                    break
                # The loop is over: no page after the one fetched ahead is asked for.
                print('first', repo['id'])
                print('after', len(list(github.paginate('/pages/numbered', params={'tag': 'after', 'pages': 1}))))
                """
        ])
        defer { space.remove() }
        // The macro is on its first item until `go` appears, which the test creates only once the
        // server has seen page 2: without the fetch ahead it would never come.
        let result = try await space.run("run", "--no-cache", "early.py", environment: Self.environment(server, space))
        {
            _ in
            try await waitUntil("page 2 to be asked for") { Self.pages(server, tag: "early").contains(2) }
            try Data().write(to: space.url.appendingPathComponent("go"))
        }
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "first 1\nafter 3\n")
        #expect(Self.pages(server, tag: "early") == [1, 2])
    }

    @Test("a loop that stops while the page ahead is still held by the server ends without waiting for it")
    func cancelledWhenHeld() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "held.py": """
            from apimacro import github
            def first():
                for repo in github.paginate('/pages/numbered', params={'tag': 'held', 'hold': 2}):
                    return repo['id']
            print('first', first())
            print('after', len(list(github.paginate('/pages/numbered', params={'tag': 'after', 'pages': 1}))))
            it = github.paginate('/pages/numbered', params={'tag': 'closed', 'hold': 2})
            def gen():
                yield from it
            g = gen()
            print('next', next(g)['id'])
            g.close()
            del g, it
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "held.py", environment: Self.environment(server, space))
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "first 1\nafter 3\nnext 1\n")
        #expect(!Self.pages(server, tag: "held").contains(3))
        #expect(!Self.pages(server, tag: "closed").contains(3))
    }

    @Test("Ctrl-C with the page ahead held by the server exits 130 at once, not after the page")
    func interruptWhileWaitingAhead() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "held.py": """
            from apimacro import github
            for repo in github.paginate('/pages/numbered', params={'tag': 'sigint', 'hold': 2}):
                print(repo['id'], flush=True)
            """
        ])
        defer { space.remove() }
        // Ctrl-C once page 2 (held an hour) has been asked for: the macro is on page 1's items or
        // already waiting for page 2; either way it ends now, its transfer cancelled.
        let result = try await space.run(
            "run", "--no-cache", "held.py", environment: Self.environment(server, space), defaultSIGINT: true
        ) { process in
            try await waitUntil("page 2 to be asked for") { Self.pages(server, tag: "sigint").contains(2) }
            kill(process.processIdentifier, SIGINT)
        }
        try await server.shutdown()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(!result.stderr.contains("NetworkError"), "\(result.stderr)")
        #expect(Self.pages(server, tag: "sigint") == [1, 2])
    }

    @Test(
        "a page fetched ahead that fails raises its error where the loop reaches it, after the page before it",
        arguments: [404, 500])
    func errorWhenReached(status: Int) async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fail.py": Self.waitForGo + """
                import apimacro
                from apimacro import github
                try:
                    for repo in github.paginate('/pages/numbered', params={'tag': 'fail', 'fail': 3, 'status': \(status)}):
                        if repo['id'] == 4:
                            wait_for_go()
                        print(repo['id'], flush=True)
                except apimacro.APIError as e:
                    print(type(e).__name__, e.status)
                """
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "--no-cache", "fail.py", environment: Self.environment(server, space)
        ) {
            _ in
            // Page 3 has been asked for while the macro is still on page 2.
            try await waitUntil("page 3 to be asked for") { Self.pages(server, tag: "fail").contains(3) }
            try Data().write(to: space.url.appendingPathComponent("go"))
        }
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let name = status == 404 ? "NotFound" : "HTTPError"
        #expect(result.stdout == "1\n2\n3\n4\n5\n6\n\(name) \(status)\n")
        #expect(!Self.pages(server, tag: "fail").contains(4))
        #expect(Self.pages(server, tag: "fail") == [1, 2, 3])
    }

    @Test(
        "a page that is no list, with the next one asked for before it was decoded: the error, then that page again"
    )
    func unusablePageAgain() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "again.py": """
            import apimacro
            from apimacro import github
            pages = github.paginate('/pages/numbered', params={'tag': 'again', 'once': 2, 'pages': 3})
            ids = [next(pages)['id'] for _ in range(3)]
            try:
                next(pages)
            except apimacro.ParseError as e:
                print('ParseError', 'list of items' in str(e))
            # The iterator stays on page 2 (asked for again), and page 3 is not a loop.
            print(ids + [repo['id'] for repo in pages])
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--no-cache", "again.py", environment: Self.environment(server, space))
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ParseError True\n[1, 2, 3, 4, 5, 6, 7, 8, 9]\n")
        // Page 3 may have been asked for (and cancelled) while page 2 was decoded the first time.
        #expect(Self.pages(server, tag: "again").filter { $0 != 3 } == [1, 2, 2])
        #expect(Self.pages(server, tag: "again").last == 3)
    }

    @Test("a cursor POSTed to GraphQL is not asked for ahead: page 2 goes after what the macro did on page 1")
    func noPostAhead() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "graphql.py": """
            from apimacro import github
            ISSUES = '''query($owner: String!, $name: String!, $cursor: String) {
              repository(owner: $owner, name: $name) {
                issues(first: 5, after: $cursor, states: OPEN) {
                  pageInfo { hasNextPage endCursor }
                  nodes { number }
                }
              }
            }'''
            numbers = []
            for issue in github.graphql_paginate(ISSUES, 'repository.issues', limit=10,
                                                 owner='octokit-fixture-org', name='paginate-issues'):
                if not numbers:
                    github.paginate('/pages/numbered', params={'tag': 'marker', 'pages': 1}).__next__()
                numbers.append(issue['number'])
            print(len(numbers))
            """
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "--no-cache", "graphql.py",
            environment: Self.environment(server, space).merging([
                "APIMACRO_GITHUB_GRAPHQL_URL": server.baseURL + "/graphql"
            ]) { $1 })
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "10\n")
        let order = server.requests.map { $0.path == "/graphql" ? "graphql" : $0.query["tag"] ?? $0.path }
        #expect(order.filter { $0 == "graphql" || $0 == "marker" } == ["graphql", "marker", "graphql"], "\(order)")
    }
}
