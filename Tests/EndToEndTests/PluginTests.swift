import Foundation
import TestSupport
import Testing

/// Plugins as a user meets them: `plugins list|show`, the shipped plugins'
/// example macros, logins, and the Python client of a manifest, all against
/// the loopback server.
@Suite("plugins")
struct PluginTests {
    /// The shipped plugins pointed at the loopback server, with test credentials.
    static func environment(_ server: TestServer, credentials: Bool = true) -> [String: String] {
        var environment = [
            "APIMACRO_OPENWEATHER_URL": server.baseURL + "/openweather/data/2.5",
            "APIMACRO_FOURSQUARE_URL": server.baseURL + "/foursquare/v2",
            "APIMACRO_HACKERNEWS_URL": server.baseURL + "/hn/api/v1",
        ]
        if credentials {
            environment["APIMACRO_OPENWEATHER_KEY"] = "ow-test-key"
            environment["APIMACRO_FOURSQUARE_TOKEN"] = "fsq-token-1"
        }
        return environment
    }

    func rows(_ result: RunResult) throws -> [[String: Any]] {
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        return try #require(rows, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
    }

    @Test(
        "plugins list on the repository shows the three shipped plugins, credentials present or not (never the secret)")
    func list() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let bare = try await space.run("plugins", "list")
        #expect(bare.status == 0, "\(bare.stderr)")
        // Columns are separated by two spaces or more.
        let rows = bare.stdout.split(separator: "\n").map { line in
            line.replacingOccurrences(of: " {2,}", with: "|", options: .regularExpression).split(separator: "|").map(
                String.init)
        }
        try #require(rows.count == 4, "\(bare.stdout)")
        #expect(rows[0] == ["NAME", "ENDPOINTS", "CREDENTIALS", "DESCRIPTION"])
        #expect(rows[1].prefix(3) == ["foursquare", "2", "missing: apimacro login foursquare"])
        #expect(rows[1].last?.hasPrefix("Foursquare API v2") == true)
        #expect(rows[2].prefix(3) == ["hackernews", "3", "not needed"])
        #expect(rows[2].last?.hasPrefix("Hacker News search by Algolia") == true)
        #expect(rows[3].prefix(3) == ["openweather", "2", "missing: set APIMACRO_OPENWEATHER_KEY"])
        let keyed = try await space.run("plugins", environment: ["APIMACRO_OPENWEATHER_KEY": "ow-secret-key-1"])
        #expect(keyed.stdout.contains("  present (env APIMACRO_OPENWEATHER_KEY)  "))
        #expect(!keyed.stdout.contains("ow-secret-key-1"))
    }

    @Test("plugins show NAME: settings and every endpoint with its parameters; an unknown name is a usage error")
    func show() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run("plugins", "show", "openweather")
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout
        #expect(text.hasPrefix("openweather: OpenWeather 2.5"))
        #expect(
            text.contains(
                "  base URL:     https://api.openweathermap.org/data/2.5 (APIMACRO_OPENWEATHER_URL overrides it)"))
        #expect(
            text.contains(
                "  auth:         query_key: ?appid=KEY, the key from APIMACRO_OPENWEATHER_KEY or apimacro login openweather"
            ))
        #expect(text.contains("  macros:       openweather-now (apimacro run NAME)"))
        #expect(text.contains("  find(q, cnt=None, lang=None, type=None, units=None, limit=None)"))
        #expect(text.contains("    q: string, required, in the query"))
        #expect(text.contains("  GET /find on openweather."))
        let unknown = try await space.run("plugins", "show", "nope")
        #expect(unknown.status == 2)
        #expect(
            unknown.stderr
                == "apimacro: no plugin named 'nope'; loaded plugins: foursquare, hackernews, openweather (see apimacro plugins list)\n"
        )
    }

    @Test("the shipped example macros run by name (plugins' macros/ are on the macro path) against the loopback server")
    func shippedExamples() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let environment = Self.environment(server)
        let weather = try await space.run(
            "run", "--format", "json", "openweather-now", "--city", "Altstadt", "--like", environment: environment)
        let cities = try rows(weather)
        #expect(cities.map { $0["city"] as? String } == ["Altstadt", "Altstadt", "Altstadt-Lehel"])
        #expect(cities.first?["temp"] as? Double == 21.97)
        #expect(cities.first?["weather"] as? String == "light rain")
        let venues = try rows(
            try await space.run(
                "run", "--format", "json", "foursquare-venues", "--near", "Brooklyn, NY", environment: environment))
        #expect(venues.count == 4)
        #expect(venues.first?["name"] as? String == "Brooklyn Bridge Park - Pier 2")
        #expect(venues.first?["category"] as? String == "Parque")
        server.clearRequests()
        let stories = try rows(
            try await space.run(
                "run", "--format", "json", "hackernews-search", "--topic", "swift", "--scan", "30", "--top", "5",
                environment: environment))
        #expect(stories.count == 5)
        let points = stories.compactMap { $0["points"] as? Int }
        #expect(points == points.sorted(by: >))
        #expect(server.requests.map { $0.query["page"] ?? "0" } == ["0", "1"], "30 stories: two pages of 20, no third")
        let missing = try await space.run("run", "openweather-now", "--city", "Nowhere", environment: environment)
        #expect(missing.status == 1)
        #expect(missing.stderr == "no city named 'Nowhere' (try --like)\n")
        try await server.shutdown()
    }

    @Test("a bad key: Unauthorized with the API's message; the key never shows")
    func badKey() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        var environment = Self.environment(server)
        environment["APIMACRO_OPENWEATHER_KEY"] = "bad-secret-key-999"
        let result = try await space.run("run", "openweather-now", "--city", "Altstadt", environment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("apimacro.Unauthorized: GET "))
        #expect(result.stderr.contains("appid=REDACTED"))
        #expect(
            result.stderr.contains("Invalid API key. Please see https://openweathermap.org/faq#error401 for more info.")
        )
        #expect(!result.stderr.contains("bad-secret-key-999"))
        #expect(!(server.requests.first?.uri.contains("REDACTED") ?? true), "the real key went on the wire")
        try await server.shutdown()
    }

    @Test("a plugin key in a variable of any name is redacted in tracebacks")
    func keyRedactedInTraceback() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "plugins/odd/plugin.toml": Self.goodManifest(
                "odd", "show", "auth = { kind = \"query_key\", param = \"appid\", env = \"ODD_APPID\" }")
                + "path = \"/echo/show\"\n",
            "leak.py":
                "import apimacro\nraise RuntimeError('the key is ' + apimacro.client('odd').show()['query']['appid'])\n",
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "leak.py",
            environment: [
                "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
                "APIMACRO_ODD_URL": server.baseURL, "ODD_APPID": "odd-secret-value",
            ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("RuntimeError: the key is REDACTED"), "\(result.stderr)")
        #expect(!result.stderr.contains("odd-secret-value"))
        #expect(server.requests.first?.query["appid"] == "odd-secret-value")
        try await server.shutdown()
    }

    @Test("login foursquare (oauth2_implicit) stores the token; auth status and the example use it; logout forgets it")
    func foursquareLogin() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        var environment = Self.environment(server, credentials: false)
        environment["APIMACRO_FOURSQUARE_CLIENT_ID"] = "fsq-app"
        let start = try await space.run("login", "foursquare", environment: environment)
        #expect(start.status == 1, "nothing pasted: not logged in yet (issue 36): \(start.stderr)")
        let url = try #require(
            start.stdout.split(separator: "\n").first { $0.hasPrefix("https://foursquare.com/oauth2/authenticate?") })
        #expect(
            url.contains(
                "client_id=fsq-app&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback&response_type=token&state="))
        let state = try #require(url.split(separator: "state=").last)
        let finish = try await space.run(
            "login", "foursquare", "--redirect-url",
            "http://127.0.0.1:8765/callback#access_token=fsq-token-1&state=\(state)",
            environment: environment)
        #expect(finish.status == 0, "\(finish.stderr)")
        #expect(finish.stdout.hasPrefix("foursquare: logged in; the token is stored in "))
        let status = try await space.run("auth", "status", environment: environment)
        #expect(status.stdout.contains("foursquare   credentials from stored login"), "\(status.stdout)")
        #expect(status.stdout.contains("openweather  no credentials"), "aligned columns: \(status.stdout)")
        #expect(!status.stdout.contains("fsq-token-1"))
        let venues = try rows(
            try await space.run(
                "run", "--format", "json", "foursquare-venues", "--near", "Nashville, TN", "--query", "coffee",
                environment: environment))
        #expect(!venues.isEmpty)
        #expect(server.requests.last?.query["oauth_token"] == "fsq-token-1")
        #expect(server.requests.last?.query["v"] == "20180323")
        _ = try await space.run("logout", "foursquare", environment: environment)
        let after = try await space.run("run", "foursquare-venues", environment: environment)
        #expect(after.status == 1)
        #expect(
            after.stderr.contains(
                "apimacro.AuthError: foursquare needs credentials: run apimacro login foursquare (or set APIMACRO_FOURSQUARE_TOKEN)"
            ))
        try await server.shutdown()
    }

    static func goodManifest(_ name: String, _ endpoint: String, _ body: String) -> String {
        "name = \"\(name)\"\ndescription = \"Test plugin \(name)\"\nbase_url = \"https://example.com\"\n\(body)\n[endpoints.\(endpoint)]\n"
    }

    /// Issue 24: toml++ aborted (SIGABRT) on this shape, so every command that looked at the
    /// plugins died: `plugins list`, and `run` of any macro by name.
    @Test("a plugin.toml with a date, a space and a digit is one plugin that did not load; every command goes on")
    func dateSpaceDigit() async throws {
        let space = try Workspace(files: [
            "more/dated/plugin.toml": Self.goodManifest("dated", "x", "released = 1979-05-27 5") + "path = \"/x\"\n",
            "macros/hi.py": "print('hi')\n",
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("more").path]
        let file = space.url.appendingPathComponent("more/dated/plugin.toml").path
        let list = try await space.run("plugins", "list", environment: environment)
        #expect(list.status == 1 && !list.signalled, "\(list.stderr)")
        #expect(list.stdout.contains("\nhackernews "), "\(list.stdout)")
        #expect(
            list.stdout.contains(
                "  dated: \(file): line 4: expected the end of the line after a statement, found '5'; fix the TOML syntax"
            ),
            "\(list.stdout)")
        let run = try await space.run("run", "hi", environment: environment)
        #expect(run.status == 0 && run.stdout == "hi\n", "\(run.stderr)")
    }

    @Test(
        "one broken plugin beside two good ones: both good ones work, the broken one is reported by plugins list and client()"
    )
    func brokenBesideGood() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "more/alpha/plugin.toml": Self.goodManifest(
                "alpha", "search", "pagination = { kind = \"page_param\", param = \"page\", first = 0 }")
                + "path = \"/hn/api/v1/search\"\nparams = { query = \"string!\" }\nresult = \"hits\"\n",
            "more/broken/plugin.toml": Self.goodManifest("broken", "x", "auth = { kind = \"magic\" }")
                + "path = \"/x\"\n",
            "more/gamma/plugin.toml": Self.goodManifest(
                "gamma", "find", "auth = { kind = \"query_key\", param = \"appid\", env = \"GAMMA_KEY\" }")
                + "path = \"/openweather/data/2.5/find\"\nparams = { q = \"string!\", type = \"string\" }\nresult = \"list\"\n",
            "both.py": """
            import apimacro
            alpha = list(apimacro.client("alpha").search(query="x", limit=3))
            gamma = list(apimacro.client("gamma").find(q="Altstadt", type="like"))
            try:
                apimacro.client("broken")
            except ImportError as error:
                print("ERR", error)
            print(len(alpha), len(gamma), sorted(apimacro.plugins))
            """,
        ])
        defer { space.remove() }
        let environment = [
            "APIMACRO_PLUGINS": space.url.appendingPathComponent("more").path, "APIMACRO_ALPHA_URL": server.baseURL,
            "APIMACRO_GAMMA_URL": server.baseURL, "GAMMA_KEY": "ow-test-key",
        ]
        let brokenFile = space.url.appendingPathComponent("more/broken/plugin.toml").path
        let problem =
            "\(brokenFile): auth.kind: unknown kind \"magic\"; use one of none, query_key, header_key, bearer, basic, oauth2_implicit"
        let list = try await space.run("plugins", "list", environment: environment)
        // The others are listed, but a script sees that one failed.
        #expect(list.status == 1)
        #expect(list.stdout.contains("\nalpha "))
        #expect(list.stdout.contains("\ngamma "))
        #expect(
            list.stdout.hasSuffix("Failed to load (the other plugins work):\n  broken: \(problem)\n"), "\(list.stdout)")
        let run = try await space.run("run", "both.py", environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout
                == "ERR plugin 'broken' did not load: \(problem)\n3 3 ['alpha', 'foursquare', 'gamma', 'hackernews', 'openweather']\n"
        )
        #expect(run.stderr.isEmpty, "a broken plugin is not reported unless asked for")
        try await server.shutdown()
    }

    @Test(
        "a next_url plugin pages through the page iterator every client uses: the first page is fetched once, limit stops early"
    )
    func nextURLPages() async throws {
        let server = try await TestServer.start()
        // The loopback server's Instagram v1 routes: 50 followers in pages of `count`, linked by pagination.next_url.
        let space = try Workspace(files: [
            "plugins/gram/plugin.toml": """
            name = "gram"
            description = "Instagram v1 followers, paged by next_url"
            base_url = "https://gram.example.com"
            auth = { kind = "query_key", param = "access_token", env = "APIMACRO_GRAM_TOKEN" }
            pagination = { kind = "next_url", path = "pagination.next_url" }

            [endpoints.followers]
            path = "/users/self/followed-by"
            params = { count = "int" }
            result = "data"
            """,
            "gram.py": """
            import apimacro, json
            gram = apimacro.client("gram")
            every = list(gram.followers(count=20))
            some = list(gram.followers(count=20, limit=25))
            print(json.dumps({"all": len(every), "unique": len({user["id"] for user in every}), "some": len(some),
                              "type": type(gram.followers(count=20)).__name__}))
            """,
        ])
        defer { space.remove() }
        let environment = [
            "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
            "APIMACRO_GRAM_URL": server.baseURL + "/instagram/v1", "APIMACRO_GRAM_TOKEN": "ig-token-gram",
        ]
        let result = try await space.run("run", "--no-cache", "gram.py", environment: environment)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == #"{"all": 50, "unique": 50, "some": 25, "type": "PageIterator"}"# + "\n")
        let pages = server.requests.filter { $0.path.hasSuffix("/followed-by") }
        // 3 pages for every follower, 2 for the first 25, 1 for the iterator only built (its
        // page ahead is fetched once an item is taken, never here).
        #expect(pages.count == 6, "\(pages.map(\.path))")
    }

    static let demoManifest = """
        name = "demo"
        description = "Every client feature"
        base_url = "https://demo.example.com"
        auth = { kind = "header_key", header = "X-Demo-Key", env = "APIMACRO_DEMO_KEY" }
        pagination = { kind = "page_param", param = "page", first = 0 }
        errors = { message = "error" }

        [endpoints.search]
        description = "Search stories."
        path = "/hn/api/v1/search"
        params = { query = "string!", hitsPerPage = "int" }
        result = "hits"

        [endpoints.item]
        path = "/hn/api/v1/items/{id}"
        params = { id = "int!" }

        [endpoints.create]
        method = "POST"
        path = "/echo/{kind}"
        params = { kind = "string!", title = "string!", count = "int", from = "string" }

        [endpoints.feed]
        path = "/feed.rss"
        response = "xml"

        [endpoints.atom]
        path = "/feed.atom"
        response = "text"
        """

    @Test(
        "the Python client: endpoint methods with signatures and docstrings, call, get, paginate, plugin.py, xml and text, errors"
    )
    func pythonClient() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "plugins/demo/plugin.toml": Self.demoManifest,
            "plugins/demo/plugin.py": """
            def top_titles(client, query, n=3):
                \"\"\"The titles of the first n hits.\"\"\"
                return [hit["title"] for hit in client.search(query=query, limit=n)]

            def _helper():
                pass
            """,
            "demo.py": """
            import apimacro, inspect, json
            demo = apimacro.client("demo")
            out = {
                "sig": str(inspect.signature(demo.search)),
                "doc": demo.search.__doc__.splitlines()[:3],
                "create_sig": str(inspect.signature(demo.create)),
                "item": demo.item(40000003)["title"],
                "call": len(list(demo.call("search", query="x", limit=25))),
                "all": len(list(demo.search("x"))),
                "created": demo.create(kind="k1", title="Hi", count=2, **{"from": "me"}),
                "feed": demo.feed().tag,
                "atom": demo.atom()[:5],
                "get": demo.get("/hn/api/v1/search", params={"query": "q", "page": 2})["page"],
                "paginate": len(list(demo.paginate("/hn/api/v1/search", params={"query": "q"}, result="hits"))),
                "plugin_py": demo.top_titles("swift", n=2),
                "dir": "top_titles" in dir(demo) and "_helper" not in dir(demo),
                "endpoints": demo.endpoints,
                "same": apimacro.plugins["demo"] is demo,
            }
            try:
                demo.item(7)
            except apimacro.NotFound as error:
                out["not_found"] = [error.status, error.api, str(error)]
            out["created"] = {k: out["created"][k] for k in ("method", "path", "json")} | {"key": out["created"]["headers"]["x-demo-key"]}
            print(json.dumps(out))
            """,
            "invalid.py": """
            import apimacro
            demo = apimacro.client("demo")
            for call in (lambda: demo.search(), lambda: demo.search(query=1), lambda: demo.call("search", query="x", bogus=1),
                         lambda: demo.item(id="x"), lambda: demo.search(query=["a"]), lambda: demo.call("nope")):
                try:
                    call()
                except ValueError as error:
                    print(type(error).__name__, error)
            try:
                apimacro.client("nothing")
            except LookupError as error:
                print(type(error).__name__, error)
            """,
        ])
        defer { space.remove() }
        let environment = [
            "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path, "APIMACRO_DEMO_URL": server.baseURL,
            "APIMACRO_DEMO_KEY": "demo-key-1234",
        ]
        let invalid = try await space.run("run", "invalid.py", environment: environment)
        #expect(invalid.status == 0, "\(invalid.stderr)")
        #expect(
            invalid.stdout.split(separator: "\n") == [
                "ValueError demo.search() needs the parameter 'query' (string)",
                "ValueError demo.search() parameter 'query' must be a str, not int \"1\"",
                "ValueError demo.search() has no parameter 'bogus'; it takes query, hitsPerPage",
                "ValueError demo.item() parameter 'id' must be an int, not str \"x\"",
                "ValueError demo.search() parameter 'query' must be a str, int, float or bool, not list",
                "ValueError demo has no endpoint 'nope'; it has atom, create, feed, item, search",
                "LookupError no plugin named 'nothing'; loaded plugins: demo, foursquare, hackernews, openweather (see apimacro plugins list)",
            ])
        #expect(server.requests.isEmpty, "parameters are checked before any request")
        let result = try await space.run("run", "demo.py", environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let out = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(out["sig"] as? String == "(query, hitsPerPage=None, *, limit=None, cache=None)")
        #expect(out["doc"] as? [String] == ["search(query, hitsPerPage=None, limit=None)", "", "Search stories."])
        #expect(out["create_sig"] as? String == "(**params)")
        #expect(out["item"] as? String == "Story story 3")
        #expect(out["call"] as? Int == 25)
        #expect(out["all"] as? Int == 45)
        let created = try #require(out["created"] as? [String: Any])
        #expect(created["method"] as? String == "POST")
        #expect(created["path"] as? String == "/echo/k1")
        #expect((created["json"] as? [String: Any])?.keys.sorted() == ["count", "from", "title"])
        #expect(created["key"] as? String == "demo-key-1234")
        #expect(out["feed"] as? String == "rss")
        #expect(out["atom"] as? String == "<?xml")
        #expect(out["get"] as? Int == 2)
        #expect(out["paginate"] as? Int == 45)
        #expect(out["plugin_py"] as? [String] == ["swift story 1", "swift story 2"])
        #expect(out["dir"] as? Bool == true)
        #expect(out["endpoints"] as? [String] == ["atom", "create", "feed", "item", "search"])
        #expect(out["same"] as? Bool == true)
        let notFound = try #require(out["not_found"] as? [Any])
        #expect(notFound.first as? Int == 404)
        #expect(notFound.dropFirst().first as? String == "demo")
        #expect((notFound.last as? String)?.hasSuffix("/hn/api/v1/items/7 → 404 Not Found: Not Found") == true)
        try await server.shutdown()
    }
}
