import Foundation
import TestSupport
import Testing

/// `apimacro.instagram` on the Instagram API with Instagram Login, as a macro sees it through
/// the built binary, against the loopback server's Graph routes.
@Suite("instagram on the Graph API, through the binary")
struct InstagramGraphEndToEndTests {
    static func environment(_ server: TestServer, token: String? = "ig-token-1") -> [String: String] {
        var environment = ["APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph"]
        environment["APIMACRO_INSTAGRAM_TOKEN"] = token
        return environment
    }

    /// Runs `macro` (a file in a fresh workspace) with `arguments` before it; the server and
    /// workspace are the caller's.
    static func run(
        _ macro: String, in space: Workspace, arguments: [String] = [], environment: [String: String]
    ) async throws -> RunResult {
        try space.write("macro.py", macro)
        return try await Binary.run(["run"] + arguments + ["macro.py"], in: space.url, environment: environment)
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    @Test("every method: me, media to the end and stopped early, recent_media, children, insights, get, paginate")
    func methods() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Self.run(
            """
            import json
            from apimacro import instagram
            before = instagram.rate_limit
            me = instagram.me()
            slim = instagram.me(fields=['username', 'media_count'])
            media = list(instagram.media())
            few = list(instagram.media(limit=5))
            alias = [m['id'] for m in instagram.recent_media()]
            kids = instagram.children('17896129349106152')
            reach = instagram.insights('me', 'reach', period='day', metric_type='total_value')
            activity = instagram.insights('17895731045244887', ['profile_activity'])
            raw = instagram.get('me/media', params={'fields': 'id', 'limit': 2})
            paged = list(instagram.paginate('me/media', params={'fields': 'id,caption'}, limit=6))
            print(json.dumps({
                'before': before, 'me': me, 'slim': sorted(slim), 'media': [m['id'] for m in media],
                'likes': [m.get('like_count') for m in media], 'few': len(few), 'alias': alias,
                'kids': [k['media_type'] for k in kids], 'reach': reach[0]['name'], 'period': reach[0]['period'],
                'activity': activity[0]['total_value']['value'], 'raw_next': raw['paging']['next'],
                'paged': [p['id'] for p in paged], 'rate_limit': instagram.rate_limit, 'repr': repr(instagram)}))
            """, in: space, environment: Self.environment(server))
        #expect(result.status == 0, "\(result.stderr)")
        let out = Self.json(result.stdout)
        #expect(out["before"] is NSNull)
        let me = out["me"] as? [String: Any] ?? [:]
        #expect(
            Set(me.keys) == [
                "id", "user_id", "username", "name", "account_type", "profile_picture_url", "followers_count",
                "follows_count", "media_count",
            ])
        #expect(out["slim"] as? [String] == ["id", "media_count", "username"])
        let media = out["media"] as? [String] ?? []
        #expect(media.count == 9 && Set(media).count == 9)
        #expect(media.first == "17895731045244887", "newest first")
        #expect((out["likes"] as? [Any])?.prefix(4).compactMap { $0 as? Int } == [0, 2, 1, 1])
        #expect(out["few"] as? Int == 5)
        #expect(out["alias"] as? [String] == media)
        #expect(out["kids"] as? [String] == ["IMAGE", "IMAGE", "VIDEO"])
        #expect(out["reach"] as? String == "reach" && out["period"] as? String == "day")
        #expect(out["activity"] as? Int == 11)
        let next = out["raw_next"] as? String ?? ""
        #expect(next.hasPrefix(server.baseURL + "/instagram/graph/v27.0/me/media?") && !next.contains("access_token"))
        #expect((out["paged"] as? [String])?.count == 6)
        #expect(
            out["rate_limit"] as? [String: Int] == [
                "call_count": 12, "total_time": 10, "total_cputime": 29, "estimated_time_to_regain_access": 0,
            ])
        #expect(out["repr"] as? String == "<apimacro.instagram \(server.baseURL)/instagram/graph/v27.0 (logged in)>")
        #expect(!result.stdout.contains("ig-token-1"))
        let mediaPages = server.requests.filter { $0.path == "/instagram/graph/v27.0/me/media" }
        // media(): 3 pages (4 + 4 + 1); media(limit=5): 2; recent_media(): 3; get: 1; paginate(limit=6): 2.
        #expect(mediaPages.count == 11, "\(mediaPages.map(\.uri))")
        #expect(mediaPages.allSatisfy { $0.uri.components(separatedBy: "access_token=").count == 2 })
        let insights = try #require(server.requests.first { $0.path == "/instagram/graph/v27.0/me/insights" })
        #expect(insights.query["metric"] == "reach" && insights.query["period"] == "day")
        #expect(insights.query["metric_type"] == "total_value")
        try await server.shutdown()
    }

    @Test("a paging.next naming the page itself (with the token) ends the list with a ParseError, not a loop")
    func pagingLoop() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let path = "/instagram/graph/v27.0/me/media"
        let page =
            #"{"data": [{"id": "1"}], "paging": {"next": "\#(server.baseURL)\#(path)?access_token=ig-token-1&limit=100&fields=id"}}"#
        server.inject([.status(200, body: page), .status(200, body: page), .status(200, body: page)], path: path)
        let result = try await Self.run(
            """
            import apimacro
            from apimacro import instagram
            seen = []
            try:
                for media in instagram.media(fields='id'):
                    seen.append(media['id'])
            except apimacro.ParseError as e:
                print(seen, 'goes round in a loop' in str(e), 'ig-token-1' in str(e))
            """, in: space, environment: Self.environment(server))
        #expect(result.stdout == "['1'] True False\n", "\(result.stderr)")
        #expect(server.requests.filter { $0.path == path }.count == 1)
        try await server.shutdown()
    }

    @Test("a token the API echoes anywhere in an answer (nested paging links) reaches the macro as REDACTED")
    func echoedToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let link = server.baseURL + "/instagram/graph/v27.0/17841406338772941/media?access_token=ig-token-1&after=2"
        let body =
            #"{"id": "17841406338772941", "media": {"data": [{"id": "1"}], "paging": {"next": "\#(link)"}}, "note": "ig-token-1"}"#
        server.inject([.status(200, body: body)], path: "/instagram/graph/v27.0/me")
        let result = try await Self.run(
            """
            import json
            from apimacro import instagram
            answer = instagram.me(fields='id,media{id}')
            print(json.dumps(answer))
            print(len(instagram.get(answer['media']['paging']['next'])['data']))
            """, in: space, environment: Self.environment(server))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("ig-token-1"))
        #expect(
            result.stdout.contains("access_token=REDACTED&after=2") && result.stdout.contains(#""note": "REDACTED""#))
        // The link, REDACTED, is followed with the client's own token, once.
        let followed = try #require(server.requests.last)
        #expect(followed.path == "/instagram/graph/v27.0/17841406338772941/media")
        #expect(followed.uri.components(separatedBy: "access_token=").count == 2)
        #expect(followed.query["access_token"] == "ig-token-1" && followed.query["after"] == "2")
        try await server.shutdown()
    }

    @Test("followed_by() and follows() say the Graph API has no lists, before any request")
    func noFollowerLists() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        for name in ["followed_by", "follows"] {
            let result = try await Self.run(
                "from apimacro import instagram\ninstagram.\(name)()\n", in: space,
                environment: Self.environment(server))
            #expect(result.status == 1)
            #expect(
                result.stderr.contains(
                    "ValueError: instagram.\(name)(): the Instagram API with Instagram Login has no follower lists, "
                        + "only the counts followers_count and follows_count of instagram.me()"), "\(result.stderr)")
        }
        #expect(server.requests.isEmpty)
        try await server.shutdown()
    }

    @Test(
        "each error class carries code, subcode and fbtrace_id, never the token",
        arguments: [
            ("ig-token-expired", "instagram.me()", "Unauthorized", 190, "463"),
            ("ig-token-noinsights", "instagram.insights('me', 'reach')", "Forbidden", 10, "None"),
            ("ig-token-throttled", "instagram.me()", "RateLimited", 4, "None"),
            ("ig-token-1", "instagram.get('999')", "NotFound", 100, "None"),
            ("ig-token-1", "instagram.me(fields='bogus')", "HTTPError", 100, "None"),
        ])
    func errors(token: String, call: String, name: String, code: Int, subcode: String) async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Self.run(
            """
            import apimacro
            from apimacro import instagram
            try:
                \(call)
            except apimacro.\(name) as e:
                assert type(e).__name__ == '\(name)', type(e)
                assert isinstance(e, apimacro.GraphAPIError), type(e).__mro__
                print(e.code, e.subcode, e.fbtrace_id, e.status, e.api, getattr(e, 'retry_after', None))
                print(str(e))
                print(e.url)
            """, in: space, environment: Self.environment(server, token: token))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let retry = name == "RateLimited" ? "300.0" : "None"
        #expect(lines.first == "\(code) \(subcode) AQt_hJ68vFybS4TnupatNtX 400 instagram \(retry)", "\(result.stdout)")
        #expect(!result.stdout.contains(token) || token == "ig-token-1" && !result.stdout.contains("=ig-token-1"))
        #expect(lines.count >= 3 && lines[2].contains("access_token=REDACTED"))
        if code == 190 { #expect(lines[1].contains("log in again: apimacro login instagram")) }
        try await server.shutdown()
    }

    @Test("the token is REDACTED in -v lines, the HAR file and a traceback; page links in the HAR too")
    func redaction() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Self.run(
            """
            from apimacro import instagram
            print(len(list(instagram.media())))
            instagram.get('999')
            """, in: space, arguments: ["-v", "--record", "run.har"], environment: Self.environment(server))
        #expect(result.status == 1)
        #expect(result.stdout == "9\n")
        #expect(result.stderr.contains("apimacro.NotFound"), "\(result.stderr)")
        #expect(result.stderr.contains("access_token=REDACTED"))
        let har = try String(contentsOf: space.url.appendingPathComponent("run.har"), encoding: .utf8)
        #expect(har.contains("paging") && har.contains("REDACTED"))
        for text in [result.stdout, result.stderr, har] { #expect(!text.contains("ig-token-1")) }
        try await server.shutdown()
    }

    @Test("answers sent no-store are never cached: each run asks again, and --offline cannot answer")
    func noStore() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let macro = "from apimacro import instagram\nprint(instagram.me()['username'])\n"
        for _ in 0..<2 {
            let result = try await Self.run(macro, in: space, environment: Self.environment(server))
            #expect(result.stdout == "facebookfordevelopers\n", "\(result.stderr)")
        }
        #expect(server.requests.filter { $0.path == "/instagram/graph/v27.0/me" }.count == 2)
        let offline = try await Self.run(
            macro, in: space, arguments: ["--offline"], environment: Self.environment(server))
        #expect(offline.status == 1)
        #expect(offline.stderr.contains("OfflineError"), "\(offline.stderr)")
        try await server.shutdown()
    }

    @Test("no token: AuthError naming the variable and the login command; nothing is sent")
    func missingToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Self.run(
            "from apimacro import instagram\ninstagram.me()\n", in: space,
            environment: Self.environment(server, token: nil).merging(["APIMACRO_HOME": space.url.path + "/home"]) {
                $1
            })
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                "apimacro.AuthError: instagram needs a token: set APIMACRO_INSTAGRAM_TOKEN (a token from the App "
                    + "Dashboard's Generate token), or run apimacro login instagram"), "\(result.stderr)")
        #expect(server.requests.isEmpty)
        try await server.shutdown()
    }

    @Test("Meta's schedule through the binary: v21.0 warns once within 90 days of 2027-01-21, else is refused")
    func scheduledVersion() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let macro = "from apimacro import instagram\nprint(instagram.me()['username'], instagram.me()['username'])\n"
        var environment = Self.environment(server)
        environment["APIMACRO_INSTAGRAM_API_VERSION"] = "v21.0"
        let result = try await Self.run(macro, in: space, environment: environment)
        // The schedule's day, not the machine's speed, decides which: both are checked.
        let end = Date(timeIntervalSince1970: 1_800_576_000)  // 2027-01-22T00:00:00Z, the day after v21.0's last
        if Date() >= end {
            #expect(result.status == 2 && result.stderr.contains("Graph API v21.0 ended on 2027-01-21"))
        } else if end.timeIntervalSinceNow <= 90 * 86_400 {
            #expect(result.status == 0, "\(result.stderr)")
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning:") }
            #expect(warnings.count == 1, "one warning per run: \(result.stderr)")
            #expect(warnings.first?.contains("Graph API v21.0 ends on 2027-01-21, in ") == true)
            #expect(warnings.first?.contains("move to the current default v27.0") == true)
        } else {
            #expect(result.status == 0 && !result.stderr.contains("warning"), "\(result.stderr)")
        }
        environment["APIMACRO_INSTAGRAM_API_VERSION"] = nil
        let current = try await Self.run(macro, in: space, environment: environment)
        #expect(current.status == 0 && !current.stderr.contains("warning"), "the default warns of nothing")
        try await server.shutdown()
    }

    @Test("an unknown API version is a settings error naming its source and what is accepted (exit 2)")
    func badVersion() async throws {
        let space = try Workspace(files: ["home/config.toml": "[instagram]\napi_version = \"latest\"\n"])
        defer { space.remove() }
        let macro = "print('never')\n"
        let fromVariable = try await Self.run(
            macro, in: space, environment: ["APIMACRO_INSTAGRAM_API_VERSION": "v19.0"])
        #expect(fromVariable.status == 2)
        #expect(
            fromVariable.stderr
                == "apimacro: APIMACRO_INSTAGRAM_API_VERSION: Graph API v19.0 ended on 2026-05-21 (Meta's published "
                + "schedule); use the current default v27.0, or unset APIMACRO_INSTAGRAM_API_VERSION\n")
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
        let fromFile = try await Self.run(macro, in: space, environment: ["APIMACRO_HOME": home.path])
        #expect(fromFile.status == 2)
        #expect(fromFile.stderr.contains("config.toml: instagram.api_version"), "\(fromFile.stderr)")
        #expect(fromFile.stderr.contains("'latest' is not a Graph API version"))
        #expect(!fromVariable.stdout.contains("never") && !fromFile.stdout.contains("never"))
    }

    @Test("at 100 % usage with an estimate over APIMACRO_MAX_WAIT the next call is RateLimited, not sent")
    func usageRefusal() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        server.instagramGraph.usage = .init(
            callCount: 100, totalTime: 100, totalCPUTime: 50, regainMinutes: 5, throttled: false)
        let result = try await Self.run(
            """
            import apimacro
            from apimacro import instagram
            instagram.me()
            print(instagram.rate_limit['call_count'], instagram.rate_limit['estimated_time_to_regain_access'])
            try:
                instagram.me()
            except apimacro.RateLimited as e:
                print(0 < e.retry_after <= 300, 'not sent' in str(e))
            """, in: space, environment: Self.environment(server).merging(["APIMACRO_MAX_WAIT": "60"]) { $1 })
        #expect(result.stdout == "100 5\nTrue True\n", "\(result.stderr)")
        #expect(server.instagramGraph.arrivals.count == 1)
        try await server.shutdown()
    }
}
