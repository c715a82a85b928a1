import Foundation
import Testing

@testable import TestSupport

@Suite struct ProtocolTests {
    @Test func rateLimitHeadersCountDownPerListener() async throws {
        // The window starts when the server does: its reset lies between the hour after a moment
        // before the server started and the hour after the answer came (no margin for load).
        let before = epochNow()
        try await withServer { server in
            let first = try fetch(server.baseURL + "/users/octocat")
            let after = epochNow()
            #expect(first.header("x-ratelimit-limit") == "5000")
            #expect(first.header("x-ratelimit-remaining") == "4999")
            #expect(first.header("x-ratelimit-used") == "1")
            #expect(first.header("x-ratelimit-resource") == "core")
            let reset = try #require(first.header("x-ratelimit-reset").flatMap { Int($0) })
            #expect((before + 3600)...(after + 3600) ~= reset, "\(reset) not in \(before)...\(after) + 3600")
            let second = try fetch(server.baseURL + "/nowhere")
            #expect(second.status == 404)
            #expect(second.header("x-ratelimit-remaining") == "4998")
            let other = try fetch(server.otherHostURL + "/users/octocat")
            #expect(other.header("x-ratelimit-remaining") == "4999")
        }
    }

    @Test func etagRevalidationAnswers304WithoutCountingIt() async throws {
        try await withServer { server in
            let first = try fetch(server.baseURL + "/users/octocat")
            let etag = try #require(first.header("etag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 34)
            let revalidated = try fetch(server.baseURL + "/users/octocat", headers: [("If-None-Match", etag)])
            #expect(revalidated.status == 304)
            #expect(revalidated.body.isEmpty)
            #expect(revalidated.header("etag") == etag)
            #expect(revalidated.header("x-ratelimit-remaining") == "4999")
            let changed = try fetch(server.baseURL + "/users/octocat", headers: [("If-None-Match", "\"other\"")])
            #expect(changed.status == 200)
            #expect(changed.header("x-ratelimit-remaining") == "4998")
            #expect(try fetch(server.baseURL + "/users/octocat").header("etag") == etag)
        }
    }

    @Test func keepAliveServesTwoRequestsOnOneConnectionAndHonoursClose() async throws {
        try await withServer { server in
            let connection = try RawConnection(url: server.baseURL)
            defer { connection.shutdown() }
            let first = try connection.request("GET", "/users/octocat")
            let second = try connection.request("GET", "/text")
            #expect(first.status == 200)
            #expect(second.text == "héllo wörld\n")
            let head = try connection.request("HEAD", "/users/octocat")
            #expect(head.status == 200)
            #expect(head.header("content-length") == first.header("content-length"))
            let last = try connection.request("GET", "/text", headers: [("Connection", "close")])
            #expect(last.status == 200)
            #expect(last.header("connection") == "close")
            #expect(connection.peerClosed())
            #expect(server.requests.count == 4)
        }
    }

    @Test func crossHostLinkLeadsToTheOtherListener() async throws {
        try await withServer { server in
            #expect(server.otherHostURL.hasPrefix("http://127.0.0.2:"))
            let first = try fetch(
                server.baseURL + "/cross-host/items", headers: [("Authorization", "Bearer secret")])
            #expect(try first.array().count == 2)
            let next = try #require(parseLinks(first.header("link"))["next"])
            #expect(next == server.otherHostURL + "/cross-host/items?page=2")
            let second = try fetch(next)
            #expect(try second.array().count == 1)
            #expect(second.header("link") == nil)
            let requests = server.requests
            #expect(requests.map(\.listener) == ["127.0.0.1", "127.0.0.2"])
            #expect(requests[0].header("authorization") == "Bearer secret")
            #expect(requests[1].header("authorization") == nil)
            #expect(requests[1].host == "127.0.0.2:\(server.otherHostPort)")
        }
    }

    @Test func requestsAreRecorded() async throws {
        try await withServer { server in
            _ = try fetch(
                server.baseURL + "/echo/a%20b?x=1&y=hello+there", method: "PUT",
                headers: [("X-Custom", "v1"), ("Content-Type", "text/plain")], body: Array("payload".utf8))
            let request = try #require(server.requests.first)
            #expect(request.method == "PUT")
            #expect(request.uri == "/echo/a%20b?x=1&y=hello+there")
            #expect(request.path == "/echo/a b")
            #expect(request.query == ["x": "1", "y": "hello there"])
            #expect(request.header("x-custom") == "v1")
            #expect(request.header("X-CUSTOM") == "v1")
            #expect(request.headers.contains { $0.0 == "X-Custom" })
            #expect(request.body == Array("payload".utf8))
            #expect(request.host == "127.0.0.1:\(server.port)")
            #expect(request.listener == "127.0.0.1")
            server.clearRequests()
            #expect(server.requests.isEmpty)
        }
    }

    @Test func fixturesAreReadRelativeToTheCheckout() throws {
        let bytes = try TestServer.fixture("github/octokit-errors.json")
        #expect(bytes.count == 2006)
        #expect(throws: FixtureError.self) { _ = try TestServer.fixture("github/missing.json") }
    }

    @Test func orderedJSONRoundTripsTheFixturesCompactly() throws {
        for file in ["octokit-get-repository.json", "octokit-search-issues.json", "octokit-paginate-issues.json"] {
            let parsed = try JSON(parsing: try TestServer.fixture("github/" + file))
            let again = try JSON(parsing: parsed.bytes)
            #expect(parsed == again)
            let foundation = try #require(try JSONSerialization.jsonObject(with: Data(parsed.bytes)) as? [Any])
            let original = try #require(
                try JSONSerialization.jsonObject(with: Data(try TestServer.fixture("github/" + file))) as? [Any])
            #expect(NSArray(array: foundation) == NSArray(array: original))
        }
        #expect(
            try JSON(parsing: Array(#"{"a":"\ud83d\ude00\n","b":[1.5e3,-0,true,null]}"#.utf8)).text
                == "{\"a\":\"😀\\n\",\"b\":[1.5e3,-0,true,null]}")
        #expect(throws: JSONParseError.self) { _ = try JSON(parsing: Array(#"{"login": "x","#.utf8)) }
    }
}
