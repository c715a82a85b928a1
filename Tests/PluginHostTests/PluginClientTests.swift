import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

@testable import PluginHost

/// Manifest clients of every shape, loaded from temporary folders and called
/// against the loopback server.
@Suite("manifest clients against the loopback server")
struct PluginClientTests {
    /// Loads `text` as plugin `name` from a temporary folder, points it at `<server>/<prefix>` with
    /// `APIMACRO_<NAME>_URL`, and runs `body` with the client.
    func withPlugin(
        _ name: String, prefix: String, _ text: String, environment: [String: String] = [:], storedToken: String? = nil,
        _ body: (PluginClient, TestServer) async throws -> Void
    ) async throws {
        let folder = PluginFolder()
        defer { folder.remove() }
        try folder.write(name, text)
        let registry = PluginRegistry.load(folders: [folder.url], reservedNames: builtInNames)
        #expect(registry.failures.map(\.error.description) == [])
        let manifest = try #require(registry.plugin(named: name))
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test")
        var env = environment
        env["APIMACRO_\(name.uppercased())_URL"] = server.baseURL + prefix
        let client = PluginClient(
            manifest: manifest, environment: env, storedToken: storedToken.map(Secret.init), transport: transport,
            log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []), maxWait: 2)
        do { try await body(client, server) } catch {
            try await transport.shutdown()
            try await server.shutdown()
            throw error
        }
        try await transport.shutdown()
        try await server.shutdown()
    }

    /// Every item of every page of `endpoint`, and how many requests it took.
    func all(_ client: PluginClient, _ endpoint: String, _ arguments: [(String, ParameterValue)]) async throws -> (
        items: [Any], requests: Int
    ) {
        let (declared, first) = try client.request(endpoint, arguments)
        var next: Request? = first
        var items: [Any] = []
        var requests = 0
        while let request = next {
            let response = try await client.send(request)
            requests += 1
            let list = try #require(JSONPath.value(in: response.body, path: declared.result) as? [Any])
            items += list
            next = client.nextPage(after: response, request: request, itemCount: list.count)
        }
        return (items, requests)
    }

    func json(_ response: Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static let openWeather = """
        name = "weather"
        description = "OpenWeather"
        base_url = "https://api.openweathermap.org/data/2.5"
        auth = { kind = "query_key", param = "appid", env = "APIMACRO_WEATHER_KEY" }
        headers = { Accept = "application/json" }
        errors = { message = "message", code = "cod" }

        [endpoints.find]
        path = "/find"
        params = { q = "string!", type = "string", cnt = "int", units = "string" }
        result = "list"
        """

    @Test(
        "query_key: the key travels as appid; find's list is the payload; a bad key is Unauthorized with the API's message"
    )
    func queryKey() async throws {
        try await withPlugin(
            "weather", prefix: "/openweather/data/2.5", Self.openWeather,
            environment: ["APIMACRO_WEATHER_KEY": "ow-test-key"]
        ) { client, server in
            #expect(client.credentialSource == "env APIMACRO_WEATHER_KEY")
            let (items, requests) = try await all(
                client, "find", [("q", .string("Altstadt")), ("type", .string("like")), ("cnt", .int(5))])
            #expect(requests == 1)
            #expect(
                items.compactMap { ($0 as? [String: Any])?["name"] as? String } == [
                    "Altstadt", "Altstadt", "Altstadt-Lehel",
                ])
            let request = try #require(server.requests.last)
            #expect(request.path == "/openweather/data/2.5/find")
            #expect(request.query["appid"] == "ow-test-key")
            #expect(request.query["cnt"] == "5")
            #expect(request.header("accept") == "application/json")
        }
        try await withPlugin(
            "weather", prefix: "/openweather/data/2.5", Self.openWeather,
            environment: ["APIMACRO_WEATHER_KEY": "wrong-key-123"]
        ) { client, _ in
            let error = try await #require(throws: APIError.self) {
                try await client.send(try client.request("find", [("q", .string("Altstadt"))]).1)
            }
            #expect(error.kind == .unauthorized)
            #expect(error.status == 401)
            #expect(
                error.message.hasSuffix(
                    "→ 401 Unauthorized: Invalid API key. Please see https://openweathermap.org/faq#error401 for more info."
                ))
            #expect(error.url?.contains("appid=REDACTED") == true)
            #expect(!error.description.contains("wrong-key-123"))
        }
        try await withPlugin("weather", prefix: "/openweather/data/2.5", Self.openWeather) { client, server in
            let error = try await #require(throws: APIError.self) {
                try await client.send(try client.request("find", [("q", .string("Altstadt"))]).1)
            }
            #expect(error.kind == .auth)
            #expect(
                error.message
                    == "weather needs credentials: set APIMACRO_WEATHER_KEY (or run apimacro login weather to store a key)"
            )
            #expect(server.requests.isEmpty)
        }
    }

    static let foursquare = """
        name = "places"
        description = "Foursquare v2"
        base_url = "https://api.foursquare.com/v2"
        auth = { kind = "oauth2_implicit", authorize_url = "https://foursquare.com/oauth2/authenticate", param = "oauth_token" }
        query = { v = "20180323" }
        errors = { message = "meta.errorDetail", code = "meta.code" }

        [endpoints.search_venues]
        path = "/venues/search"
        params = { near = "string", query = "string", limit = "int" }
        result = "response.venues"

        [endpoints.venue]
        path = "/venues/{venue_id}"
        params = { venue_id = "string!" }
        result = "response.venue"
        """

    @Test(
        "oauth2_implicit: the stored token as oauth_token, the v version on every request, a path template, the meta envelope's errors"
    )
    func oauth2Implicit() async throws {
        try await withPlugin("places", prefix: "/foursquare/v2", Self.foursquare, storedToken: "fsq-token-1") {
            client, server in
            #expect(client.credentialSource == "stored login")
            let (venues, _) = try await all(client, "search_venues", [("near", .string("Brooklyn, NY"))])
            #expect(venues.count == 4)
            let first = try #require(venues.first as? [String: Any])
            #expect(first["name"] as? String == "Brooklyn Bridge Park - Pier 2")
            let search = try #require(server.requests.last)
            #expect(search.query["v"] == "20180323")
            #expect(search.query["oauth_token"] == "fsq-token-1")
            let (_, request) = try client.request("venue", [("venue_id", .string("51eabef6498e10cf3aea7942"))])
            #expect(request.target == "/venues/51eabef6498e10cf3aea7942")
            let venue = try json(try await client.send(request))
            #expect(
                JSONPath.value(in: venue, path: ["response", "venue", "name"]) as? String
                    == "Brooklyn Bridge Park - Pier 2")
            client.setToken(Secret("revoked-token"))
            let error = try await #require(throws: APIError.self) { try await client.send(request) }
            #expect(error.kind == .unauthorized)
            #expect(error.message.hasSuffix(": OAuth token invalid or revoked."))
        }
        try await withPlugin(
            "places", prefix: "/foursquare/v2", Self.foursquare, environment: ["APIMACRO_PLACES_CLIENT_ID": "fsq-app"]
        ) { client, server in
            let error = try await #require(throws: APIError.self) {
                try await client.send(try client.request("venue", [("venue_id", .string("x"))]).1)
            }
            #expect(
                error.message == "places needs credentials: run apimacro login places (or set APIMACRO_PLACES_TOKEN)")
            #expect(server.requests.isEmpty)
            let flow = try client.loginFlow()
            let url = flow.authorizationURL(state: "s1")
            #expect(
                url
                    == "https://foursquare.com/oauth2/authenticate?client_id=fsq-app&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback&response_type=token&state=s1"
            )
            client.setToken(
                try flow.complete(
                    redirect: "http://127.0.0.1:8765/callback#access_token=fsq-token-1&state=s1", expectedState: "s1"))
            let (venues, _) = try await all(
                client, "search_venues", [("near", .string("Nashville, TN")), ("query", .string("coffee"))])
            #expect(venues.count == 30, "the 2011 recording answers near=Nashville&query=coffee")
        }
    }

    static let hackerNews = """
        name = "hn"
        description = "HN search"
        base_url = "https://hn.algolia.com/api/v1"
        pagination = { kind = "page_param", param = "page", first = 0 }
        errors = { message = "error" }

        [endpoints.search]
        path = "/search"
        params = { query = "string!", hitsPerPage = "int" }
        result = "hits"

        [endpoints.item]
        path = "/items/{id}"
        params = { id = "int!" }
        """

    @Test("no auth and page_param pagination from page 0: every page until an empty one; errors.message on a 404")
    func pageParameter() async throws {
        try await withPlugin("hn", prefix: "/hn/api/v1", Self.hackerNews) { client, server in
            #expect(client.credentialSource == nil)
            let (hits, requests) = try await all(client, "search", [("query", .string("swift"))])
            #expect(hits.count == 45)
            #expect(requests == 4)
            #expect(server.requests.map { $0.query["page"] ?? "-" } == ["-", "1", "2", "3"])
            #expect(Set(hits.compactMap { ($0 as? [String: Any])?["objectID"] as? String }).count == 45)
            let error = try await #require(throws: APIError.self) {
                try await client.send(try client.request("item", [("id", .int(7))]).1)
            }
            #expect(error.kind == .notFound)
            #expect(error.message.hasSuffix("/hn/api/v1/items/7 → 404 Not Found: Not Found"))
        }
    }

    @Test("next_url pagination (Instagram v1 with a query key) and link_header pagination (GitHub)")
    func nextURLAndLinkHeader() async throws {
        let instagram = """
            name = "gram"
            description = "Instagram v1"
            base_url = "https://api.instagram.com/v1"
            auth = { kind = "query_key", param = "access_token", env = "APIMACRO_GRAM_TOKEN" }
            pagination = { kind = "next_url", path = "pagination.next_url" }
            errors = { message = "meta.error_message", code = "meta.code" }

            [endpoints.followed_by]
            path = "/users/{id}/followed-by"
            params = { id = "string!" }
            result = "data"
            """
        try await withPlugin(
            "gram", prefix: "/instagram/v1", instagram, environment: ["APIMACRO_GRAM_TOKEN": "ig-token-1"]
        ) { client, server in
            let (users, requests) = try await all(client, "followed_by", [("id", .string("self"))])
            #expect(users.count == 50)
            #expect(requests == 3)
        }
        let github = """
            name = "hub"
            description = "GitHub"
            base_url = "https://api.github.com"
            pagination = { kind = "link_header" }

            [endpoints.repos]
            path = "/users/{login}/repos"
            params = { login = "string!", per_page = "int" }
            """
        try await withPlugin("hub", prefix: "", github) { client, server in
            let (repos, requests) = try await all(
                client, "repos", [("login", .string("many")), ("per_page", .int(100))])
            #expect(repos.count == 2000)
            #expect(requests == 20)
        }
    }

    static let echo = """
        name = "echo"
        description = "Echo"
        base_url = "https://echo.example.com"
        auth = AUTHLINE

        [endpoints.show]
        path = "/echo/{name}"
        params = { name = "string!", n = "int", x = "float", flag = "bool" }

        [endpoints.create]
        method = "POST"
        path = "/echo/things/{name}"
        params = { name = "string!", title = "string!", count = "int", ratio = "float", done = "bool" }
        """

    func echo(auth: String, keys: String) -> String {
        Self.echo.replacingOccurrences(of: "AUTHLINE", with: "{ kind = \"\(auth)\"\(keys.isEmpty ? "" : ", " + keys) }")
    }

    @Test("header_key, bearer and basic credentials; typed query values; a POST sends its parameters as a JSON body")
    func headerBearerBasicAndBody() async throws {
        let cases: [(String, String, [String: String], String)] = [
            (
                "header_key", "header = \"X-Api-Key\", env = \"APIMACRO_ECHO_KEY\"", ["APIMACRO_ECHO_KEY": "k-123456"],
                "x-api-key"
            ),
            ("bearer", "env = \"APIMACRO_ECHO_TOKEN\"", ["APIMACRO_ECHO_TOKEN": "t-123456"], "authorization"),
            (
                "basic", "user_env = \"APIMACRO_ECHO_USER\", env = \"APIMACRO_ECHO_PASSWORD\"",
                ["APIMACRO_ECHO_USER": "ada", "APIMACRO_ECHO_PASSWORD": "p-123456"], "authorization"
            ),
        ]
        for (kind, keys, environment, header) in cases {
            try await withPlugin("echo", prefix: "", echo(auth: kind, keys: keys), environment: environment) {
                client, _ in
                let (_, request) = try client.request(
                    "show", [("name", .string("a/b c")), ("n", .int(3)), ("x", .double(1.5)), ("flag", .bool(true))])
                #expect(request.target == "/echo/a%2Fb%20c")
                let echoed = try json(try await client.send(request))
                let headers = try #require(echoed["headers"] as? [String: String])
                let expected = [
                    "header_key": "k-123456", "bearer": "Bearer t-123456",
                    "basic": "Basic " + Data("ada:p-123456".utf8).base64EncodedString(),
                ]
                #expect(headers[header] == expected[kind], "\(kind)")
                #expect((echoed["query"] as? [String: String]) == ["n": "3", "x": "1.5", "flag": "true"])
                let (_, post) = try client.request(
                    "create",
                    [("name", .string("t1")), ("title", .string("Hi")), ("count", .int(2)), ("done", .bool(false))])
                let created = try json(try await client.send(post))
                #expect(created["method"] as? String == "POST")
                #expect(created["path"] as? String == "/echo/things/t1")
                let body = try #require(created["json"] as? [String: Any])
                #expect(body["title"] as? String == "Hi")
                #expect(body["count"] as? Int == 2)
                #expect(body["done"] as? Bool == false)
                #expect(body.count == 3)
            }
        }
    }

    @Test(
        "typed and required parameters are checked before any request: invalidRequest (ValueError) naming the parameter"
    )
    func parameterChecks() async throws {
        try await withPlugin("echo", prefix: "", echo(auth: "none", keys: "")) { client, server in
            let cases: [([(String, ParameterValue)], String)] = [
                ([("n", .int(1))], "echo.show() needs the parameter 'name' (string)"),
                (
                    [("name", .string("a")), ("n", .string("ten"))],
                    "echo.show() parameter 'n' must be an int, not str \"ten\""
                ),
                (
                    [("name", .string("a")), ("flag", .int(1))],
                    "echo.show() parameter 'flag' must be a bool, not int \"1\""
                ),
                ([("name", .int(1))], "echo.show() parameter 'name' must be a str, not int \"1\""),
                (
                    [("name", .string("a")), ("bogus", .int(1))],
                    "echo.show() has no parameter 'bogus'; it takes name, flag, n, x"
                ),
            ]
            for (arguments, message) in cases {
                let error = try #require(throws: APIError.self) { try client.request("show", arguments) }
                #expect(error.kind == .invalidRequest)
                #expect(error.message == message)
            }
            let unknown = try #require(throws: APIError.self) { try client.request("nope", []) }
            #expect(unknown.message == "echo has no endpoint 'nope'; it has create, show")
            #expect(try client.request("show", [("name", .string("a")), ("x", .int(2))]).1.query.map(\.1) == ["2"])
            #expect(server.requests.isEmpty)
        }
    }
}
