import Foundation
import TestSupport
import Testing

/// `apimacro.shortener` through the binary, against the loopback server's Bitly, Shlink and
/// (legacy) Google routes: every method, paging, each error class, the settings' errors, the
/// cap on requests in flight, logins and redaction.
@Suite("the shortener's backends through the binary")
struct ShortenerEndToEndTests {
    static let bitlyToken = "bitly-test-token"
    static let shlinkKey = "shlink-test-key"

    /// The variables that point the shortener at the server's Bitly routes.
    static func bitly(_ server: TestServer, _ extra: [String: String] = [:]) -> [String: String] {
        ["APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4", "APIMACRO_SHORTENER_TOKEN": bitlyToken].merging(
            extra
        ) { $1 }
    }

    /// The variables that point the shortener at the server's Shlink routes.
    static func shlink(_ server: TestServer, _ extra: [String: String] = [:]) -> [String: String] {
        [
            "APIMACRO_SHORTENER": "shlink", "APIMACRO_SHORTENER_URL": server.baseURL + "/shlink/rest/v3",
            "APIMACRO_SHORTENER_KEY": shlinkKey,
        ].merging(extra) { $1 }
    }

    /// Runs `macro` (saved as m.py) with `--no-cache` and `environment`, and parses its one line of JSON.
    static func run(_ macro: String, _ environment: [String: String], arguments: [String] = []) async throws
        -> (result: RunResult, json: Any?)
    {
        let space = try Workspace(files: ["m.py": macro])
        defer { space.remove() }
        let result = try await Binary.run(
            ["run", "--no-cache", "m.py"] + arguments, in: space.url, environment: environment)
        let json = result.stdout.split(separator: "\n").last.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8))
        }
        return (result, json)
    }

    /// `value` as compact JSON with sorted keys, to compare nested answers.
    static func text(_ value: Any?) -> String {
        guard let value,
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return "nil" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The server's requests under `prefix`, as `METHOD path?query`.
    static func calls(_ server: TestServer, under prefix: String) -> [String] {
        server.requests.filter { $0.path.hasPrefix(prefix) }.map { "\($0.method) \($0.uri)" }
    }

    @Test("Bitly: shorten (existing, new, custom), expand, clicks, links to the end and stopping early")
    func bitlyMethods() async throws {
        let server = try await TestServer.start()
        let (result, json) = try await Self.run(
            """
            import json
            from apimacro import shortener
            out = {"backend": shortener.backend}
            recorded = shortener.shorten("https://google.com/")
            out["recorded"] = [recorded[k] for k in ("id", "longUrl", "created_at", "backend")] + [recorded["raw"]["link"]]
            new = shortener.shorten("https://example.com/new")
            out["again"] = shortener.shorten("https://example.com/new")["id"] == new["id"]
            out["new"] = new["id"].startswith("https://bit.ly/") and new["created_at"] == "2026-01-01T00:00:00+0000"
            custom = shortener.shorten("https://example.com/launch", slug="launch", tags=["news", "q3"], domain="j.mp")
            out["custom"] = [custom["id"], custom["raw"]["tags"]]
            back = shortener.expand(custom["id"])
            out["expand"] = [back["id"], back["longUrl"], sorted(back["raw"])]
            out["clicks"] = [shortener.clicks("https://bit.ly/2WujBe0"), shortener.clicks("http://bit.ly/pg007")]
            every = list(shortener.links())
            out["links"] = [len(every), every[0]["id"], every[-1]["id"], every[-1]["longUrl"], every[-1]["backend"]]
            out["limited"] = [link["id"] for link in shortener.links(limit=60)][-1]
            out["none"] = list(shortener.links(limit=0))
            print(json.dumps(out))
            """, Self.bitly(server))
        let calls = Self.calls(server, under: "/bitly/v4")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let out = try #require(json as? [String: Any], "\(result.stdout)")
        #expect(out["backend"] as? String == "bitly")
        // laracrafts-bitly-shorten-200.http: id "bit.ly/2WujBe0", link over plain http in 2019.
        #expect(
            out["recorded"] as? [String] == [
                "https://bit.ly/2WujBe0", "https://google.com/", "1970-01-01T00:00:00+0000", "bitly",
                "http://bit.ly/2WujBe0",
            ])
        #expect(out["again"] as? Bool == true && out["new"] as? Bool == true)
        #expect(Self.text(out["custom"]) == #"["https://j.mp/launch",["news","q3"]]"#)
        #expect(
            Self.text(out["expand"])
                == #"["https://j.mp/launch","https://example.com/launch",["created_at","id","link","long_url"]]"#)
        #expect(out["clicks"] as? [Int] == [42, 7])
        // 120 made-up links, the recorded one, and the two made here: 123, newest first.
        #expect(
            out["links"] as? [AnyHashable] == [
                123, "https://j.mp/launch", "https://bit.ly/2WujBe0", "https://google.com/", "bitly",
            ])
        #expect(out["limited"] as? String == "https://bit.ly/pg063")
        #expect((out["none"] as? [Any])?.isEmpty == true)
        // The plan's limits were looked up once, before the first request.
        #expect(Array(calls.prefix(4)) == server.bitlyLimitLookupCalls, "\(calls)")
        let listing = calls.dropFirst(4).filter { $0.hasPrefix("GET /bitly/v4/user") || $0.contains("/bitlinks?") }
        #expect(!listing.contains("GET /bitly/v4/user/platform_limits"), "\(calls)")
        #expect(
            listing == [
                "GET /bitly/v4/user", "GET /bitly/v4/groups/Bj1tjw4uLSN/bitlinks?size=50",
                "GET /bitly/v4/groups/Bj1tjw4uLSN/bitlinks?search_after=after-50&size=50",
                "GET /bitly/v4/groups/Bj1tjw4uLSN/bitlinks?search_after=after-100&size=50",
                // links(limit=60): two pages of 50, not a third; links(limit=0): nothing.
                "GET /bitly/v4/user", "GET /bitly/v4/groups/Bj1tjw4uLSN/bitlinks?size=50",
                "GET /bitly/v4/groups/Bj1tjw4uLSN/bitlinks?search_after=after-50&size=50",
            ], "\(calls)")
        #expect(calls.contains("POST /bitly/v4/bitlinks") && calls.filter { $0 == "POST /bitly/v4/shorten" }.count == 3)
    }

    @Test("Shlink: findIfExists, a custom slug and tags, expand and clicks on two domains, every page")
    func shlinkMethods() async throws {
        let server = try await TestServer.start()
        let (result, json) = try await Self.run(
            """
            import json
            from apimacro import shortener
            out = {"backend": shortener.backend}
            existing = shortener.shorten("https://shlink.io")
            out["existing"] = [existing[k] for k in ("id", "longUrl", "created_at", "backend")]
            custom = shortener.shorten("https://example.com/y", slug="my-slug", tags=["t"])
            out["custom"] = [custom["id"], custom["raw"]["tags"], shortener.shorten("https://example.com/y", slug="my-slug", tags=["t"])["id"]]
            back = shortener.expand("https://s.test/12C18")
            out["expand"] = [back["id"], back["longUrl"], back["raw"]["title"]]
            out["clicks"] = [shortener.clicks("https://s.test/12Kb3"), shortener.clicks("https://example.com/123bA"), shortener.clicks(custom["id"])]
            every = list(shortener.links())
            out["links"] = [len(every), every[0]["id"], every[-1]["id"], every[-1]["created_at"]]
            out["limited"] = len(list(shortener.links(limit=51)))
            print(json.dumps(out))
            """, Self.shlink(server))
        let calls = Self.calls(server, under: "/shlink/rest/v3")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let out = try #require(json as? [String: Any], "\(result.stdout)")
        // The examples of shlink-v1_short-urls.json.
        #expect(
            out["existing"] as? [String] == [
                "https://s.test/12Kb3", "https://shlink.io", "2016-05-01T20:34:16+02:00", "shlink",
            ])
        #expect(Self.text(out["custom"]) == #"["https://s.test/my-slug",["t"],"https://s.test/my-slug"]"#)
        #expect(
            out["expand"] as? [AnyHashable] == [
                "https://s.test/12C18", "https://store.steampowered.com", "Welcome to Steam",
            ])
        #expect(out["clicks"] as? [Int] == [1029, 25, 0])
        #expect(
            out["links"] as? [AnyHashable] == [
                61, "https://s.test/my-slug", "https://example.com/123bA", "2015-10-01T20:34:16+02:00",
            ])
        #expect(out["limited"] as? Int == 51)
        let pages = calls.filter { $0.hasPrefix("GET /shlink/rest/v3/short-urls?") }
        #expect(
            pages == [
                // The next page's number set by the one page-number rule (`Pagination.pageParameter`),
                // as `api --paginate` sets it.
                "GET /shlink/rest/v3/short-urls?page=1&itemsPerPage=50",
                "GET /shlink/rest/v3/short-urls?itemsPerPage=50&page=2",
                // limit=51: the second page's first item ends it; no third page was asked for above either.
                "GET /shlink/rest/v3/short-urls?page=1&itemsPerPage=50",
                "GET /shlink/rest/v3/short-urls?itemsPerPage=50&page=2",
            ], "\(pages)")
        #expect(calls.contains("GET /shlink/rest/v3/short-urls/123bA?domain=example.com"))
        #expect(calls.contains("GET /shlink/rest/v3/short-urls/12C18?domain=s.test"))
    }

    @Test("each error class: Forbidden, NotFound, HTTPError naming the field, RateLimited, ParseError, ValueError")
    func errors() async throws {
        let server = try await TestServer.start()
        let macro = """
            import json
            import apimacro
            from apimacro import shortener
            out = []
            def attempt(call, *args, **kwargs):
                try:
                    call(*args, **kwargs)
                    out.append("no error")
                except (apimacro.APIError, ValueError, TypeError) as error:
                    out.append([type(error).__name__, getattr(error, "status", None), str(error).split(": ", 1)[-1]])

            """
        let bitly = try await Self.run(
            macro + """
                attempt(shortener.expand, "https://bit.ly/nothing1")
                attempt(shortener.shorten, "https://intranet/page")
                shortener.shorten("https://example.com/one", slug="taken")
                attempt(shortener.shorten, "https://example.com/two", slug="taken")
                attempt(shortener.shorten, "not a url")
                attempt(shortener.clicks, "https://bit.ly/")
                attempt(shortener.shorten, "https://example.com/", slug="")
                attempt(shortener.shorten, "https://example.com/", "j.mp")
                print(json.dumps(out))
                """, Self.bitly(server))
        #expect(bitly.result.status == 0, "\(bitly.result.stderr)")
        let rows = try #require(bitly.json as? [Any], "\(bitly.result.stdout)")
        /// A row as text: numbers as digits, None as "null".
        func row(_ rows: [Any], _ index: Int) -> [String]? {
            (rows[index] as? [Any])?.map { $0 is NSNull ? "null" : "\($0)" }
        }
        #expect(row(rows, 0) == ["NotFound", "404", "NOT_FOUND: What you are looking for cannot be found."])
        #expect(
            row(rows, 1) == [
                "HTTPError", "400", "INVALID_ARG_LONG_URL: The value provided is invalid. (field long_url: invalid)",
            ])
        #expect(
            row(rows, 2) == [
                "HTTPError", "400",
                "KEYWORD_UNAVAILABLE: The custom back-half is already in use. (field keyword: already_exists)",
            ])
        #expect(
            row(rows, 3) == [
                "ValueError", "null", #"shorten() long_url must be an absolute http(s) URL, not "not a url""#,
            ])
        #expect(row(rows, 4)?.first == "ValueError" && row(rows, 4)?[2].contains("back-half") == true)
        #expect(row(rows, 5) == ["ValueError", "null", "shorten() argument 'slug' must not be empty"])
        #expect(row(rows, 6) == ["TypeError", "null", "shorten() takes at most 1 positional argument (2 given)"])
        // None of the ValueErrors and TypeErrors sent anything: one expand, and three creations
        // (after the four lookups of the plan's limits).
        let sent = Self.calls(server, under: "/bitly/v4")
        #expect(Array(sent.prefix(4)) == server.bitlyLimitLookupCalls && sent.count == 8, "\(sent)")
        // A 429 (Bitly sends no rate-limit headers: here a retry-after past APIMACRO_MAX_WAIT), and
        // a 200 that holds no link.
        server.inject([.rateLimited(retryAfter: 3600)], path: "/bitly/v4/shorten")
        server.inject([.status(200, body: #"{"unexpected": true}"#)], path: "/bitly/v4/expand")
        let faults = try await Self.run(
            macro + """
                attempt(shortener.shorten, "https://example.com/limited")
                attempt(shortener.expand, "https://bit.ly/2WujBe0")
                print(json.dumps(out))
                """, Self.bitly(server))
        let faultRows = try #require(faults.json as? [Any], "\(faults.result.stdout)\(faults.result.stderr)")
        #expect(row(faultRows, 0)?.first == "RateLimited" && row(faultRows, 0)?[1] == "429", "\(faultRows)")
        #expect(row(faultRows, 1)?.prefix(2) == ["ParseError", "200"], "\(faultRows)")
        #expect(row(faultRows, 1)?[2].hasSuffix("/bitly/v4/expand did not answer with a short link (no id)") == true)
        let forbidden = try await Self.run(
            macro + "attempt(shortener.shorten, 'https://example.com/')\nprint(json.dumps(out))",
            Self.bitly(server, ["APIMACRO_SHORTENER_TOKEN": "not-the-token"]))
        // laracrafts-bitly-shorten-403.http.
        #expect(forbidden.result.stdout.contains(#"[["Forbidden", 403, "FORBIDDEN"]]"#), "\(forbidden.result.stdout)")
        let shlink = try await Self.run(
            macro + """
                attempt(shortener.expand, "https://s.test/nope1")
                attempt(shortener.shorten, "https://example.com/z", slug="12C18")
                attempt(shortener.shorten, "https://example.com/z", domain="not a host")
                print(json.dumps(out))
                """, Self.shlink(server))
        let wrongKey = try await Self.run(
            macro + "attempt(shortener.links().__next__)\nprint(json.dumps(out))",
            Self.shlink(server, ["APIMACRO_SHORTENER_KEY": "wrong-key"]))
        try await server.shutdown()
        #expect(
            shlink.result.stdout.contains(
                #"[["NotFound", 404, "Short URL not found: No URL found with short code \"nope1\" (shortCode \"nope1\")"], "#
                    + #"["HTTPError", 400, "Invalid custom slug: Provided slug \"12C18\" is already in use. (customSlug \"12C18\")"], "#
                    + #"["HTTPError", 400, "Invalid data: Provided data is not valid (invalid fields: domain)"]]"#),
            "\(shlink.result.stdout)\(shlink.result.stderr)")
        #expect(
            wrongKey.result.stdout.contains(
                #"[["Unauthorized", 401, "Invalid API key: Provided API key does not exist or is invalid."]]"#),
            "\(wrongKey.result.stdout)")
    }

    @Test(
        "settings: an unknown backend (variable or config.toml) exits 2 naming the source; no token or no Shlink URL sends nothing"
    )
    func settings() async throws {
        let server = try await TestServer.start()
        let macro = "from apimacro import shortener\nprint(shortener.shorten('https://example.com/'))\n"
        let space = try Workspace(files: ["m.py": macro])
        defer { space.remove() }
        let unknown = try await space.run("run", "m.py", environment: ["APIMACRO_SHORTENER": "tinyurl"])
        #expect(unknown.status == 2)
        #expect(
            unknown.stderr
                == "apimacro: APIMACRO_SHORTENER: 'tinyurl' is not a shortener backend; accepted: bitly, shlink, google, yourls\n"
        )
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let config = home.appendingPathComponent("config.toml")
        try Data("[shortener]\nbackend = \"Bitlyy\"\n".utf8).write(to: config)
        let fromFile = try await space.run("run", "m.py", environment: ["APIMACRO_HOME": home.path])
        #expect(fromFile.status == 2)
        #expect(
            fromFile.stderr
                == "apimacro: \(config.path): shortener.backend: 'Bitlyy' is not a shortener backend; accepted: bitly, shlink, google, yourls\n"
        )
        // The key stands for APIMACRO_SHORTENER: a good value in the file chooses the backend.
        try Data("[shortener]\nbackend = \"shlink\"\nurl = \"\(server.baseURL)/shlink/rest/v3\"\n".utf8).write(
            to: config)
        let chosen = try await space.run(
            "run", "m.py", environment: ["APIMACRO_HOME": home.path, "APIMACRO_SHORTENER_KEY": Self.shlinkKey])
        #expect(chosen.status == 0 && chosen.stdout.contains("'backend': 'shlink'"), "\(chosen.stderr)")
        let requests = server.requests.count
        let noToken = try await space.run(
            "run", "m.py", environment: ["APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4"])
        #expect(noToken.status == 1)
        #expect(
            noToken.stderr.contains(
                "apimacro.AuthError: shortener.shorten needs a Bitly access token: set APIMACRO_SHORTENER_TOKEN or run `apimacro login shortener`"
            ), "\(noToken.stderr)")
        let noURL = try await space.run(
            "run", "m.py", environment: ["APIMACRO_SHORTENER": "shlink", "APIMACRO_SHORTENER_KEY": Self.shlinkKey])
        #expect(noURL.status == 1)
        #expect(
            noURL.stderr.contains(
                "ValueError: shortener: Shlink has no default server: set APIMACRO_SHORTENER_URL (or [shortener] url in config.toml)"
            ), "\(noURL.stderr)")
        #expect(server.requests.count == requests, "no request without a token or a server")
        try await server.shutdown()
    }

    /// A macro that shortens `N` URLs through `apimacro.map` (natively, 8 at once), then again on
    /// eight Python threads (a lambda is no client method), and prints how many links it got.
    static let parallel = """
        import sys
        import apimacro
        from apimacro import shortener
        count, tag = int(sys.argv[1]), sys.argv[2]
        urls = [f"https://example.com/{tag}/{i}" for i in range(count)]
        native = apimacro.map(shortener.shorten, urls, concurrency=8)
        threads = apimacro.map(lambda url: shortener.shorten(url), [url + "/t" for url in urls], concurrency=8)
        print(len({link["id"] for link in native + threads}))
        """

    @Test("Bitly: apimacro.map keeps at most 5 requests in flight (8 asked for); the server counts them")
    func concurrencyCap() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["parallel.py": Self.parallel])
        defer { space.remove() }
        // No answer until 6 are in flight at once: an event. With the cap raised to 8 the client
        // gets there, so the check below can fail.
        server.setBudget(limit: 100_000, holdUntilInFlight: 6, exempting: server.bitlyLimitLookups)
        let control = try await Binary.run(
            ["run", "--no-cache", "parallel.py", "16", "control"], in: space.url,
            environment: Self.bitly(server, ["APIMACRO_SHORTENER_MAX_CONCURRENCY": "8"]))
        #expect(control.status == 0 && control.stdout == "32\n", "\(control.stderr.suffix(400))")
        #expect(server.budgetReport.gateOpened && server.budgetReport.peakInFlight > 5, "\(server.budgetReport)")
        // By default: no answer until 5 are in flight (the cap is reached), then each answer
        // 100 ms late so that requests keep overlapping; never a sixth.
        server.setBudget(
            limit: 100_000, delayMilliseconds: 100, holdUntilInFlight: 5, exempting: server.bitlyLimitLookups)
        let capped = try await Binary.run(
            ["run", "--no-cache", "parallel.py", "16", "capped"], in: space.url, environment: Self.bitly(server))
        let report = server.budgetReport
        try await server.shutdown()
        #expect(capped.status == 0 && capped.stdout == "32\n", "\(capped.stderr.suffix(400))")
        #expect(report.admitted == 32)
        #expect(report.gateOpened && report.peakInFlight == 5, "\(report)")
    }

    @Test("a token or key never shows: -v, the HAR file, an error body that echoes it, a traceback")
    func redaction() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "m.py": """
            import os, sys
            import apimacro
            from apimacro import shortener
            shortener.expand(sys.argv[1])
            try:
                shortener.shorten("https://example.com/echo")
            except apimacro.HTTPError as error:
                print("echoed:", error.body, str(error))
            secret = os.environ.get("APIMACRO_SHORTENER_TOKEN") or os.environ["APIMACRO_SHORTENER_KEY"]
            raise RuntimeError("the credential is " + secret)

            """
        ])
        defer { space.remove() }
        for (environment, secret, link, expand, shorten) in [
            (Self.bitly(server), Self.bitlyToken, "https://bit.ly/2WujBe0", "/bitly/v4/expand", "/bitly/v4/shorten"),
            (
                Self.shlink(server), Self.shlinkKey, "https://s.test/12C18", "/shlink/rest/v3/short-urls/12C18",
                "/shlink/rest/v3/short-urls"
            ),
        ] {
            let har = space.url.appendingPathComponent("run.har")
            try? FileManager.default.removeItem(at: har)
            // A hostile answer that repeats the credential back.
            server.inject(
                [
                    .status(
                        400, body: #"{"message":"BAD","description":"you sent \#(secret)","title":"sent \#(secret)"}"#)
                ],
                path: shorten)
            let result = try await Binary.run(
                ["run", "-v", "--no-cache", "--record", har.path, "m.py", link], in: space.url, environment: environment
            )
            let recorded = try String(contentsOf: har, encoding: .utf8)
            #expect(result.status == 1)
            #expect(result.stdout.contains("echoed:") && result.stdout.contains("REDACTED"), "\(result.stdout)")
            #expect(result.stderr.contains("RuntimeError: the credential is REDACTED"), "\(result.stderr)")
            #expect(result.stderr.contains("\(server.baseURL)\(expand)"), "-v lines: \(result.stderr)")
            for text in [result.stdout, result.stderr, recorded] { #expect(!text.contains(secret)) }
            #expect(recorded.contains("REDACTED") && recorded.contains(expand))
            let sent = server.requests.last { $0.path == expand }
            #expect(sent?.header(expand.hasPrefix("/bitly") ? "authorization" : "x-api-key")?.contains(secret) == true)
        }
        try await server.shutdown()
    }

    @Test("a hostile Bitly page whose pagination.next names another host: followed without the token")
    func nextPageElsewhere() async throws {
        let server = try await TestServer.start()
        let elsewhere = server.otherHostURL + "/bitly/v4/groups/Bj1tjw4uLSN/bitlinks?size=50"
        server.inject(
            [.status(200, body: #"{"links": [], "pagination": {"next": "\#(elsewhere)"}}"#)],
            path: "/bitly/v4/groups/Bj1tjw4uLSN/bitlinks")
        let (result, _) = try await Self.run(
            """
            import apimacro
            from apimacro import shortener
            try:
                print(len(list(shortener.links())))
            except apimacro.APIError as error:
                print(type(error).__name__, error.status)

            """, Self.bitly(server))
        let other = server.requests.filter { $0.listener == "127.0.0.2" }
        try await server.shutdown()
        // The other host answers as Bitly does to a request without the token.
        #expect(result.stdout == "Forbidden 403\n", "\(result.stdout)\(result.stderr)")
        #expect(other.count == 1 && other.first?.header("authorization") == nil, "\(other.map(\.headers))")
        #expect(!result.stderr.contains(Self.bitlyToken))
    }

    @Test(
        "login: Bitly asks for its token, Shlink for its key; the stored one is sent; auth status reads each backend's variable"
    )
    func login() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "m.py": "from apimacro import shortener\nprint(shortener.shorten('https://example.com/l')['id'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let file = home.appendingPathComponent("credentials.json").path
        let bitly = ["APIMACRO_HOME": home.path, "APIMACRO_SHORTENER_URL": server.baseURL + "/bitly/v4"]
        let login = try await space.run("login", "shortener", environment: bitly, stdin: "\(Self.bitlyToken)\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stdout
                == "Paste your Bitly access token (it is stored in \(file), mode 0600; APIMACRO_SHORTENER_TOKEN overrides it):\nshortener: key stored in \(file) (mode 0600); "
                + "stored in a file, not a keyring: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset), so no "
                + "keyring runs.\n"
                + "shortener: account apimacro-test is the active one.\n", "Bitly's GET /user names the account"
        )
        let run = try await space.run("run", "--no-cache", "m.py", environment: bitly)
        #expect(run.status == 0 && run.stdout.hasPrefix("https://bit.ly/"), "\(run.stderr)")
        #expect(server.requests.last?.header("authorization") == "Bearer \(Self.bitlyToken)")
        // A Shlink key in the environment is not Bitly's token: auth status names the stored login.
        let status = try await space.run(
            "auth", "status", environment: bitly.merging(["APIMACRO_SHORTENER_KEY": "k-1234"]) { $1 })
        #expect(status.stdout.contains("shortener") && status.stdout.contains("stored login"), "\(status.stdout)")
        let shlinkStatus = try await space.run(
            "auth", "status",
            environment: bitly.merging(["APIMACRO_SHORTENER": "shlink", "APIMACRO_SHORTENER_KEY": "k-1234"]) { $1 })
        #expect(shlinkStatus.stdout.contains("env APIMACRO_SHORTENER_KEY"), "\(shlinkStatus.stdout)")
        let shlinkLogin = try await space.run(
            "login", "shortener", environment: ["APIMACRO_HOME": home.path, "APIMACRO_SHORTENER": "shlink"],
            stdin: "\(Self.shlinkKey)\n")
        #expect(
            shlinkLogin.stdout.hasPrefix(
                "Paste your Shlink API key (it is stored in \(file), mode 0600; APIMACRO_SHORTENER_KEY overrides it):"),
            "\(shlinkLogin.stdout)")
        try await server.shutdown()
    }

    @Test("legacy Google: shorten, expand keeping its own keys, clicks from analytics; links says why not")
    func google() async throws {
        let server = try await TestServer.start()
        let (result, json) = try await Self.run(
            """
            import json
            import apimacro
            from apimacro import shortener
            short = shortener.shorten("https://example.com/legacy")
            back = shortener.expand("https://goo.gl/fbsS")
            out = [shortener.backend, short["longUrl"], short["kind"], back["status"], back["id"], back["created_at"],
                   shortener.clicks("https://goo.gl/fbsS"), shortener.clicks(short["id"])]
            try:
                shortener.links()
            except apimacro.AuthError as error:
                out.append(str(error))
            print(json.dumps(out))
            """,
            ["APIMACRO_SHORTENER_URL": server.baseURL + "/urlshortener/v1", "APIMACRO_SHORTENER_KEY": "AIza-test-key"])
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let values = try #require(json as? [Any], "\(result.stdout)")
        let out = values.map { $0 is NSNull ? "null" : "\($0)" }
        #expect(
            out == [
                "google", "https://example.com/legacy", "urlshortener#url", "OK", "https://goo.gl/fbsS", "null", "1234",
                "0",
                "shortener.links() is not offered by the legacy Google URL Shortener: it listed links only for an "
                    + "OAuth login, which apimacro's Google mode never had",
            ])
    }
}
