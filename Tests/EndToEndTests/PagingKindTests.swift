import Foundation
import TestSupport
import Testing

/// Issue 39, "The paging real APIs use": plugins whose lists page by offset, by a cursor in the
/// body and by a cursor in a header, through the built binary against the loopback server's
/// `/paging/…` routes (documented shapes, see `PagingKindRoutes`), with the server's request
/// counts exact: every kind goes through the one page iterator, so `limit=` stops early and
/// `api --paginate` follows it too.
@Suite("plugin paging kinds: offset, cursor, header_cursor")
struct PagingKindTests {
    static func plugin(_ name: String, pagination: String, path: String, result: String?) -> String {
        """
        name = "\(name)"
        description = "Test plugin \(name)"
        base_url = "https://example.com"
        pagination = \(pagination)

        [endpoints.things]
        path = "\(path)"
        \(result.map { "result = \"\($0)\"" } ?? "")
        """
    }

    static let plugins = [
        "plugins/byoffset/plugin.toml": plugin(
            "byoffset",
            pagination:
                #"{ kind = "offset", param = "offset", limit_param = "limit", limit = 10, total = "meta.total" }"#,
            path: "/paging/offset", result: "items"),
        "plugins/shortpage/plugin.toml": plugin(
            "shortpage", pagination: #"{ kind = "offset", limit_param = "limit", limit = 20 }"#,
            path: "/paging/offset", result: "items"),
        "plugins/bycursor/plugin.toml": plugin(
            "bycursor", pagination: #"{ kind = "cursor", path = "response_metadata.next_cursor", param = "cursor" }"#,
            path: "/paging/cursor", result: "members"),
        "plugins/byheader/plugin.toml": plugin(
            "byheader", pagination: #"{ kind = "header_cursor", header = "X-Next-Cursor", param = "cursor" }"#,
            path: "/paging/header-cursor", result: nil),
    ]

    static let macro = """
        import apimacro, sys
        client = apimacro.client(sys.argv[1])
        limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
        ids = [thing["id"] for thing in client.things(limit=limit)] if limit else [thing["id"] for thing in client.things()]
        print(len(ids), ids == list(range(1, len(ids) + 1)))
        """

    func environment(_ server: TestServer, _ space: Workspace) -> [String: String] {
        var environment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]
        for name in ["BYOFFSET", "SHORTPAGE", "BYCURSOR", "BYHEADER"] {
            environment["APIMACRO_\(name)_URL"] = server.baseURL
        }
        return environment
    }

    @Test(
        "each kind lists all 45 items in exactly the pages it needs, and limit= stops early",
        arguments: [
            // offset by 10 with a total: pages at 0, 10, 20, 30, 40; the total ends it (no empty page).
            ("byoffset", "/paging/offset", 5, 3),
            // offset with 20 a page and no total: 20, 20, then a short page of 5 ends it.
            ("shortpage", "/paging/offset", 3, 2),
            // Slack's cursor with the server's 10 a page: 5 pages, the last with an empty cursor.
            ("bycursor", "/paging/cursor", 5, 3),
            // the header cursor: 5 pages, the last without the header.
            ("byheader", "/paging/header-cursor", 5, 3),
        ])
    func allItems(name: String, path: String, pages: Int, pagesForTwentyFive: Int) async throws {
        let server = try await TestServer.start()
        var files = Self.plugins
        files["list.py"] = Self.macro
        let space = try Workspace(files: files)
        defer { space.remove() }
        let all = try await space.run("run", "--no-cache", "list.py", name, environment: environment(server, space))
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout == "45 True\n", "\(all.stdout)")
        #expect(server.requests.filter { $0.path == path }.count == pages, "\(server.requests.map(\.uri))")
        let before = server.requests.count
        let some = try await space.run(
            "run", "--no-cache", "list.py", name, "25", environment: environment(server, space))
        #expect(some.status == 0, "\(some.stderr)")
        #expect(some.stdout == "25 True\n", "\(some.stdout)")
        // limit=25 stops the iteration: no page is fetched past the one that holds the 25th item.
        let asked = server.requests[before...].filter { $0.path == path }
        #expect(asked.count == pagesForTwentyFive, "\(asked.map(\.uri))")
        try await server.shutdown()
    }

    @Test("the offset sent: 0, then past each page's items, with the page size; api --paginate follows every kind")
    func offsetsAndApi() async throws {
        let server = try await TestServer.start()
        var files = Self.plugins
        files["list.py"] = Self.macro
        let space = try Workspace(files: files)
        defer { space.remove() }
        let environment = environment(server, space)
        let all = try await space.run("run", "--no-cache", "list.py", "byoffset", environment: environment)
        #expect(all.stdout == "45 True\n", "\(all.stderr)")
        let offsets = server.requests.filter { $0.path == "/paging/offset" }.map {
            "\($0.query["offset"] ?? "-")/\($0.query["limit"] ?? "-")"
        }
        #expect(offsets == ["-/10", "10/10", "20/10", "30/10", "40/10"])
        for (name, path) in [
            ("byoffset", "/paging/offset"), ("bycursor", "/paging/cursor"), ("byheader", "/paging/header-cursor"),
        ] {
            let before = server.requests.count
            let api = try await space.run(
                "api", name, path, "--paginate", "--jq", "length", "--no-cache", environment: environment)
            #expect(api.status == 0, "\(name): \(api.stderr)")
            #expect(api.stdout == "45\n", "\(name): \(api.stdout)")
            #expect(server.requests[before...].filter { $0.path == path }.count == 5, "\(name)")
        }
        try await server.shutdown()
    }

    @Test("plugins show names each kind")
    func showAndRefusal() async throws {
        let space = try Workspace(files: Self.plugins)
        defer { space.remove() }
        let environment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]
        let offset = try await space.run("plugins", "show", "byoffset", environment: environment)
        #expect(
            offset.stdout.contains(
                "offset (offset=0, then past each page's items, limit=10 a page until a page is empty or short, "
                    + "or the offset reaches meta.total)"), "\(offset.stdout)")
        let cursor = try await space.run("plugins", "show", "bycursor", environment: environment)
        #expect(
            cursor.stdout.contains("cursor (cursor= the cursor at response_metadata.next_cursor until it is empty)"),
            "\(cursor.stdout)")
        let header = try await space.run("plugins", "show", "byheader", environment: environment)
        #expect(header.stdout.contains("header_cursor (cursor= the X-Next-Cursor header until it is absent)"))
    }
}

/// Issue 39: errors inside a 200 (Slack's `ok: false`), declared per endpoint.
@Suite("plugin errors inside a 200")
struct AnswerErrorTests {
    static let slack = """
        name = "slackish"
        description = "Slack-shaped answers"
        base_url = "https://example.com"
        pagination = { kind = "cursor", path = "response_metadata.next_cursor", param = "cursor" }

        [endpoints.members]
        path = "/paging/cursor"
        params = { cursor = "string" }
        result = "members"
        error_when = { path = "ok", equals = false }
        error_path = "error"

        [endpoints.auth]
        path = "/paging/slack-error"
        error_path = "error"

        [endpoints.unchecked]
        path = "/paging/slack-error"
        """

    @Test("ok: false is an HTTPError with Slack's message, on the first page and on a later one; undeclared, a dict")
    func okFalse() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "plugins/slackish/plugin.toml": Self.slack,
            "slack.py": """
            import apimacro
            client = apimacro.client("slackish")
            print(len(list(client.members())))
            for call in (lambda: client.auth(), lambda: list(client.members(cursor="bm90IGEgY3Vyc29y"))):
                try:
                    call()
                except apimacro.HTTPError as e:
                    print(type(e).__name__, e.status, str(e).split(": ")[-1])
            print(client.unchecked())
            """,
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "--no-cache", "slack.py",
            environment: [
                "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
                "APIMACRO_SLACKISH_URL": server.baseURL,
            ])
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "45\nHTTPError 200 invalid_auth\nHTTPError 200 invalid_cursor\n{'ok': False, 'error': 'invalid_auth'}\n",
            "\(result.stdout)")
    }

    @Test("plugins show and help() say which answers are errors; a bad rule is refused with what to write")
    func shownAndChecked() async throws {
        let broken = Self.slack.replacingOccurrences(
            of: "error_when = { path = \"ok\", equals = false }", with: "error_when = { path = \"ok\" }")
        let space = try Workspace(files: [
            "plugins/slackish/plugin.toml": Self.slack, "bad/slackish/plugin.toml": broken,
        ])
        defer { space.remove() }
        let shown = try await space.run(
            "plugins", "show", "slackish",
            environment: ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path])
        #expect(
            shown.stdout.contains("An answer whose ok is false is an error, the message at error (raises HTTPError)."))
        #expect(shown.stdout.contains("An answer with error set is an error (raises HTTPError)."))
        let refused = try await space.run(
            "plugins", "show", "slackish",
            environment: ["APIMACRO_PLUGINS": space.url.appendingPathComponent("bad").path])
        #expect(
            refused.stderr.contains(
                "endpoints.members.error_when.equals: missing; write equals = false (the value that means the call failed)"
            ),
            "\(refused.stderr)")
    }
}

/// A list the API does not page (it ignores the offset or the page number) is not asked for ever.
@Suite("a list that does not page")
struct UnpagedListTests {
    @Test("offset and page_param against a list that ignores them: two requests, then a ParseError naming the page")
    func ignoredParameter() async throws {
        let server = try await TestServer.start()
        let manifest = { (name: String, pagination: String) in
            """
            name = "\(name)"
            description = "A list that does not page"
            base_url = "https://example.com"
            pagination = \(pagination)

            [endpoints.things]
            path = "/paging/cursor"
            result = "members"
            """
        }
        let space = try Workspace(files: [
            "plugins/byoffset/plugin.toml": manifest("byoffset", #"{ kind = "offset" }"#),
            "plugins/bypage/plugin.toml": manifest("bypage", #"{ kind = "page_param", param = "page" }"#),
            "list.py": """
            import apimacro, sys
            seen = []
            try:
                for thing in apimacro.client(sys.argv[1]).things():
                    seen.append(thing["id"])
            except apimacro.ParseError as e:
                print(len(seen), "answered exactly what the page before it did" in str(e))
            """,
        ])
        defer { space.remove() }
        for name in ["byoffset", "bypage"] {
            let before = server.requests.count
            let result = try await space.run(
                "run", "--no-cache", "list.py", name,
                environment: [
                    "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
                    "APIMACRO_\(name.uppercased())_URL": server.baseURL,
                ])
            #expect(result.status == 0, "\(result.stderr)")
            // The first page's 10 items, then the same page again: stopped there.
            #expect(result.stdout == "10 True\n", "\(name): \(result.stdout)")
            #expect(server.requests.count - before == 2, "\(name)")
        }
        try await server.shutdown()
    }
}
