import Foundation
import TestSupport
import Testing

/// Pagination that loops, through the binary: the cache answering a page that links to itself,
/// and plugins' `next_url` and `page_param` (`PageHistory`).
@Suite("a hostile server's pagination loops end, through the binary", .serialized)
struct PaginationLoopEndToEndTests {
    @Test("a Link to the page itself, answered from the cache after the first time: one request, then a ParseError")
    func selfLinkFromCache() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "self.py": """
            import apimacro
            from apimacro import github
            seen = []
            try:
                for repo in github.paginate('/hostile/loop/self', limit=200):
                    seen.append(repo['id'])
            except apimacro.ParseError as e:
                print('ParseError', e)
            print(seen)
            """
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "self.py",
            environment: [
                "APIMACRO_GITHUB_URL": server.baseURL,
                "XDG_CACHE_HOME": space.url.appendingPathComponent("cache").path,
            ])
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "ParseError the next page, \(server.baseURL)/hostile/loop/self?per_page=100, was already fetched in "
                + "this iteration (1 page so far): the pagination goes round in a loop, so the list stops here\n[1]\n")
        #expect(server.requests.filter { $0.path == "/hostile/loop/self" }.count == 1)
    }

    static let loopPlugins = [
        "plugins/loopy/plugin.toml": """
        name = "loopy"
        description = "Two pages whose next_url names each other"
        base_url = "https://loopy.example.com"
        pagination = { kind = "next_url", path = "pagination.next_url" }

        [endpoints.pairs]
        path = "/hostile/loop/next-url/a"
        result = "items"
        """,
        "plugins/pager/plugin.toml": """
        name = "pager"
        description = "Numbered pages that never run dry"
        base_url = "https://pager.example.com"
        pagination = { kind = "page_param", param = "page", first = 1 }

        [endpoints.pages]
        path = "/hostile/loop/pages"
        params = { page = "int" }
        result = "items"
        """,
    ]

    @Test(
        "a plugin's next_url leading back, and a page_param that cannot go past the largest int: a ParseError each"
    )
    func pluginLoops() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(
            files: Self.loopPlugins.merging([
                "plugins.py": """
                import apimacro
                for name, call in [('loopy', lambda c: c.pairs(limit=200)),
                                   ('pager', lambda c: c.pages(page=9223372036854775807, limit=200))]:
                    seen = []
                    try:
                        for item in call(apimacro.client(name)):
                            seen.append(item['id'])
                    except apimacro.ParseError as e:
                        print(name, 'ParseError', e)
                    print(name, seen)
                """
            ]) { $1 })
        defer { space.remove() }
        let result = try await space.run(
            "run", "--no-cache", "plugins.py",
            environment: [
                "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
                "APIMACRO_LOOPY_URL": server.baseURL, "APIMACRO_PAGER_URL": server.baseURL,
            ])
        try await server.shutdown()
        #expect(result.status == 0 && !result.signalled, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(result.stdout)")
        guard lines.count == 4 else { return }
        #expect(
            lines[0]
                == "loopy ParseError the next page, \(server.baseURL)/hostile/loop/next-url/a, was already fetched in "
                + "this iteration (2 pages so far): the pagination goes round in a loop, so the list stops here")
        #expect(lines[1] == "loopy [1, 2]")
        #expect(
            lines[2]
                == "pager ParseError the next page, \(server.baseURL)/hostile/loop/pages?page=9223372036854775807, "
                + "was already fetched in this iteration (1 page so far): the pagination goes round in a loop, so "
                + "the list stops here")
        #expect(lines[3] == "pager ['9223372036854775807']")
        #expect(server.requests.filter { $0.path.hasPrefix("/hostile/loop/next-url/") }.count == 2)
        #expect(server.requests.filter { $0.path == "/hostile/loop/pages" }.count == 1)
    }
}
