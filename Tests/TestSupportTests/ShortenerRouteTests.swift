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
