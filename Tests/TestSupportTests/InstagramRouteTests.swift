import Foundation
import Testing

@testable import TestSupport

/// The `meta` object of a v1 envelope.
private func meta(_ response: RawResponse) throws -> [String: Any] {
    try #require(try response.object()["meta"] as? [String: Any])
}

/// The query parameters of an absolute URL.
private func queryItems(_ url: String) -> [String: String] {
    var items: [String: String] = [:]
    for item in URLComponents(string: url)?.queryItems ?? [] { items[item.name] = item.value }
    return items
}

@Suite struct InstagramRouteTests {
    static let filters = Set(InstagramFixtures.filters)

    @Test func selfIsTheTokensUser() async throws {
        try await withServer { server in
            let response = try fetch(server.baseURL + "/instagram/v1/users/self?access_token=ig-token-1")
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json; charset=utf-8")
            let envelope = try response.object()
            #expect((envelope["meta"] as? [String: Any])?["code"] as? Int == 200)
            let user = try #require(envelope["data"] as? [String: Any])
            #expect(user["id"] as? String == "20")
            #expect(user["username"] as? String == "shayne")
            #expect(user["first_name"] as? String == "Shayne")
            #expect(user["last_name"] as? String == "Sweeney")
            #expect(user["full_name"] as? String == "Shayne Sweeney")
            #expect((user["profile_picture"] as? String)?.hasPrefix("http://distillery.s3.amazonaws.com/") == true)
            #expect(user["bio"] as? String == "")
            #expect(user["website"] as? String == "")
            let counts = try #require(user["counts"] as? [String: Any])
            #expect(counts["media"] as? Int == 41)
            #expect(counts["follows"] as? Int == 50)
            #expect(counts["followed_by"] as? Int == 50)

            let other = try fetch(server.baseURL + "/instagram/v1/users/20?access_token=ig-token-other").object()
            #expect((other["data"] as? [String: Any])?["username"] as? String == "shayne")
            let mikeyk = try fetch(server.baseURL + "/instagram/v1/users/4?access_token=ig-token-1").object()
            #expect((mikeyk["data"] as? [String: Any])?["username"] as? String == "mikeyk")
            #expect((mikeyk["data"] as? [String: Any])?["id"] as? String == "4")

            let unknown = try fetch(server.baseURL + "/instagram/v1/users/999?access_token=ig-token-1")
            #expect(unknown.status == 400)
            #expect(try meta(unknown)["error_type"] as? String == "APINotFoundError")
            #expect(try meta(unknown)["error_message"] as? String == "this user does not exist")
        }
    }

    @Test func invalidAndMissingTokens() async throws {
        try await withServer { server in
            let expected =
                #"{"meta":{"error_type":"OAuthAccessTokenException","code":400,"error_message":"The access_token provided is invalid."}}"#
            for suffix in ["", "?access_token=nope", "?access_token=ig-token-", "?count=3"] {
                let response = try fetch(server.baseURL + "/instagram/v1/users/self" + suffix)
                #expect(response.status == 400)
                #expect(response.header("content-type") == "application/json; charset=utf-8")
                #expect(response.text == expected)
            }
            let list = try fetch(server.baseURL + "/instagram/v1/users/self/followed-by")
            #expect(list.status == 400)
            #expect(try meta(list)["error_type"] as? String == "OAuthAccessTokenException")
        }
    }

    @Test func rateLimitedToken() async throws {
        try await withServer { server in
            let response = try fetch(server.baseURL + "/instagram/v1/users/self?access_token=ig-ratelimited")
            #expect(response.status == 429)
            let meta = try meta(response)
            #expect(meta["error_type"] as? String == "OAuthRateLimitException")
            #expect(meta["code"] as? Int == 429)
            #expect(meta["error_message"] as? String == "The maximum number of requests per hour has been exceeded.")
            #expect(response.header("x-ratelimit-remaining") == "0")
        }
    }

    @Test func followedByPagesFollowNextURLToTheEnd() async throws {
        try await withServer { server in
            let recorded =
                try JSONSerialization.jsonObject(
                    with: Data(try TestServer.fixture("instagram/followed_by.json"))) as? [String: Any]
            let recordedIDs = try #require(recorded?["data"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            var url: String? = server.baseURL + "/instagram/v1/users/self/followed-by?access_token=ig-token-1"
            var ids: [Int] = []
            var pages = 0
            while let next = url, pages < 10 {
                let response = try fetch(next)
                #expect(response.status == 200)
                pages += 1
                let envelope = try response.object()
                let users = try #require(envelope["data"] as? [[String: Any]])
                ids += users.compactMap { $0["id"] as? Int }
                let pagination = try #require(envelope["pagination"] as? [String: Any])
                url = pagination["next_url"] as? String
                if let link = url {
                    #expect(users.count == 20)
                    #expect(link.hasPrefix(server.baseURL + "/instagram/v1/users/self/followed-by?"))
                    let query = queryItems(link)
                    #expect(query["access_token"] == "ig-token-1")
                    #expect(query["count"] == "20")
                    #expect(query["cursor"] == pagination["next_cursor"] as? String)
                } else {
                    #expect(pagination.isEmpty)
                }
            }
            #expect(pages == 3)
            #expect(ids.count == 50)
            #expect(ids == recordedIDs)

            let follows = try fetch(
                server.baseURL + "/instagram/v1/users/20/follows?access_token=ig-token-1&count=50"
            ).object()
            #expect((follows["data"] as? [Any])?.count == 50)
            #expect((follows["pagination"] as? [String: Any])?.isEmpty == true)
        }
    }

    @Test func recentMediaPagesCarryFilters() async throws {
        try await withServer { server in
            var url: String? = server.baseURL + "/instagram/v1/users/self/media/recent?access_token=ig-token-1"
            var media: [[String: Any]] = []
            var pages = 0
            while let next = url, pages < 10 {
                let response = try fetch(next)
                #expect(response.status == 200)
                pages += 1
                let envelope = try response.object()
                media += try #require(envelope["data"] as? [[String: Any]])
                let pagination = try #require(envelope["pagination"] as? [String: Any])
                url = pagination["next_url"] as? String
                if let link = url {
                    #expect(queryItems(link)["max_id"] == pagination["next_max_id"] as? String)
                    #expect(queryItems(link)["access_token"] == "ig-token-1")
                }
            }
            #expect(pages == 3)
            #expect(media.count == 41)
            #expect(Set(media.compactMap { $0["id"] as? Int }).count == 41)
            for item in media {
                let filter = try #require(item["filter"] as? String)
                #expect(Self.filters.contains(filter))
                #expect(item["link"] is String)
                #expect(item["images"] is [String: Any])
                #expect(item["type"] as? Int == 1)
            }
            #expect(Set(media.compactMap { $0["filter"] as? String }).count > 3)

            let bigPage = try fetch(
                server.baseURL + "/instagram/v1/users/20/media/recent?access_token=ig-token-1&count=30"
            ).object()
            #expect((bigPage["data"] as? [Any])?.count == 30)
        }
    }

    @Test func mediaByIDAndSearch() async throws {
        try await withServer { server in
            let media = try fetch(server.baseURL + "/instagram/v1/media/18600493?access_token=ig-token-1").object()
            let data = try #require(media["data"] as? [String: Any])
            #expect(data["id"] as? Int == 18_600_493)
            #expect(data["like_count"] as? Int == 52)
            #expect(data["filter"] is String)
            let missing = try fetch(server.baseURL + "/instagram/v1/media/1?access_token=ig-token-1")
            #expect(missing.status == 400)
            #expect(try meta(missing)["error_type"] as? String == "APINotFoundError")

            let found = try fetch(server.baseURL + "/instagram/v1/users/search?q=shay&access_token=ig-token-1")
            #expect((try found.object()["data"] as? [[String: Any]])?.first?["username"] as? String == "shayne")
            let none = try fetch(server.baseURL + "/instagram/v1/users/search?q=zzz&access_token=ig-token-1")
            #expect((try none.object()["data"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func authorizeRedirectsWithTheToken() async throws {
        try await withServer { server in
            for path in ["/instagram/oauth/authorize/", "/instagram/oauth/authorize"] {
                let response = try fetch(
                    server.baseURL + path
                        + "?client_id=test-client&redirect_uri=http%3A%2F%2Flocalhost%3A8765%2Fcb&response_type=token&state=xyz%201"
                )
                #expect(response.status == 302)
                #expect(response.header("location") == "http://localhost:8765/cb#access_token=ig-token-1&state=xyz%201")
            }
            let stateless = try fetch(
                server.baseURL
                    + "/instagram/oauth/authorize/?client_id=test-client&redirect_uri=http://localhost/cb&response_type=token"
            )
            #expect(stateless.header("location") == "http://localhost/cb#access_token=ig-token-1")
        }
    }

    @Test func authorizeDenialAndInvalidClient() async throws {
        try await withServer { server in
            let denied = try fetch(
                server.baseURL
                    + "/instagram/oauth/authorize/?client_id=deny-client&redirect_uri=http://localhost/cb&response_type=token&state=s1"
            )
            #expect(denied.status == 302)
            #expect(
                denied.header("location")
                    == "http://localhost/cb?error=access_denied&error_reason=user_denied&error_description=The+user+denied+your+request.&state=s1"
            )
            let invalid = try fetch(
                server.baseURL
                    + "/instagram/oauth/authorize/?client_id=who&redirect_uri=http://localhost/cb&response_type=token"
            )
            #expect(invalid.status == 400)
            #expect(invalid.text == #"{"code":400,"error_type":"OAuthException","error_message":"Invalid Client ID"}"#)
            #expect(invalid.header("location") == nil)
        }
    }
}
