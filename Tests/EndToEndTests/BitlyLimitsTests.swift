import Foundation
import TestSupport
import Testing

/// Bitly's plan and platform limits through the binary, against the loopback server's Bitly
/// (which counts every request it answers): read once a run, shown by `shortener.rate_limit`,
/// and a request they leave no room for refused before it is sent.
@Suite("Bitly's plan limits through the binary")
struct BitlyLimitsTests {
    /// Shortens `https://example.com/cap/0` … `/9`, one by one; prints each outcome (`ok`, or
    /// the exception's class, status, attributes and message), then `rate_limit`.
    static let shortenTen = """
        import json
        import apimacro
        from apimacro import shortener
        out = []
        for i in range(10):
            try:
                shortener.shorten(f"https://example.com/cap/{i}")
                out.append("ok")
            except apimacro.APIError as error:
                out.append([type(error).__name__, error.status, error.limit_name, error.count, error.limit,
                            error.reset_at, str(error)])
        print(json.dumps({"out": out, "rate_limit": shortener.rate_limit}))
        """

    /// The first of next month, midnight UTC (epoch seconds), as the client computes it.
    static func firstOfNextMonth() -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month], from: Date())
        let first = calendar.date(from: parts).flatMap { calendar.date(byAdding: .month, value: 1, to: $0) }
        return Int(first?.timeIntervalSince1970 ?? 0)
    }

    @Test("a plan 10 requests from its monthly cap: 6 go (after the 4 lookups), the rest are refused unsent")
    func monthlyQuota() async throws {
        let server = try await TestServer.start()
        // 990 of 1,000: the four lookups take it to 994, so six requests fit.
        server.setBitlyPlan(apiRequests: (count: 990, limit: 1000))
        let before = Self.firstOfNextMonth()
        let (result, json) = try await ShortenerEndToEndTests.run(Self.shortenTen, ShortenerEndToEndTests.bitly(server))
        let after = Self.firstOfNextMonth()
        let calls = ShortenerEndToEndTests.calls(server, under: "/bitly/v4")
        // `apimacro api` goes through the same check.
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let api = try await Binary.run(
            ["api", "--no-cache", "shortener", "/user"], in: space.url,
            environment: ShortenerEndToEndTests.bitly(server))
        let apiCalls = ShortenerEndToEndTests.calls(server, under: "/bitly/v4").dropFirst(calls.count)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let output = try #require(json as? [String: Any], "\(result.stdout)")
        let out = try #require(output["out"] as? [Any])
        #expect(out.prefix(6).allSatisfy { $0 as? String == "ok" }, "\(out)")
        // The refused requests never reached the server: four lookups, then six shortens.
        #expect(Array(calls.prefix(4)) == server.bitlyLimitLookupCalls, "\(calls)")
        #expect(calls.dropFirst(4) == Array(repeating: "POST /bitly/v4/shorten", count: 6)[...], "\(calls)")
        for row in out.dropFirst(6) {
            let fields = try #require(row as? [Any], "\(row)")
            #expect(fields[0] as? String == "RateLimited" && fields[1] is NSNull, "\(fields)")
            #expect(fields[2] as? String == "api_requests" && fields[3] as? Int == 1000 && fields[4] as? Int == 1000)
            let reset = try #require(fields[5] as? Int)
            #expect(reset == before || reset == after)
            let message = try #require(fields[6] as? String)
            #expect(
                message.contains(
                    "POST \(server.baseURL)/bitly/v4/shorten not sent: the Bitly plan's API requests for this month "
                        + "are used up (api_requests: 1000 of 1000, as GET /v4/organizations/Ob1tjw4uLSN/plan_limits "
                        + "counted them with this run's requests since); Bitly starts the count again on the first "
                        + "of the month"), "\(message)")
            #expect(message.hasSuffix("UTC): wait until then or move to a plan with more requests"), "\(message)")
        }
        let rateLimit = try #require(output["rate_limit"] as? [String: Any], "\(output)")
        let quota = try #require(rateLimit["api_requests"] as? [String: Any])
        #expect(quota["name"] as? String == "api_requests" && quota["count"] as? Int == 1000)
        #expect(quota["limit"] as? Int == 1000 && quota["remaining"] as? Int == 0)
        #expect([before, after].contains(quota["reset"] as? Int ?? 0))
        #expect(rateLimit["organization_guid"] as? String == "Ob1tjw4uLSN")
        #expect((rateLimit["notes"] as? [Any])?.isEmpty == true)
        // Bitly's own shapes, its counts at the lookup plus this run's requests.
        let plan = try #require(rateLimit["plan_limits"] as? [[String: Any]])
        #expect(plan.map { $0["name"] as? String } == ["encodes", "api_requests"])
        #expect(plan[0]["description"] as? String == "Short links created this month")
        #expect(plan[0]["count"] as? Int == 0 && plan[0]["limit"] as? Int == 1000)
        let platform = try #require(rateLimit["platform_limits"] as? [[String: Any]])
        let shorten = platform.first { $0["endpoint"] as? String == "/v4/shorten" }
        let methods = try #require(shorten?["methods"] as? [[String: Any]])
        #expect(methods.count == 1 && methods[0]["name"] as? String == "POST" && methods[0]["count"] as? Int == 6)
        #expect(methods[0]["limit"] as? Int == 1000)
        // `apimacro api`: the plan is used up (1000 of 1000 at the lookup), nothing else sent.
        #expect(api.status != 0 && api.stderr.contains("not sent: the Bitly plan's API requests"), "\(api.stderr)")
        #expect(apiCalls == server.bitlyLimitLookupCalls[...], "\(apiCalls)")
        #expect(!result.stderr.contains(ShortenerEndToEndTests.bitlyToken) && !api.stderr.contains("bitly-test-token"))
    }

    @Test("an endpoint's hourly platform limit: the next shorten is refused unsent; other endpoints still go")
    func platformLimit() async throws {
        let server = try await TestServer.start()
        server.setBitlyPlan(apiRequests: (count: 0, limit: 1000), shorten: (count: 998, limit: 1000))
        let (result, json) = try await ShortenerEndToEndTests.run(
            """
            import json
            import apimacro
            from apimacro import shortener
            out = []
            for url in ["https://example.com/p/1", "https://example.com/p/2", "https://example.com/p/3"]:
                try:
                    out.append(shortener.shorten(url)["longUrl"])
                except apimacro.RateLimited as error:
                    out.append([error.limit_name, error.count, error.limit, error.retry_after is not None, str(error)])
            out.append(shortener.expand("https://bit.ly/2WujBe0")["longUrl"])
            out.append(shortener.rate_limit["api_requests"]["count"])
            print(json.dumps(out))
            """, ShortenerEndToEndTests.bitly(server))
        let calls = ShortenerEndToEndTests.calls(server, under: "/bitly/v4").dropFirst(4)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let out = try #require(json as? [Any], "\(result.stdout)")
        #expect(out[0] as? String == "https://example.com/p/1" && out[1] as? String == "https://example.com/p/2")
        let refused = try #require(out[2] as? [Any], "\(out)")
        #expect(refused[0] as? String == "POST /v4/shorten" && refused[1] as? Int == 1000 && refused[2] as? Int == 1000)
        #expect(refused[3] as? Bool == true)
        #expect(
            (refused[4] as? String)?.contains(
                "/bitly/v4/shorten not sent: Bitly's platform limit for POST /v4/shorten is used up (1000 of 1000 "
                    + "this hour, as GET /v4/user/platform_limits counted them with this run's requests since); "
                    + "it starts again within the hour") == true, "\(refused)")
        #expect(out[3] as? String == "https://google.com/")
        // 4 lookups (the plan_limits one counted too) and 3 requests.
        #expect(out[4] as? Int == 7, "\(out)")
        #expect(
            Array(calls) == ["POST /bitly/v4/shorten", "POST /bitly/v4/shorten", "POST /bitly/v4/expand"], "\(calls)")
    }

    @Test("read once a run, lazily: rate_limit first looks them up; later calls and reads send no lookup again")
    func readOnce() async throws {
        let server = try await TestServer.start()
        let (result, json) = try await ShortenerEndToEndTests.run(
            """
            import json
            from apimacro import shortener
            first = shortener.rate_limit["api_requests"]["count"]
            shortener.expand("https://bit.ly/2WujBe0")
            shortener.clicks("https://bit.ly/2WujBe0")
            second = shortener.rate_limit["api_requests"]["count"]
            print(json.dumps([first, second]))
            """, ShortenerEndToEndTests.bitly(server, ["APIMACRO_SHORTENER_GROUP": "Bj1tjw4uLSN"]))
        let calls = ShortenerEndToEndTests.calls(server, under: "/bitly/v4")
        // Shlink has no such limits.
        let shlink = try await ShortenerEndToEndTests.run(
            "from apimacro import shortener\nprint(shortener.rate_limit)", ShortenerEndToEndTests.shlink(server))
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        // With the group set, no GET /user: the group names the organization.
        #expect(
            calls == [
                "GET /bitly/v4/user/platform_limits", "GET /bitly/v4/groups/Bj1tjw4uLSN",
                "GET /bitly/v4/organizations/Ob1tjw4uLSN/plan_limits", "POST /bitly/v4/expand",
                "GET /bitly/v4/bitlinks/bit.ly/2WujBe0/clicks/summary?unit=day&units=-1",
            ], "\(calls)")
        #expect(json as? [Int] == [3, 5], "\(result.stdout)")
        #expect(shlink.result.stdout == "None\n", "\(shlink.result.stdout)\(shlink.result.stderr)")
    }

    /// Answers of `plan_limits` and `platform_limits` that are not what Bitly documents, each
    /// with what `rate_limit` shows of it: its entries' names and counts, or None.
    static let hostile: [(plan: String?, platform: String?, planShown: String, note: String?)] = [
        (#"{"plan_limits": "many"}"#, nil, "None", "plan_limits did not answer in the shape Bitly documents"),
        ("<html>busy</html>", nil, "None", "plan_limits did not answer in the shape Bitly documents"),
        ("[]", nil, "None", "plan_limits did not answer in the shape Bitly documents"),
        (
            #"{"plan_limits": [{"name": "api_requests", "count": -5, "limit": 10},"#
                + #" {"name": "api_requests", "count": "5", "limit": 10},"#
                + #" {"name": "api_requests", "count": 1e300, "limit": 10},"#
                + #" {"name": "api_requests", "count": true, "limit": 10},"#
                + #" {"name": "api_requests", "count": 1.5, "limit": 10},"#
                + #" {"name": "api_requests", "count": 3, "limit": 100000000000000000000000},"#
                + #" {"name": "api_requests\u001b[31m", "count": 3, "limit": 10},"#
                + #" {"name": 7, "count": 3, "limit": 10}, {"count": 1, "limit": 2}, null, 5,"#
                + #" {"name": "encodes", "count": 3, "limit": 10}]}"#,
            nil, "encodes 3/10", nil
        ),
        (
            nil,
            #"{"platform_limits": [{"endpoint": "/v4/shorten", "methods": [{"name": "POST", "count": null, "limit": 1}]},"#
                + #" {"endpoint": 5}, "x", {"endpoint": "/v4/expand", "methods": "POST"}]}"#,
            "encodes 0/1000 api_requests 5/1000", nil
        ),
        (
            nil, #"{"platform_limits": {"endpoint": "/v4/shorten"}}"#, "encodes 0/1000 api_requests 5/1000",
            "platform_limits did not answer"
        ),
    ]

    @Test(
        "hostile limit answers: missing fields, negative, huge or non-numbers, wrong types are left out; the call goes")
    func hostileAnswers() async throws {
        let server = try await TestServer.start()
        let macro = """
            import json
            from apimacro import shortener
            link = shortener.shorten("https://example.com/hostile")["longUrl"]
            limits = shortener.rate_limit
            plan = limits["plan_limits"]
            shown = "None" if plan is None else " ".join(f"{p['name']} {p['count']}/{p['limit']}" for p in plan)
            print(json.dumps([link, shown, limits["api_requests"], limits["notes"], limits["platform_limits"] is None]))
            """
        for (plan, platform, planShown, note) in Self.hostile {
            server.setBitlyPlan(apiRequests: (count: 0, limit: 1000))
            server.setBitlyLimitAnswers(plan: plan, platform: platform)
            let (result, json) = try await ShortenerEndToEndTests.run(macro, ShortenerEndToEndTests.bitly(server))
            #expect(result.status == 0, "\(plan ?? platform ?? ""): \(result.stderr)")
            #expect(!result.stderr.contains("Traceback"), "\(result.stderr)")
            let out = try #require(json as? [Any], "\(result.stdout)\(result.stderr)")
            #expect(out[0] as? String == "https://example.com/hostile")
            #expect(out[1] as? String == planShown, "\(plan ?? platform ?? ""): \(out)")
            let notes = (out[3] as? [String]) ?? []
            if let note {
                #expect(notes.contains { $0.contains(note) }, "\(notes)")
            } else {
                #expect(notes.isEmpty, "\(notes)")
            }
            if planShown.contains("api_requests") {
                #expect(out[2] is [String: Any])
            } else {
                #expect(out[2] is NSNull)
            }
            #expect(out[4] as? Bool == (platform?.contains(#""platform_limits": {"#) == true))
        }
        // A lookup refused (Bitly's 403 to a token that may not see it): its limits are unknown,
        // and the call still goes.
        server.setBitlyLimitAnswers(plan: nil, platform: nil)
        server.inject([.status(403, body: #"{"message":"FORBIDDEN"}"#)], path: "/bitly/v4/user/platform_limits")
        let (failed, json) = try await ShortenerEndToEndTests.run(macro, ShortenerEndToEndTests.bitly(server))
        try await server.shutdown()
        #expect(failed.status == 0, "\(failed.stderr)")
        let out = try #require(json as? [Any], "\(failed.stdout)")
        #expect((out[3] as? [String]) == ["GET /v4/user/platform_limits answered 403"], "\(out)")
        #expect(out[4] as? Bool == true)
    }
}
