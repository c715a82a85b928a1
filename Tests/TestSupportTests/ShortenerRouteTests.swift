import Foundation
import Testing

@testable import TestSupport

/// `POST <base>/urlshortener/v1/url` with a JSON body.
private func shorten(_ server: TestServer, query: String, body: String) throws -> RawResponse {
    try fetch(
        server.baseURL + "/urlshortener/v1/url" + query, method: "POST",
        headers: [("Content-Type", "application/json")], body: Array(body.utf8))
}

/// `{"error": {...}}`'s inner object and its first error item.
private func googleError(_ response: RawResponse) throws -> ([String: Any], [String: Any]) {
    let error = try #require(try response.object()["error"] as? [String: Any])
    let first = try #require((error["errors"] as? [[String: Any]])?.first)
    return (error, first)
}

@Suite struct ShortenerRouteTests {
    @Test func shortenThenExpandRoundTrip() async throws {
        try await withServer { server in
            let longURL = "https://example.com/some/long/path?x=1&y=é"
            let body = #"{"longUrl": "https://example.com/some/long/path?x=1&y=é"}"#
            let created = try shorten(server, query: "?key=AIza-test-key", body: body)
            #expect(created.status == 200)
            #expect(created.header("content-type") == "application/json; charset=utf-8")
            let object = try created.object()
            #expect(object["kind"] as? String == "urlshortener#url")
            #expect(object["longUrl"] as? String == longURL)
            let shortURL = try #require(object["id"] as? String)
            #expect(shortURL.hasPrefix("https://goo.gl/"))
            #expect(shortURL.count == "https://goo.gl/".count + 6)

            let again = try shorten(server, query: "?key=AIza-test-key", body: body).object()
            #expect(again["id"] as? String == shortURL)

            let encoded = try #require(shortURL.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            for key in ["&key=AIza-test-key", ""] {
                let expanded = try fetch(server.baseURL + "/urlshortener/v1/url?shortUrl=" + encoded + key)
                #expect(expanded.status == 200)
                let result = try expanded.object()
                #expect(result["kind"] as? String == "urlshortener#url")
                #expect(result["id"] as? String == shortURL)
                #expect(result["longUrl"] as? String == longURL)
                #expect(result["status"] as? String == "OK")
            }

            let seeded = try fetch(server.baseURL + "/urlshortener/v1/url?shortUrl=https://goo.gl/fbsS").object()
            #expect(seeded["longUrl"] as? String == "http://www.google.com/")
        }
    }

    @Test func badKeyIsKeyInvalid() async throws {
        try await withServer { server in
            let expected =
                #"{"error":{"errors":[{"domain":"usageLimits","reason":"keyInvalid","message":"Bad Request"}],"code":400,"message":"Bad Request"}}"#
            let posted = try shorten(server, query: "?key=AIza-bad-key", body: #"{"longUrl": "http://a.example/"}"#)
            #expect(posted.status == 400)
            #expect(posted.text == expected)
            let other = try shorten(server, query: "?key=whatever", body: #"{"longUrl": "http://a.example/"}"#)
            #expect(other.status == 400)
            let expanded = try fetch(
                server.baseURL + "/urlshortener/v1/url?shortUrl=https://goo.gl/fbsS&key=AIza-bad-key")
            #expect(expanded.status == 400)
            #expect(expanded.text == expected)
        }
    }

    @Test func missingKeyOnPostIsForbidden() async throws {
        try await withServer { server in
            let response = try shorten(server, query: "", body: #"{"longUrl": "http://a.example/"}"#)
            #expect(response.status == 403)
            let (error, first) = try googleError(response)
            #expect(error["code"] as? Int == 403)
            #expect(
                error["message"] as? String
                    == "Daily Limit for Unauthenticated Use Exceeded. Continued use requires signup.")
            #expect(first["domain"] as? String == "usageLimits")
            #expect(first["reason"] as? String == "dailyLimitExceededUnreg")
            #expect(first["extendedHelp"] as? String == "https://code.google.com/apis/console")
        }
    }

    @Test func invalidOrMissingLongURL() async throws {
        try await withServer { server in
            for body in [#"{"longUrl": "not a url"}"#, #"{"longUrl": "ftp://example.com/x"}"#] {
                let response = try shorten(server, query: "?key=AIza-test-key", body: body)
                #expect(response.status == 400)
                let (error, first) = try googleError(response)
                #expect(error["message"] as? String == "Invalid Value")
                #expect(first["reason"] as? String == "invalid")
                #expect(first["location"] as? String == "resource.longUrl")
            }
            for body in ["not json", #"{"url": "http://a.example/"}"#, ""] {
                let response = try shorten(server, query: "?key=AIza-test-key", body: body)
                #expect(response.status == 400)
                #expect(
                    response.text
                        == #"{"error":{"errors":[{"domain":"global","reason":"required","message":"Required","locationType":"parameter","location":"resource.longUrl"}],"code":400,"message":"Required"}}"#
                )
            }
        }
    }

    @Test func unknownShortURLIsNotFound() async throws {
        try await withServer { server in
            let response = try fetch(
                server.baseURL + "/urlshortener/v1/url?shortUrl=https%3A%2F%2Fgoo.gl%2Fnope42&key=AIza-test-key")
            #expect(response.status == 404)
            #expect(
                response.text
                    == #"{"error":{"errors":[{"domain":"global","reason":"notFound","message":"Not Found"}],"code":404,"message":"Not Found"}}"#
            )
        }
    }

    @Test func codesAreRememberedPerServer() async throws {
        let first = ShortURLStore()
        let code = first.shorten("http://example.com/")
        #expect(code == ShortURLStore.code(for: "http://example.com/", salt: 0))
        #expect(first.longURL(code: code) == "http://example.com/")
        #expect(ShortURLStore().longURL(code: code) == nil)
        #expect(ShortURLStore().longURL(code: "fbsS") == "http://www.google.com/")
    }
}

/// The Bitly and Shlink routes against their recordings and documented examples.
@Suite struct BitlyShlinkRouteTests {
    static let bearer = [("Authorization", "Bearer bitly-test-token")]
    static let apiKey = [("X-Api-Key", "shlink-test-key")]

    /// The body of `../shared/fixtures/shortener/NAME.http` (after its blank line).
    static func recordedBody(_ name: String) throws -> [UInt8] {
        let bytes = try TestServer.fixture("shortener/\(name).http")
        let text = String(decoding: bytes, as: UTF8.self)
        let body = try #require(text.range(of: "\n\n")).upperBound
        return Array(text[body...].utf8)
    }

    @Test(
        "Bitly: the recordings byte for byte (shorten https://google.com/, 403 for a bad token); no rate-limit headers")
    func bitlyRecordings() async throws {
        try await withServer { server in
            let json = [("Content-Type", "application/json")]
            let recorded = try fetch(
                server.baseURL + "/bitly/v4/shorten", method: "POST", headers: Self.bearer + json,
                body: Array(#"{"long_url":"https://google.com/"}"#.utf8))
            #expect(recorded.status == 200)
            let recording = try Self.recordedBody("laracrafts-bitly-shorten-200")
            #expect(recorded.body == recording)
            #expect(recorded.header("x-ratelimit-remaining") == nil)
            for headers in [[("Authorization", "Bearer wrong")], []] {
                let refused = try fetch(
                    server.baseURL + "/bitly/v4/shorten", method: "POST", headers: headers + json,
                    body: Array(#"{"long_url":"https://google.com/"}"#.utf8))
                #expect(refused.status == 403)
                #expect(refused.text == #"{"message":"FORBIDDEN"}"#)
            }
            let created = try fetch(
                server.baseURL + "/bitly/v4/shorten", method: "POST", headers: Self.bearer + json,
                body: Array(#"{"long_url":"https://example.com/n"}"#.utf8))
            #expect(created.status == 201)
            let link = try created.object()
            #expect(
                Set(link.keys) == [
                    "created_at", "id", "link", "custom_bitlinks", "long_url", "archived", "tags", "deeplinks",
                    "references",
                ])
            let id = try #require(link["id"] as? String)
            let again = try fetch(
                server.baseURL + "/bitly/v4/shorten", method: "POST", headers: Self.bearer + json,
                body: Array(#"{"long_url":"https://example.com/n"}"#.utf8))
            let againID = try again.object()["id"] as? String
            #expect(again.status == 200 && againID == id)
            let expanded = try fetch(
                server.baseURL + "/bitly/v4/expand", method: "POST", headers: Self.bearer + json,
                body: Array(#"{"bitlink_id":"\#(id)"}"#.utf8)
            ).object()
            #expect(expanded["long_url"] as? String == "https://example.com/n")
            let clicks = try fetch(
                server.baseURL + "/bitly/v4/bitlinks/bit.ly/2WujBe0/clicks/summary", headers: Self.bearer)
            let total = try clicks.object()["total_clicks"] as? Int
            #expect(total == 42)
        }
    }

    @Test("Bitly: a group's links, newest first, linked by pagination.next to the end (empty there)")
    func bitlyPages() async throws {
        try await withServer { server in
            var url: String? = server.baseURL + "/bitly/v4/groups/Bj1tjw4uLSN/bitlinks?size=50"
            var ids: [String] = []
            while let next = url, !next.isEmpty {
                let page = try fetch(next, headers: Self.bearer).object()
                ids += try #require(page["links"] as? [[String: Any]]).compactMap { $0["id"] as? String }
                url = (page["pagination"] as? [String: Any])?["next"] as? String
                #expect(ids.count <= 121)
            }
            #expect(ids.count == 121 && ids.first == "bit.ly/pg120" && ids.last == "bit.ly/2WujBe0")
            #expect(try fetch(server.baseURL + "/bitly/v4/groups/other/bitlinks", headers: Self.bearer).status == 403)
        }
    }

    @Test("Shlink: the OpenAPI examples as answers, problem+json errors, pages by page/pagesCount")
    func shlink() async throws {
        try await withServer { server in
            let base = server.baseURL + "/shlink/rest/v3"
            let spec =
                try JSONSerialization.jsonObject(
                    with: Data(try TestServer.fixture("shortener/shlink-v1_short-urls_shortCode.json")))
                as? [String: Any]
            let example =
                (((((spec?["get"] as? [String: Any])?["responses"] as? [String: Any])?["200"] as? [String: Any])?[
                    "content"] as? [String: Any])?["application/json"] as? [String: Any])?["example"] as? [String: Any]
            let found = try fetch(base + "/short-urls/12Kb3", headers: Self.apiKey).object()
            #expect(found["shortUrl"] as? String == example?["shortUrl"] as? String)
            // The list example's copy of 12Kb3 (the seeded one) counts 900 and 129 where the
            // lookup example says 820 and 209: the list example is what the server holds.
            #expect(found["visitsSummary"] as? [String: Int] == ["total": 1029, "nonBots": 900, "bots": 129])
            #expect(found["longUrl"] as? String == example?["longUrl"] as? String)
            let missing = try fetch(base + "/short-urls/abc123", headers: Self.apiKey)
            #expect(missing.status == 404 && missing.header("content-type") == "application/problem+json")
            let recordedMissing =
                try JSONSerialization.jsonObject(
                    with: Data(try TestServer.fixture("shortener/shlink-short-url-not-found-v3.json")))
                as? [String: Any]
            #expect(
                NSDictionary(dictionary: try missing.object())
                    == NSDictionary(dictionary: recordedMissing?["value"] as? [String: Any] ?? [:]))
            let anonymous = try fetch(base + "/short-urls/12Kb3")
            #expect(anonymous.status == 401)
            let wrong = try fetch(base + "/short-urls/12Kb3", headers: [("X-Api-Key", "nope")]).object()
            #expect(wrong["type"] as? String == "https://shlink.io/api/error/invalid-api-key")
            var page = 1
            var codes: [String] = []
            while true {
                let list = try fetch(base + "/short-urls?page=\(page)&itemsPerPage=25", headers: Self.apiKey).object()
                let urls = try #require(list["shortUrls"] as? [String: Any])
                codes += (urls["data"] as? [[String: Any]] ?? []).compactMap { $0["shortCode"] as? String }
                let pagination = try #require(urls["pagination"] as? [String: Int])
                #expect(pagination["currentPage"] == page && pagination["totalItems"] == 60)
                if page >= pagination["pagesCount"] ?? 0 { break }
                page += 1
            }
            #expect(page == 3 && codes.count == 60 && codes.suffix(3) == ["12C18", "12Kb3", "123bA"])
        }
    }
}
