import Clients
import Foundation
import Synchronization
import TestSupport
import Testing
import WebAPI

/// The Instagram API with Instagram Login against the loopback server's Graph routes
/// (`/instagram/graph`, built from ../shared/fixtures/instagram-graph/).
@Suite("Instagram's Graph API backend")
struct InstagramGraphTests {
    /// Waits the pipeline asks for, and what a test does at each one.
    final class Waits: Sendable {
        private let list = Mutex<[Double]>([])
        let onWait: @Sendable (Double) async throws -> Void
        init(onWait: @escaping @Sendable (Double) async throws -> Void = { _ in }) { self.onWait = onWait }
        var all: [Double] { list.withLock { $0 } }
        func wait(_ seconds: Double) async throws {
            list.withLock { $0.append(seconds) }
            try await onWait(seconds)
        }
    }

    /// A stored login the client keeps alive, and what it is told.
    struct Stored {
        let store: CredentialStore
        var remember: @Sendable (String) -> Void = { _ in }
        var warn: @Sendable (String) -> Void = { _ in }
    }

    /// A Graph client on a fresh server, for `body`; everything is shut down afterwards.
    static func withClient(
        token: String? = "ig-token-1", maxWait: Double = 60, waits: Waits = Waits(), stored: Stored? = nil,
        _ body: (InstagramGraphClient, TestServer, CurlTransport) async throws -> Void
    ) async throws {
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test")
        var configuration = InstagramGraphConfiguration(
            baseURL: server.baseURL + "/instagram/graph", token: token.map(Secret.init),
            tokenIsStored: stored != nil, maxWait: maxWait)
        configuration.sleep = { try await waits.wait($0) }
        let client = InstagramGraphClient(
            configuration: configuration, transport: transport, log: ExchangeLog(logger: nil),
            redactor: Redactor(secrets: []),
            tokens: stored.map { stored in
                InstagramGraphClient.TokenStore(
                    store: stored.store, entry: try? stored.store.entry(for: "instagram"), network: transport,
                    remember: stored.remember, warn: stored.warn)
            })
        do { try await body(client, server, transport) } catch {
            try await transport.shutdown()
            try await server.shutdown()
            throw error
        }
        try await transport.shutdown()
        try await server.shutdown()
    }

    static func error(_ body: () async throws -> Void) async -> APIError? {
        do {
            try await body()
            return nil
        } catch let error as APIError {
            return error
        } catch {
            return APIError(.http, "unexpected \(error)")
        }
    }

    static func object(_ response: Response) -> [String: Any] {
        (JSONPath.value(in: response.body, path: []) as? [String: Any]) ?? [:]
    }

    // MARK: settings

    @Test("the backend: Graph by default (newest version), legacy v1 for a /v1 base URL, a version in the URL kept")
    func backends() throws {
        guard case .graph(let graph) = InstagramBackend(SettingsView(environment: [:])) else {
            Issue.record("the default is not the Graph API")
            return
        }
        #expect(graph.versionedBaseURL == "https://graph.instagram.com/v27.0")
        guard
            case .legacy(let legacy) = InstagramBackend(
                SettingsView(environment: ["APIMACRO_INSTAGRAM_URL": "https://api.instagram.com/v1/"]))
        else {
            Issue.record("a /v1 base URL is not the legacy API")
            return
        }
        #expect(legacy.baseURL == "https://api.instagram.com/v1")
        let versioned = InstagramGraphConfiguration(
            SettingsView(environment: [
                "APIMACRO_INSTAGRAM_URL": "https://graph.example.com/v23.0", "APIMACRO_INSTAGRAM_API_VERSION": "v25.0",
            ]))
        #expect(versioned.versionedBaseURL == "https://graph.example.com/v23.0")
        let chosen = InstagramGraphConfiguration(SettingsView(environment: ["APIMACRO_INSTAGRAM_API_VERSION": "v24.0"]))
        #expect(chosen.versionedBaseURL == "https://graph.instagram.com/v24.0")
        // Versions whose end Meta has not set (v27.0, a newer one) stay accepted whatever the date.
        for accepted in ["v27.0", "v30.0"] {
            #expect(InstagramGraphConfiguration.versionProblem(accepted) == nil)
        }
        #expect(
            InstagramGraphConfiguration.versionProblem("v20.0")
                == "Graph API v20.0 ended on 2026-09-24 (Meta's published schedule); use the current default v27.0, "
                + "or unset APIMACRO_INSTAGRAM_API_VERSION")
        for refused in ["v14.0", "27", "v27", "latest", "v27.1", ""] {
            #expect(
                InstagramGraphConfiguration.versionProblem(refused)
                    == "'\(refused)' is not a Graph API version apimacro can use; accepted: v21.0 to v27.0 (the versions "
                    + "Meta lists as available), or a newer vN.0")
        }
    }

    @Test("Meta's schedule: a version past its end is refused with that day, one within 90 days warns")
    func schedule() {
        func epoch(_ day: String) -> Double { GraphVersionSchedule.end(of: day)! - 86_400 }
        // v21.0 ends 2027-01-21 (its last day).
        #expect(GraphVersionSchedule.ended(21, now: epoch("2027-01-21")) == nil)
        #expect(GraphVersionSchedule.ended(21, now: epoch("2027-01-22"))?.contains("ended on 2027-01-21") == true)
        #expect(GraphVersionSchedule.ending(21, now: epoch("2026-10-01")) == nil, "more than 90 days before")
        #expect(
            GraphVersionSchedule.ending(21, now: epoch("2026-11-29"))
                == "apimacro: warning: instagram: Graph API v21.0 ends on 2027-01-21, in 54 days (Meta's published "
                + "schedule); move to the current default v27.0 before then (APIMACRO_INSTAGRAM_API_VERSION)")
        #expect(GraphVersionSchedule.ending(21, now: epoch("2027-01-21"))?.contains("in 1 day") == true)
        #expect(GraphVersionSchedule.ending(27, now: epoch("2030-01-01")) == nil, "an end Meta has not set")
        #expect(GraphVersionSchedule.ended(27, now: epoch("2030-01-01")) == nil)
    }

    // MARK: endpoints

    @Test("me() asks for its fields with the token as access_token on the versioned URL")
    func me() async throws {
        try await Self.withClient { client, server, _ in
            let response = try await client.send(.me(fields: InstagramGraphRouter.meFields))
            let me = Self.object(response)
            #expect(me["username"] as? String == "facebookfordevelopers")
            #expect(me["account_type"] as? String == "BUSINESS")
            #expect(me["user_id"] as? String == "17841406338772941")
            #expect(me["followers_count"] as? Int == 64363)
            #expect(me["biography"] == nil, "only the fields asked for")
            let request = try #require(server.requests.last)
            #expect(request.path == "/instagram/graph/v27.0/me")
            #expect(request.query["access_token"] == "ig-token-1")
            #expect(request.query["fields"] == InstagramGraphRouter.meFields)
            #expect(response.headers["cache-control"]?.contains("no-store") == true)
        }
    }

    @Test("media pages follow paging.next without its token; the pipeline adds the client's own, on its host only")
    func paging() async throws {
        try await Self.withClient { client, server, _ in
            var request: Request? = InstagramGraphRouter.media(userID: "me", fields: "id,like_count").firstPage(
                limit: nil)
            var ids: [String] = []
            var pages = 0
            while let current = request {
                let response = try await client.api.send(current)
                pages += 1
                let data = (JSONPath.value(in: response.body, path: ["data"]) as? [[String: Any]]) ?? []
                ids += data.compactMap { $0["id"] as? String }
                let next = JSONPath.string(in: response.body, path: ["paging", "next"])
                // Meta's links carry the token; the answers the client hands out show it REDACTED.
                #expect(next.map { $0.contains("access_token=REDACTED") } ?? true, "\(next ?? "")")
                #expect(!response.text.contains("ig-token-1"))
                request = InstagramGraphRouter.pagination.next(
                    after: response, request: current, itemCount: data.count,
                    bodyValue: .some(next.map(InstagramGraphRouter.withoutToken)))
                if let url = request.map({ try? client.api.url(of: $0) }) {
                    #expect(url?.contains("access_token") == false)
                }
            }
            #expect(pages == 3)
            #expect(ids.count == 9 && Set(ids).count == 9)
            let sent = server.requests.filter { $0.path == "/instagram/graph/v27.0/me/media" }
            #expect(sent.count == 3)
            #expect(sent.allSatisfy { $0.uri.components(separatedBy: "access_token=").count == 2 }, "one token each")
            // A page link naming another host goes there without the token.
            let elsewhere = server.otherHostURL + "/instagram/graph/v27.0/me/media?access_token=ig-token-1&after=4"
            var away = Request("GET", InstagramGraphRouter.withoutToken(elsewhere))
            away.linkedFrom = server.baseURL + "/instagram/graph/v27.0/me/media"
            _ = try? await client.api.send(away)
            let other = try #require(server.requests.last)
            #expect(other.listener == TestServer.otherHost)
            #expect(!other.uri.contains("ig-token-1"))
        }
    }

    @Test("withoutToken drops every access_token, keeps the rest and the fragment")
    func withoutToken() {
        #expect(
            InstagramGraphRouter.withoutToken(
                "https://g.example/v1/m?access_token=T&fields=a%2Cb&access%5Ftoken=U&after=x#f")
                == "https://g.example/v1/m?fields=a%2Cb&after=x#f")
        #expect(InstagramGraphRouter.withoutToken("https://g.example/m?access_token=T") == "https://g.example/m")
        #expect(InstagramGraphRouter.withoutToken("https://g.example/m") == "https://g.example/m")
    }

    // MARK: errors

    @Test("the Graph envelope maps onto the exception kinds, each with code, subcode and fbtrace_id")
    func errors() async throws {
        for (token, route, kind, code, text) in [
            (
                "ig-token-expired", InstagramGraphRouter.me(fields: "id"), APIError.Kind.unauthorized, 190,
                "log in again"
            ),
            ("nobody", .me(fields: "id"), .unauthorized, 190, "apimacro login instagram"),
            ("ig-token-noinsights", .insights(target: "me", metrics: "reach", parameters: []), .forbidden, 10, "(#10)"),
            ("ig-token-1", .get(path: "/999", parameters: []), .notFound, 100, "does not exist"),
            ("ig-token-1", .me(fields: "bogus"), .http, 100, "nonexisting field (bogus)"),
        ] {
            try await Self.withClient(token: token) { client, server, _ in
                let error = try #require(await Self.error { _ = try await client.send(route) })
                #expect(error.kind == kind, "\(token) \(route)")
                #expect(error.status == 400)
                #expect(error.message.contains(text), "\(error.message)")
                #expect(error.details.first == APIError.Detail("code", .int(code)))
                #expect(error.details.map(\.name) == ["code", "subcode", "fbtrace_id"])
                #expect(error.details.last == APIError.Detail("fbtrace_id", .string("AQt_hJ68vFybS4TnupatNtX")))
                #expect(
                    !error.message.contains(token)
                        || token == "ig-token-1" && !error.message.contains("access_token=ig"))
                #expect(server.requests.count == 1, "not retried")
            }
        }
        try await Self.withClient(token: "ig-token-expired") { client, _, _ in
            let error = try #require(await Self.error { _ = try await client.send(.me(fields: "id")) })
            #expect(error.details[1] == APIError.Detail("subcode", .int(463)))
        }
    }

    @Test("a throttling code is RateLimited with Meta's estimate even when is_transient, and not retried")
    func throttled() async throws {
        try await Self.withClient(token: "ig-token-throttled") { client, server, _ in
            let error = try #require(await Self.error { _ = try await client.send(.me(fields: "id")) })
            #expect(error.kind == .rateLimited)
            #expect(error.retryAfter == 300)
            #expect(error.details.first == APIError.Detail("code", .int(4)))
            #expect(server.requests.count == 1)
        }
    }

    @Test("a 429 with a Graph envelope keeps its message, code, fbtrace_id and a wait")
    func throttled429() async throws {
        try await Self.withClient(maxWait: 60) { client, server, _ in
            let usage = #"{"x": [{"call_count": 100, "estimated_time_to_regain_access": 2}]}"#
            server.inject(
                [
                    .status(
                        429,
                        body:
                            #"{"error":{"message":"(#17) User request limit reached","type":"OAuthException","code":17,"fbtrace_id":"Tr4ce"}}"#,
                        headers: [("X-Business-Use-Case-Usage", usage)])
                ], path: "/instagram/graph/v27.0/me")
            let error = try #require(await Self.error { _ = try await client.send(.me(fields: "id")) })
            #expect(error.kind == .rateLimited && error.status == 429)
            #expect(error.message.contains("(#17) User request limit reached"), "\(error.message)")
            // The test server adds GitHub's x-ratelimit-reset to every answer: that wait wins over Meta's estimate.
            #expect((error.retryAfter ?? 0) > 60)
            #expect(error.details.first == APIError.Detail("code", .int(17)))
            #expect(error.details.last == APIError.Detail("fbtrace_id", .string("Tr4ce")))
            #expect(server.requests.count == 1)
        }
    }

    @Test("an is_transient error on a GET is retried like a 503")
    func transient() async throws {
        try await Self.withClient { client, server, _ in
            let body =
                #"{"error":{"message":"An unexpected error has occurred. Please retry your request later.","type":"OAuthException","is_transient":true,"code":2,"fbtrace_id":"AbC"}}"#
            server.inject([.status(500, body: body)], path: "/instagram/graph/v27.0/me")
            let response = try await client.send(.me(fields: "id"))
            #expect(response.status == 200)
            #expect(server.requests.count == 2)
            server.inject(
                [.status(400, body: body.replacingOccurrences(of: "true", with: "false"))],
                path: "/instagram/graph/v27.0/me")
            let error = try #require(await Self.error { _ = try await client.send(.me(fields: "id")) })
            #expect(error.kind == .http && error.details.first == APIError.Detail("code", .int(2)))
            #expect(server.requests.count == 3)
        }
    }

    // MARK: usage

    @Test("the usage headers are read: percentages and minutes, the highest of app and account")
    func usage() async throws {
        try await Self.withClient { client, _, _ in
            #expect(client.usage == nil)
            _ = try await client.send(.me(fields: "id"))
            let usage = try #require(client.usage)
            #expect(
                usage.figures == [
                    "call_count": 12, "total_time": 10, "total_cputime": 29, "estimated_time_to_regain_access": 0,
                ])
            #expect(usage.percent == 29)
        }
    }

    @Test("at 100 % the next request waits Meta's estimate first: the server sees it only after the usage dropped")
    func waitsForUsage() async throws {
        let server = Mutex<TestServer?>(nil)
        let waits = Waits { _ in
            // The wait passes: the server's usage drops (as it would have in that time).
            server.withLock { $0 }?.instagramGraph.usage = .recorded
        }
        try await Self.withClient(maxWait: 120, waits: waits) { client, testServer, _ in
            server.withLock { $0 = testServer }
            testServer.instagramGraph.usage = .init(
                callCount: 100, totalTime: 100, totalCPUTime: 30, regainMinutes: 1, throttled: false)
            _ = try await client.send(.me(fields: "id"))
            #expect(client.usage?.percent == 100)
            _ = try await client.send(.me(fields: "username"))
            // Meta's estimate (1 minute) less the time since that answer.
            #expect(waits.all.count == 1 && waits.all.allSatisfy { $0 > 0 && $0 <= 60 }, "\(waits.all)")
            let arrivals = testServer.instagramGraph.arrivals
            #expect(arrivals.count == 2)
            #expect(arrivals.last?.usage.callCount == 12, "sent after the wait, not before")
        }
    }

    @Test("at 100 % with an estimate over APIMACRO_MAX_WAIT: RateLimited, nothing sent")
    func refusesOverMaxWait() async throws {
        try await Self.withClient(maxWait: 60) { client, server, _ in
            server.instagramGraph.usage = .init(
                callCount: 100, totalTime: 100, totalCPUTime: 30, regainMinutes: 2, throttled: false)
            _ = try await client.send(.me(fields: "id"))
            let error = try #require(await Self.error { _ = try await client.send(.me(fields: "id")) })
            #expect(error.kind == .rateLimited)
            #expect((error.retryAfter ?? 0) > 60 && (error.retryAfter ?? 0) <= 120, "\(error)")
            #expect(error.message.contains("not sent"))
            #expect(server.instagramGraph.arrivals.count == 1)
        }
    }

    @Test("a throttled answer (80002) is waited out and asked again once the account may call")
    func throttledAnswerWaited() async throws {
        let server = Mutex<TestServer?>(nil)
        let waits = Waits { _ in server.withLock { $0 }?.instagramGraph.usage = .recorded }
        try await Self.withClient(maxWait: 300, waits: waits) { client, testServer, _ in
            server.withLock { $0 = testServer }
            testServer.instagramGraph.usage = .init(
                callCount: 100, totalTime: 100, totalCPUTime: 100, regainMinutes: 3, throttled: true)
            let response = try await client.send(.me(fields: "id"))
            #expect(response.status == 200)
            #expect(waits.all.count == 1 && waits.all.allSatisfy { $0 > 0 && $0 <= 180 }, "\(waits.all)")
            #expect(testServer.instagramGraph.arrivals.map(\.usage.throttled) == [true, false])
        }
    }

    @Test(
        "hostile usage headers neither trap nor stall: too long, too deep, not JSON, NaN, huge, negative",
        arguments: [
            String(repeating: "9", count: 9000),
            String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
            "not json", #"{"call_count": NaN}"#, #"{"call_count": 1e400, "total_time": -5}"#,
            #"{"call_count": true, "total_time": "100"}"#,
            #"{"x": [{"call_count": 100, "estimated_time_to_regain_access": 1e300}]}"#,
            #"{"x": {"y": {"z": [1, 2, {"call_count": 1e308}]}}}"#,
        ])
    func hostileUsage(value: String) async throws {
        try await Self.withClient(maxWait: 60) { client, server, _ in
            server.inject(
                [.status(200, body: "{}", headers: [("X-App-Usage", value), ("X-Business-Use-Case-Usage", value)])],
                path: "/instagram/graph/v27.0/me")
            _ = try await client.send(.me(fields: "id"))
            if let usage = client.usage {
                #expect(usage.percent.isFinite && usage.percent <= 1_000_000)
                #expect((usage.regainAfter ?? 0) <= RateLimitPolicy.longestWait)
            }
            // The next request goes (or is refused at once): nothing waits on a hostile header.
            _ = await Self.error { _ = try await client.send(.me(fields: "id")) }
            #expect(client.usage != nil)
        }
    }

    // MARK: tokens

    @Test("a token's life: used, refreshed once a day old and within 10 days of expiry, expired")
    func tokenLife() {
        let now = 1_000_000_000.0
        let day = 86_400
        let at = Int(now)
        #expect(InstagramTokenLife.decide(obtainedAt: at - 50 * day, expiresAt: nil, now: now) == .use)
        #expect(InstagramTokenLife.decide(obtainedAt: at - 50 * day, expiresAt: at + 10 * day, now: now) == .refresh)
        #expect(InstagramTokenLife.decide(obtainedAt: at - 50 * day, expiresAt: at + 10 * day + 1, now: now) == .use)
        #expect(InstagramTokenLife.decide(obtainedAt: at - day + 1, expiresAt: at + day, now: now) == .use)
        #expect(InstagramTokenLife.decide(obtainedAt: at - day, expiresAt: at + day, now: now) == .refresh)
        #expect(InstagramTokenLife.decide(obtainedAt: at - 61 * day, expiresAt: at, now: now) == .expired(at: at))
        #expect(InstagramTokenLife.decide(obtainedAt: 0, expiresAt: at, now: .nan) == .use)
    }

    /// A credential store in a fresh folder holding `token` for instagram, obtained `age` days
    /// ago and expiring in `left` days.
    static func store(token: String, age: Double, left: Double) throws -> CredentialStore {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-ig-\(UUID().uuidString)")
        let store = CredentialStore(home: home)
        let now = Date().timeIntervalSince1970
        try store.save(
            Secret(token), for: "instagram", kind: "access_token", expiresAt: Int(now + left * 86_400),
            obtainedAt: Int(now - age * 86_400))
        return store
    }

    @Test("a stored token near its expiry is refreshed once before the first request, stored, and used")
    func refresh() async throws {
        let store = try Self.store(token: "ig-token-old", age: 55, left: 5)
        defer { try? FileManager.default.removeItem(at: store.home) }
        let remembered = Mutex<[String]>([])
        try await Self.withClient(
            token: "ig-token-old",
            stored: Stored(store: store, remember: { token in remembered.withLock { $0.append(token) } })
        ) { client, server, _ in
            async let first = client.send(.me(fields: "id"))
            async let second = client.send(.me(fields: "username"))
            _ = try await (first, second)
            #expect(server.instagramGraph.refreshes == 1)
            let refresh = try #require(server.requests.first { $0.path == "/instagram/graph/refresh_access_token" })
            #expect(
                refresh.query["grant_type"] == "ig_refresh_token" && refresh.query["access_token"] == "ig-token-old")
            let uses = server.requests.filter { $0.path == "/instagram/graph/v27.0/me" }
            #expect(uses.count == 2 && uses.allSatisfy { $0.query["access_token"] == "IGAA-refreshed-1" })
            let entry = try #require(try store.entry(for: "instagram"))
            #expect(entry.token.revealed == "IGAA-refreshed-1")
            let now = Int(Date().timeIntervalSince1970)
            #expect(abs((entry.expiresAt ?? 0) - (now + 5_184_000)) < 600)
            #expect(abs(entry.obtainedAt - now) < 600)
            #expect(remembered.withLock { $0 } == ["IGAA-refreshed-1"])
        }
    }

    @Test("a young stored token is not refreshed; an expired one is Unauthorized and nothing is sent")
    func noRefresh() async throws {
        let young = try Self.store(token: "ig-token-young", age: 2, left: 58)
        let old = try Self.store(token: "ig-token-gone", age: 61, left: -1)
        defer {
            try? FileManager.default.removeItem(at: young.home)
            try? FileManager.default.removeItem(at: old.home)
        }
        try await Self.withClient(
            token: "ig-token-young",
            stored: Stored(store: young)
        ) { client, server, _ in
            _ = try await client.send(.me(fields: "id"))
            #expect(server.instagramGraph.refreshes == 0)
            #expect(server.requests.count == 1)
        }
        try await Self.withClient(
            token: "ig-token-gone",
            stored: Stored(store: old)
        ) { client, server, _ in
            let error = try #require(await Self.error { _ = try await client.send(.me(fields: "id")) })
            #expect(error.kind == .unauthorized)
            #expect(error.message.contains("expired on") && error.message.contains("apimacro login instagram"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test("a refresh that fails is a warning without the token; the stored token is still used")
    func refreshFails() async throws {
        let store = try Self.store(token: "bad-token-9876", age: 55, left: 5)
        defer { try? FileManager.default.removeItem(at: store.home) }
        let warnings = Mutex<[String]>([])
        try await Self.withClient(
            token: "bad-token-9876",
            stored: Stored(store: store, warn: { line in warnings.withLock { $0.append(line) } })
        ) { client, server, _ in
            let error = await Self.error { _ = try await client.send(.me(fields: "id")) }
            #expect(error?.kind == .unauthorized)
            #expect(server.instagramGraph.refreshes == 0)
            let lines = warnings.withLock { $0 }
            #expect(lines.count == 1 && lines[0].contains("could not refresh the Instagram token"))
            #expect(!lines.joined().contains("bad-token-9876"))
            let stored = try store.entry(for: "instagram")
            #expect(stored?.token.revealed == "bad-token-9876")
        }
    }

    // MARK: login

    static func app(_ server: TestServer, client: String = "test-client", secret: String = "test-secret")
        -> OAuthCodeApp
    {
        let view = SettingsView(environment: [
            "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph", "APIMACRO_INSTAGRAM_CLIENT_ID": client,
            "APIMACRO_INSTAGRAM_CLIENT_SECRET": secret,
            "APIMACRO_INSTAGRAM_TOKEN_URL": server.baseURL + "/instagram/oauth/access_token",
        ])
        return OAuthCodeApp(
            clientID: client, clientSecret: Secret(secret), redirectURI: "http://127.0.0.1:8765/callback",
            tokenURL: server.baseURL + "/instagram/oauth/access_token", view: view)
    }

    @Test("Business Login: the code becomes a short-lived token, then a 60-day one; both answer shapes")
    func redeem() async throws {
        try await Self.withClient { _, server, transport in
            for client in ["test-client", "flat-client"] {
                let issued = try await InstagramLogin.redeem(
                    code: Secret("ig-code-1"), app: Self.app(server, client: client), transport: transport,
                    log: ExchangeLog(logger: nil))
                #expect(issued.token.revealed == "IGAA-long-1")
                let now = Int(Date().timeIntervalSince1970)
                #expect(abs((issued.expiresAt ?? 0) - (now + 5_184_000)) < 600)
                #expect(
                    issued.scope
                        == (client == "test-client"
                            ? "instagram_business_basic,instagram_business_manage_insights" : nil))
            }
            let code = try #require(server.requests.first { $0.path == "/instagram/oauth/access_token" })
            #expect(code.method == "POST")
            let form = Dictionary(
                uniqueKeysWithValues: code.bodyText.split(separator: "&").map {
                    let pair = $0.split(separator: "=", maxSplits: 1).map(String.init)
                    return (pair[0], pair.count > 1 ? pair[1].removingPercentEncoding ?? pair[1] : "")
                })
            #expect(form["grant_type"] == "authorization_code" && form["code"] == "ig-code-1")
            #expect(form["redirect_uri"] == "http://127.0.0.1:8765/callback" && form["client_secret"] == "test-secret")
            let long = try #require(server.requests.first { $0.path == "/instagram/graph/access_token" })
            #expect(long.query["grant_type"] == "ig_exchange_token" && long.query["access_token"] == "IGAA-short-1")
        }
    }

    @Test("a refused code or secret is an error naming neither; no secret goes over plain http to another host")
    func redeemRefused() async throws {
        try await Self.withClient { _, server, transport in
            for (code, secret, text) in [
                ("ig-code-used", "test-secret", "Matching code was not found or was already used"),
                ("ig-code-1", "wrong-secret-4321", "Error validating client secret."),
            ] {
                let error = try #require(
                    await Self.error {
                        _ = try await InstagramLogin.redeem(
                            code: Secret(code), app: Self.app(server, secret: secret), transport: transport,
                            log: ExchangeLog(logger: nil))
                    })
                #expect(error.message.contains(text), "\(error.message)")
                #expect(!error.message.contains(secret) && !(error.body ?? "").contains(secret))
                #expect(!error.message.contains(code) || code == "ig-code-used" && false)
            }
            var app = Self.app(server)
            app.tokenURL = "http://example.com/oauth/access_token"
            let count = server.requests.count
            let error = try #require(
                await Self.error {
                    _ = try await InstagramLogin.redeem(
                        code: Secret("ig-code-1"), app: app, transport: transport, log: ExchangeLog(logger: nil))
                })
            #expect(error.kind == .auth && error.message.contains("refusing to send the client secret"))
            #expect(server.requests.count == count)
        }
    }
}
