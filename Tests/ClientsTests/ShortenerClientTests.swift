import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

/// A shortener client for `backend` on a fresh loopback server (its Bitly, Shlink or Google
/// routes) and its own transport, for `body`; both are shut down afterwards.
func withShortener(
    _ backend: ShortenerBackend, credential: String?, _ body: (ShortenerClient, TestServer) async throws -> Void
) async throws {
    let server = try await TestServer.start()
    let transport = CurlTransport(userAgent: "apimacro/test")
    let paths = [
        "bitly": "/bitly/v4", "shlink": "/shlink/rest/v3", "google": "/urlshortener/v1", "yourls": "/yourls",
    ]
    let path = paths[backend.rawValue] ?? ""
    let client = ShortenerClient(
        configuration: ShortenerConfiguration(
            backend: backend, baseURL: server.baseURL + path, credential: credential.map(Secret.init)),
        transport: transport, log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
    do { try await body(client, server) } catch {
        try await transport.shutdown()
        try await server.shutdown()
        throw error
    }
    try await transport.shutdown()
    try await server.shutdown()
}

/// The `APIError` that sending `request` ends with, or nil when it succeeds.
func failure(_ client: ShortenerClient, _ request: Request) async -> APIError? {
    do {
        _ = try await client.send(request)
        return nil
    } catch {
        return error as? APIError
    }
}

@Suite("the shortener client: backends, settings, requests and error envelopes")
struct ShortenerClientTests {
    static func configuration(_ environment: [String: String], stored: String? = nil) -> ShortenerConfiguration {
        ShortenerConfiguration(SettingsView(environment: environment, storedCredential: stored.map(Secret.init)))
    }

    @Test(
        "the backend: APIMACRO_SHORTENER, else Google for a /urlshortener/v1 URL, else Bitly; each with its default URL"
    )
    func backendChoice() {
        let bitly = Self.configuration([:])
        #expect(bitly.backend == .bitly && bitly.baseURL == "https://api-ssl.bitly.com/v4")
        #expect(bitly.maxConcurrency == 5 && bitly.client.maxConcurrentRequests == 5)
        #expect(bitly.problem == nil)
        let google = Self.configuration(["APIMACRO_SHORTENER_URL": "http://127.0.0.1:9/urlshortener/v1/"])
        #expect(google.backend == .google && google.maxConcurrency == nil)
        #expect(
            Self.configuration(["APIMACRO_SHORTENER": "GOOGLE"]).baseURL == "https://www.googleapis.com/urlshortener/v1"
        )
        let explicit = Self.configuration([
            "APIMACRO_SHORTENER": " bitly ", "APIMACRO_SHORTENER_URL": "http://127.0.0.1:9/urlshortener/v1",
        ])
        #expect(explicit.backend == .bitly && explicit.baseURL == "http://127.0.0.1:9/urlshortener/v1")
        let shlink = Self.configuration(["APIMACRO_SHORTENER": "shlink"])
        #expect(shlink.backend == .shlink && shlink.baseURL.isEmpty && shlink.maxConcurrency == nil)
        #expect(
            shlink.problem?.message
                == "shortener: Shlink has no default server: set APIMACRO_SHORTENER_URL (or [shortener] url in "
                + "config.toml) to your server's REST API, such as https://s.example.com/rest/v3")
        let unknown = Self.configuration(["APIMACRO_SHORTENER": "tinyurl"])
        #expect(
            unknown.problem?.message
                == "APIMACRO_SHORTENER: 'tinyurl' is not a shortener backend; accepted: bitly, shlink, google, yourls")
        #expect(
            Shortener.backend.problem?("tinyurl")
                == "'tinyurl' is not a shortener backend; accepted: bitly, shlink, google, yourls")
        #expect(Shortener.backend.problem?("Shlink") == nil && Shortener.backend.variable == "APIMACRO_SHORTENER")
        #expect(Self.configuration(["APIMACRO_SHORTENER_MAX_CONCURRENCY": "2"]).client.maxConcurrentRequests == 2)
        #expect(
            Self.configuration(["APIMACRO_SHORTENER": "shlink", "APIMACRO_SHORTENER_MAX_CONCURRENCY": "3"])
                .maxConcurrency
                == 3)
        #expect(Shortener.maxConcurrency.problem?("0") != nil && Shortener.maxConcurrency.problem?("5") == nil)
        #expect(Shortener.group.problem?("Ba1bc23dE4F") == nil && Shortener.group.problem?("../x") != nil)
    }

    @Test(
        "credentials: Bitly's token as a bearer, Shlink's key as X-Api-Key, Google's as key=; each variable only for its backend"
    )
    func credentials() {
        let both = ["APIMACRO_SHORTENER_TOKEN": "tok-1234", "APIMACRO_SHORTENER_KEY": "key-5678"]
        #expect(Self.configuration(both).credential?.revealed == "tok-1234")
        #expect(Self.configuration(["APIMACRO_SHORTENER_KEY": "key-5678"]).credential == nil)
        #expect(
            Self.configuration(["APIMACRO_SHORTENER_KEY": "key-5678"], stored: "stored-9").credential?.revealed
                == "stored-9")
        var shlink = both
        shlink["APIMACRO_SHORTENER"] = "shlink"
        #expect(Self.configuration(shlink).credential?.revealed == "key-5678")
        #expect(
            Self.configuration(["APIMACRO_SHORTENER": "shlink", "APIMACRO_SHORTENER_TOKEN": "t"]).credential == nil)
        let secret = Secret("s-1")
        #expect(ShortenerBackend.bitly.credential(secret).description.contains("REDACTED"))
        guard case .bearer = ShortenerBackend.bitly.credential(secret),
            case .header(let name, _) = ShortenerBackend.shlink.credential(secret),
            case .query(let parameter, _) = ShortenerBackend.google.credential(secret)
        else {
            Issue.record("credential forms")
            return
        }
        #expect(name == "X-Api-Key" && parameter == "key")
        // What `auth status` names, and what `apimacro login shortener` asks for, per backend.
        #expect(
            Shortener.descriptor.credential(in: SettingsView(environment: both))?.source.name
                == "env APIMACRO_SHORTENER_TOKEN")
        #expect(
            Shortener.descriptor.credential(in: SettingsView(environment: shlink))?.source.name
                == "env APIMACRO_SHORTENER_KEY")
        #expect(Shortener.descriptor.credential(in: SettingsView(environment: ["APIMACRO_SHORTENER_KEY": "k"])) == nil)
        for (environment, label, variable) in [
            ([:], "your Bitly access token", "APIMACRO_SHORTENER_TOKEN"),
            (["APIMACRO_SHORTENER": "shlink"], "your Shlink API key", "APIMACRO_SHORTENER_KEY"),
            (
                ["APIMACRO_SHORTENER_URL": "https://www.googleapis.com/urlshortener/v1"], "your Google API key",
                "APIMACRO_SHORTENER_KEY"
            ),
        ] {
            guard
                case .pastedKey(let asked, let overriding)? = Shortener.descriptor.login(
                    in: SettingsView(environment: environment))
            else {
                Issue.record("no pasted-key login for \(environment)")
                continue
            }
            #expect(asked == label && overriding == variable)
        }
    }

    @Test("requests: bodies in sorted keys, a slug or tags take Bitly's /bitlinks, Shlink finds what exists")
    func requests() throws {
        let bitly = ShortenerClient(
            configuration: ShortenerConfiguration(backend: .bitly, credential: Secret("t"), group: "Ba1bc23dE4F"),
            transport: OfflineTransport(), log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
        func body(_ request: Request) -> String {
            guard case .json(let bytes) = request.body else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
        let plain = try bitly.shortenRequest("https://example.com/a?b=1")
        #expect(plain.method == "POST" && plain.target == "/shorten")
        #expect(body(plain) == #"{"group_guid":"Ba1bc23dE4F","long_url":"https://example.com/a?b=1"}"#)
        let custom = try bitly.shortenRequest(
            "https://example.com/a", domain: "j.mp", slug: "launch", tags: ["x", "y"])
        #expect(custom.target == "/bitlinks")
        #expect(
            body(custom)
                == #"{"domain":"j.mp","group_guid":"Ba1bc23dE4F","keyword":"launch","long_url":"https://example.com/a","tags":["x","y"]}"#
        )
        #expect(body(try bitly.expandRequest("https://Bit.ly/2WujBe0/")) == #"{"bitlink_id":"bit.ly/2WujBe0"}"#)
        let clicks = try bitly.clicksRequest("https://bit.ly/a%2Fb")
        #expect(clicks.target == "/bitlinks/bit.ly/a%2Fb/clicks/summary")
        #expect(clicks.query.map { "\($0.0)=\($0.1)" } == ["unit=day", "units=-1"])
        #expect(try bitly.linksStart(limit: 7).request.target == "/groups/Ba1bc23dE4F/bitlinks")
        #expect(BitlyRouter.linksStart(group: nil, limit: nil).request.target == "/user")

        let shlink = ShortenerClient(
            configuration: ShortenerConfiguration(
                backend: .shlink, baseURL: "https://s.example.com/rest/v3", credential: Secret("k")),
            transport: OfflineTransport(), log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
        #expect(
            body(try shlink.shortenRequest("https://example.com/a", slug: "my-slug", tags: ["t"]))
                == #"{"customSlug":"my-slug","findIfExists":true,"longUrl":"https://example.com/a","tags":["t"]}"#)
        // Its own host: the default domain; another: asked for by name. A multi-segment slug is one segment.
        let own = try shlink.expandRequest("https://s.example.com/abc")
        #expect(own.target == "/short-urls/abc" && own.query.isEmpty)
        let other = try shlink.clicksRequest("https://go.example.org/a/b")
        #expect(other.target == "/short-urls/a%2Fb" && other.query.map(\.1) == ["go.example.org"])
        #expect(
            try shlink.linksStart(limit: 3).request.query.map { "\($0.0)=\($0.1)" } == ["page=1", "itemsPerPage=3"])
    }

    @Test("bad input is ValueError before any request: not a URL, no back-half, a dot segment, legacy-only arguments")
    func badInput() throws {
        let bitly = ShortenerClient(
            configuration: ShortenerConfiguration(backend: .bitly, credential: Secret("t")),
            transport: OfflineTransport(), log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
        for text in ["not a url", "", "ftp://bit.ly/x", "https:///x"] {
            #expect(throws: APIError.self) { _ = try bitly.shortenRequest(text) }
        }
        for text in ["https://bit.ly", "https://bit.ly/", "https://bit.ly/a/../b", "https://bit.ly/a//b"] {
            let error = #expect(throws: APIError.self) { _ = try bitly.expandRequest(text) }
            #expect(error?.kind == .invalidRequest && error?.message.contains("back-half") == true, "\(text)")
        }
        let google = ShortenerClient(
            configuration: ShortenerConfiguration(backend: .google, credential: Secret("AIza")),
            transport: OfflineTransport(), log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
        let slug = #expect(throws: APIError.self) { _ = try google.shortenRequest("https://a.example/", slug: "x") }
        #expect(slug?.message.contains("'slug' is not taken by the legacy Google URL Shortener") == true)
        let links = #expect(throws: APIError.self) { _ = try google.linksStart(limit: nil) }
        #expect(links?.kind == .auth)
    }

    @Test("a missing credential is AuthError naming the variable and the login command, with no request sent")
    func missingCredential() async throws {
        try await withShortener(.bitly, credential: nil) { client, server in
            for build in [
                { try client.shortenRequest("https://example.com/") }, { try client.expandRequest("https://bit.ly/x") },
                { try client.clicksRequest("https://bit.ly/x") }, { try client.linksStart(limit: nil).request },
            ] {
                let error = #expect(throws: APIError.self) { _ = try build() }
                #expect(error?.kind == .auth)
                #expect(
                    error?.message.hasSuffix(
                        "needs a Bitly access token: set APIMACRO_SHORTENER_TOKEN or run `apimacro login shortener`")
                        == true, "\(String(describing: error))")
            }
            #expect(server.requests.isEmpty)
        }
        try await withShortener(.shlink, credential: nil) { client, server in
            let error = #expect(throws: APIError.self) { _ = try client.expandRequest("https://s.test/x") }
            #expect(
                error?.message
                    == "shortener.expand needs a Shlink API key: set APIMACRO_SHORTENER_KEY or run `apimacro login shortener`"
            )
            #expect(server.requests.isEmpty)
        }
        // The legacy API needed its key only to shorten.
        try await withShortener(.google, credential: nil) { client, server in
            #expect(throws: APIError.self) { _ = try client.shortenRequest("https://example.com/") }
            _ = try await client.send(try client.expandRequest("https://goo.gl/fbsS"))
            #expect(server.requests.count == 1)
        }
    }

    @Test("Bitly: the bearer token on every call; errors as Forbidden, NotFound, or HTTPError naming the field")
    func bitlyErrors() async throws {
        try await withShortener(.bitly, credential: "bitly-test-token") { client, server in
            let created = try await client.send(client.shortenRequest("https://example.com/new"))
            #expect(created.status == 201)
            let request = try #require(server.requests.last)
            #expect(request.header("authorization") == "Bearer bitly-test-token")
            #expect(request.header("accept") == "application/json")
            let notFound = await failure(client, try client.expandRequest("https://bit.ly/nothing1"))
            #expect(notFound?.kind == .notFound)
            #expect(notFound?.message.hasSuffix("NOT_FOUND: What you are looking for cannot be found.") == true)
            let invalid = await failure(client, try client.shortenRequest("https://intranet/page"))
            #expect(invalid?.kind == .http && invalid?.status == 400)
            #expect(
                invalid?.message.hasSuffix(
                    "INVALID_ARG_LONG_URL: The value provided is invalid. (field long_url: invalid)") == true,
                "\(String(describing: invalid))")
            _ = try await client.send(client.shortenRequest("https://example.com/one", slug: "taken"))
            let taken = await failure(client, try client.shortenRequest("https://example.com/two", slug: "taken"))
            #expect(taken?.kind == .http)
            #expect(taken?.message.contains("(field keyword: already_exists)") == true)
            let domain = await failure(client, try client.shortenRequest("https://example.com/", domain: "example.org"))
            #expect(
                domain?.message.contains("INVALID_ARG_DOMAIN") == true
                    && domain?.message.contains("field domain") == true)
        }
        try await withShortener(.bitly, credential: "a-wrong-token") { client, _ in
            do {
                _ = try await client.send(client.shortenRequest("https://example.com/"))
                Issue.record("a wrong token was accepted")
            } catch let error as APIError {
                // laracrafts-bitly-shorten-403.http: {"message":"FORBIDDEN"}.
                #expect(error.kind == .forbidden && error.status == 403)
                #expect(error.message.hasSuffix("→ 403 Forbidden: FORBIDDEN"))
                #expect(!error.message.contains("a-wrong-token"))
            }
        }
    }

    @Test("Shlink: X-Api-Key on every call; problem+json as Unauthorized, NotFound, or HTTPError naming the field")
    func shlinkErrors() async throws {
        try await withShortener(.shlink, credential: "shlink-test-key") { client, server in
            let existing = try await client.send(client.shortenRequest("https://shlink.io"))
            #expect(existing.status == 200)
            #expect(
                JSONPath.string(in: existing.body, path: ["shortCode"]) == "12Kb3", "findIfExists found the example")
            #expect(server.requests.last?.header("x-api-key") == "shlink-test-key")
            let missing = await failure(client, try client.expandRequest("https://s.test/nope1"))
            #expect(missing?.kind == .notFound)
            #expect(
                missing?.message.hasSuffix(
                    #"Short URL not found: No URL found with short code "nope1" (shortCode "nope1")"#)
                    == true, "\(String(describing: missing))")
            let slug = await failure(client, try client.shortenRequest("https://example.com/z", slug: "12C18"))
            #expect(slug?.kind == .http && slug?.status == 400)
            #expect(
                slug?.message.hasSuffix(
                    #"Invalid custom slug: Provided slug "12C18" is already in use. (customSlug "12C18")"#)
                    == true, "\(String(describing: slug))")
            let domain = await failure(client, try client.shortenRequest("https://example.com/z", domain: "not a host"))
            #expect(
                domain?.message.hasSuffix("Invalid data: Provided data is not valid (invalid fields: domain)") == true)
        }
        try await withShortener(.shlink, credential: "wrong-key") { client, _ in
            do {
                _ = try await client.send(client.expandRequest("https://s.test/12C18"))
                Issue.record("a wrong key was accepted")
            } catch let error as APIError {
                #expect(error.kind == .unauthorized && error.status == 401)
                #expect(error.message.hasSuffix("Invalid API key: Provided API key does not exist or is invalid."))
            }
        }
    }

    @Test("Shlink's pages end at pagesCount or an empty page, counted from the request, not the answer")
    func shlinkPages() {
        let rule = ShlinkRouter.paging.pagination
        func next(_ request: Request, pagesCount: Int?, items: Int) -> Request? {
            let response = Response(status: 200, headers: Headers(), body: [], url: "https://s.example.com/rest/v3")
            return rule.next(
                after: response, request: request, itemCount: items, bodyValue: .some(pagesCount.map(String.init)))
        }
        let first = ShlinkRouter.firstPage(limit: nil)
        let second = next(first, pagesCount: 3, items: 50)
        #expect(second?.query.last.map { "\($0.0)=\($0.1)" } == "page=2")
        #expect(second?.query.contains { $0 == ("itemsPerPage", "50") } == true)
        let third = second.flatMap { next($0, pagesCount: 3, items: 50) }
        #expect(third != nil && third.flatMap { next($0, pagesCount: 3, items: 7) } == nil)
        #expect(next(first, pagesCount: 9, items: 0) == nil)
        #expect(next(first, pagesCount: nil, items: 5) == nil)
        #expect(next(first, pagesCount: Int.max, items: 1)?.query.last?.1 == "2")
        #expect(ShlinkRouter.paging.items == ["shortUrls", "data"])
    }

    @Test(
        "error bodies read as one line: Bitly's fields, Shlink's extras, Google's reason; other bodies leave the status"
    )
    func errorMessages() {
        func response(_ body: String, status: Int = 400) -> Response {
            Response(status: status, headers: Headers([]), body: Array(body.utf8), url: "https://x.example/")
        }
        let bitly = ShortenerConfiguration(backend: .bitly).client
        #expect(
            bitly.errorMessage(
                response(
                    #"{"message":"INVALID_ARG_LONG_URL","resource":"bitlinks","description":"The value provided is invalid.","errors":[{"field":"long_url","error_code":"invalid"}]}"#
                )) == "INVALID_ARG_LONG_URL: The value provided is invalid. (field long_url: invalid)")
        #expect(bitly.errorKind(response(#"{"message":"FORBIDDEN"}"#, status: 400)) == .forbidden)
        #expect(bitly.errorKind(response(#"{"message":"NOT_FOUND"}"#)) == .notFound)
        #expect(bitly.errorMessage(response("<html>oops</html>", status: 502)) == nil)
        #expect(bitly.errorMessage(response(#"["not", "an", "object"]"#)) == nil)
        let shlink = ShortenerConfiguration(backend: .shlink, baseURL: "https://s.example.com/rest/v3").client
        #expect(
            shlink.errorKind(response(#"{"type":"https://shlink.io/api/error/forbidden-tag-operation","status":403}"#))
                == .forbidden)
        #expect(
            shlink.errorKind(response(#"{"type":"https://shlink.io/api/error/missing-authentication"}"#))
                == .unauthorized)
        #expect(shlink.errorKind(response(#"{"type":"INVALID_SHORTCODE"}"#)) == nil)
        #expect(
            shlink.errorMessage(
                response(
                    #"{"title":"Invalid data","type":"https://shlink.io/api/error/invalid-data","detail":"Provided data is not valid","status":400,"invalidElements":["maxVisits","validSince"]}"#
                )) == "Invalid data: Provided data is not valid (invalid fields: maxVisits, validSince)")
        let google = ShortenerConfiguration(backend: .google).client
        #expect(
            google.errorMessage(
                response(#"{"error":{"errors":[{"reason":"keyInvalid"}],"code":400,"message":"Bad Request"}}"#))
                == "Bad Request (keyInvalid)")
    }
}
