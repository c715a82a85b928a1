import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Counts elements by name while checking that a document parses as XML.
final class ElementCounter: NSObject, XMLParserDelegate {
    var counts: [String: Int] = [:]

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        counts[elementName, default: 0] += 1
    }

    static func count(_ bytes: [UInt8]) -> [String: Int]? {
        let parser = XMLParser(data: Data(bytes))
        let counter = ElementCounter()
        parser.delegate = counter
        return parser.parse() ? counter.counts : nil
    }
}

@Suite struct HelperRouteTests {
    @Test func echoDescribesAFormBody() async throws {
        try await withServer { server in
            let response = try fetch(
                server.baseURL + "/echo/deeper/path?x=1", method: "POST",
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Thing", "yes")],
                body: Array("a=1&b=hello+world&c=%C3%A9".utf8))
            let echo = try response.object()
            #expect(echo["method"] as? String == "POST")
            #expect(echo["path"] as? String == "/echo/deeper/path")
            #expect(echo["query"] as? [String: String] == ["x": "1"])
            #expect((echo["headers"] as? [String: String])?["x-thing"] == "yes")
            #expect(echo["form"] as? [String: String] == ["a": "1", "b": "hello world", "c": "é"])
            #expect(echo["body_text"] as? String == "a=1&b=hello+world&c=%C3%A9")
            #expect(echo["files"] is NSNull)
        }
    }

    @Test func echoParsesMultipart() async throws {
        try await withServer { server in
            let boundary = "----apimacro-boundary-42"
            var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nZoë\r\n".utf8)
            body += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"notes.txt\"\r\n".utf8)
            body += Array("Content-Type: text/plain\r\n\r\nline one\r\nline two\r\n".utf8)
            body += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\n\r\n".utf8)
            body += [0xFF, 0x00, 0xFE]
            body += Array("\r\n--\(boundary)--\r\n".utf8)
            let response = try fetch(
                server.baseURL + "/echo", method: "POST",
                headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: body)
            let echo = try response.object()
            #expect(echo["form"] as? [String: String] == ["title": "Zoë"])
            let files = try #require(echo["files"] as? [[String: Any]])
            #expect(files.count == 2)
            #expect(files[0]["name"] as? String == "upload")
            #expect(files[0]["filename"] as? String == "notes.txt")
            #expect(files[0]["content_type"] as? String == "text/plain")
            #expect(files[0]["text"] as? String == "line one\r\nline two")
            #expect(files[0]["size"] as? Int == 18)
            #expect(files[1]["size"] as? Int == 3)
            #expect(files[1]["text"] is NSNull)
            #expect(files[1]["content_type"] is NSNull)
            #expect(echo["body_text"] is NSNull)
            #expect(echo["body_base64"] as? String == Data(body).base64EncodedString())
        }
    }

    @Test func echoParsesJSON() async throws {
        try await withServer { server in
            let response = try fetch(
                server.baseURL + "/echo", method: "PATCH", headers: [("Content-Type", "application/json")],
                body: Array(#"{"k":[1,2],"s":"ü"}"#.utf8))
            let json = try #require(try response.object()["json"] as? [String: Any])
            #expect(json["k"] as? [Int] == [1, 2])
            #expect(json["s"] as? String == "ü")
        }
    }

    @Test func feedsAreValidXML() async throws {
        try await withServer { server in
            let rss = try fetch(server.baseURL + "/feed.rss")
            #expect(rss.header("content-type")?.hasPrefix("application/rss+xml") == true)
            let rssCounts = try #require(ElementCounter.count(rss.body))
            #expect(rssCounts["rss"] == 1)
            #expect(rssCounts["item"] == 3)
            let atom = try fetch(server.baseURL + "/feed.atom")
            #expect(atom.header("content-type")?.hasPrefix("application/atom+xml") == true)
            let atomCounts = try #require(ElementCounter.count(atom.body))
            #expect(atomCounts["feed"] == 1)
            #expect(atomCounts["entry"] == 2)
        }
    }

    @Test func statusTextBytesAndBrokenJSON() async throws {
        try await withServer { server in
            let teapot = try fetch(server.baseURL + "/status/418")
            #expect(teapot.status == 418)
            #expect(teapot.text == #"{"message":"status 418"}"#)
            #expect(try fetch(server.baseURL + "/status/204").status == 204)
            #expect(try fetch(server.baseURL + "/status/99").status == 400)
            let text = try fetch(server.baseURL + "/text")
            #expect(text.header("content-type") == "text/plain; charset=utf-8")
            #expect(text.body == Array("héllo wörld\n".utf8))
            let bytes = try fetch(server.baseURL + "/bytes/1000")
            #expect(bytes.header("content-type") == "application/octet-stream")
            #expect(bytes.body.count == 1000)
            #expect(try fetch(server.baseURL + "/bytes/1000").body == bytes.body)
            #expect(Set(bytes.body).count > 200)
            let broken = try fetch(server.baseURL + "/not-json")
            #expect(broken.status == 200)
            #expect(broken.header("content-type") == "application/json; charset=utf-8")
            #expect(throws: (any Error).self) { _ = try broken.json() }
            let missing = try fetch(server.baseURL + "/no/such/route")
            #expect(missing.status == 404)
            #expect(missing.text == #"{"message":"Not Found"}"#)
        }
    }

    @Test func bigJSONAndSlow() async throws {
        try await withServer { server in
            let big = try fetch(server.baseURL + "/big.json?mb=1")
            #expect(big.status == 200)
            #expect((1_048_576..<1_100_000).contains(big.body.count))
            let items = try big.array()
            #expect(items.count > 500)
            #expect(items.first?["login"] as? String == "user1")
            let again = try fetch(server.baseURL + "/big.json?mb=1")
            #expect(again.header("etag") == big.header("etag"))
            let clock = ContinuousClock()
            let start = clock.now
            let slow = try fetch(server.baseURL + "/slow?ms=200")
            #expect(clock.now - start >= .milliseconds(190))
            #expect(try slow.object()["slept_ms"] as? Int == 200)
        }
    }

    @Test func basicAndBearerAuthentication() async throws {
        try await withServer { server in
            let good = "Basic " + Data("alice:s3cret".utf8).base64EncodedString()
            let ok = try fetch(server.baseURL + "/basic-auth/alice/s3cret", headers: [("Authorization", good)])
            #expect(ok.status == 200)
            #expect(try ok.object()["user"] as? String == "alice")
            #expect(try ok.object()["authenticated"] as? Bool == true)
            let bad = "Basic " + Data("alice:wrong".utf8).base64EncodedString()
            let refused = try fetch(server.baseURL + "/basic-auth/alice/s3cret", headers: [("Authorization", bad)])
            #expect(refused.status == 401)
            #expect(refused.header("www-authenticate")?.hasPrefix("Basic") == true)
            #expect(try fetch(server.baseURL + "/basic-auth/alice/s3cret").status == 401)
            for header in ["Bearer abc", "token abc"] {
                let bearer = try fetch(server.baseURL + "/bearer", headers: [("Authorization", header)])
                #expect(bearer.status == 200)
                #expect(bearer.text == #"{"token_present":true}"#)
            }
            let anonymous = try fetch(server.baseURL + "/bearer")
            #expect(anonymous.status == 401)
            #expect(anonymous.text == #"{"message":"Requires authentication"}"#)
        }
    }

    @Test func redirects() async throws {
        try await withServer { server in
            let found = try fetch(server.baseURL + "/redirect?to=%2Ftext")
            #expect(found.status == 302)
            #expect(found.header("location") == "/text")
            let target = server.otherHostURL + "/text"
            let temporary = try fetch(
                server.baseURL + "/redirect?status=307&to="
                    + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
            #expect(temporary.status == 307)
            #expect(temporary.header("location") == target)
            #expect(try fetch(server.baseURL + "/redirect").status == 400)
        }
    }
}
