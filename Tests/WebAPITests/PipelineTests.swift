import Foundation
import TestSupport
import Testing
import WebAPI

/// A server, a transport and a client for one test; `close()` stops them.
struct Loopback {
    let server: TestServer
    let transport: CurlTransport
    let log = ExchangeLog(logger: nil)

    static func start() async throws -> Loopback {
        Loopback(server: try await TestServer.start(), transport: CurlTransport(userAgent: "apimacro/test"))
    }

    func client(
        credential: Credential? = nil, timeout: Double = 30, maxWait: Double = 60, baseURL: String? = nil
    ) -> APIClient {
        APIClient(
            configuration: ClientConfiguration(
                name: "test", baseURL: baseURL ?? server.baseURL, credential: credential, timeout: timeout,
                maxWait: maxWait),
            transport: transport, log: log, redactor: Redactor(secrets: []))
    }

    func close() async throws {
        try await transport.shutdown()
        try await server.shutdown()
    }

    func requests(_ path: String) -> [RecordedRequest] { server.requests.filter { $0.path == path } }
}

/// Runs `body` with a fresh loopback setup, closing it afterwards.
func withLoopback(_ body: (Loopback) async throws -> Void) async throws {
    let loopback = try await Loopback.start()
    do {
        try await body(loopback)
    } catch {
        try await loopback.close()
        throw error
    }
    try await loopback.close()
}

func apiError(_ body: () async throws -> Void) async -> APIError? {
    do {
        try await body()
        return nil
    } catch let error as APIError {
        return error
    } catch {
        return APIError(.http, "unexpected \(error)")
    }
}

@Suite("the pipeline against a real loopback server")
struct PipelineTests {
    @Test("a 200 comes back with body, headers and the rate limit remembered")
    func success() async throws {
        try await withLoopback { loop in
            let client = loop.client()
            let response = try await client.send(Request("GET", "/users/octocat"))
            #expect(response.status == 200)
            #expect(JSONPath.string(in: response.body, path: ["login"]) == "octocat")
            #expect(client.rateLimit?.limit == 5000)
            #expect(client.rateLimit?.resource == "core")
            #expect(loop.requests("/users/octocat").first?.header("user-agent") == "apimacro/test")
        }
    }

    @Test(
        "statuses map onto error kinds with the API's message",
        arguments: [
            (404, APIError.Kind.notFound), (401, .unauthorized), (403, .forbidden), (422, .http), (500, .http),
        ])
    func statusKinds(status: Int, kind: APIError.Kind) async throws {
        try await withLoopback { loop in
            let error = await apiError { _ = try await loop.client().send(Request("GET", "/status/\(status)")) }
            #expect(error?.kind == kind)
            #expect(error?.status == status)
            #expect(error?.message.contains("status \(status)") == true, "\(error?.message ?? "")")
            #expect(error?.body?.contains("status \(status)") == true)
            #expect(error?.url == "\(loop.server.baseURL)/status/\(status)")
        }
    }

    @Test("503, 502 and 504 are retried for GET and then succeed")
    func retriesThenSucceeds() async throws {
        try await withLoopback { loop in
            loop.server.inject([.status(503), .status(502), .status(504)], path: "/users/octocat")
            let response = try await loop.client().send(Request("GET", "/users/octocat"))
            #expect(response.status == 200)
            #expect(loop.requests("/users/octocat").count == 4)
        }
    }

    @Test("after 3 retries the last 503 is the error")
    func retriesGiveUp() async throws {
        try await withLoopback { loop in
            loop.server.inject(Array(repeating: .status(503), count: 5), path: "/users/octocat")
            let error = await apiError { _ = try await loop.client().send(Request("GET", "/users/octocat")) }
            #expect(error?.kind == .http)
            #expect(error?.status == 503)
            #expect(loop.requests("/users/octocat").count == 4)
        }
    }

    @Test("a connection reset is retried; a POST is never retried")
    func resetsAndPost() async throws {
        try await withLoopback { loop in
            loop.server.inject([.reset, .reset], path: "/users/octocat")
            let status = try await loop.client().send(Request("GET", "/users/octocat")).status
            #expect(status == 200)
            #expect(loop.requests("/users/octocat").count == 3)
            loop.server.inject([.status(503)], path: "/echo")
            let error = await apiError {
                _ = try await loop.client().send(Request("POST", "/echo", body: .json(Array("{}".utf8))))
            }
            #expect(error?.status == 503)
            #expect(loop.requests("/echo").count == 1)
            loop.server.inject([.reset], path: "/echo/post")
            let reset = await apiError {
                _ = try await loop.client().send(Request("POST", "/echo/post", body: .json(Array("{}".utf8))))
            }
            #expect(reset?.kind == .network)
        }
    }

    @Test("a slow answer past the deadline is a Timeout, not retried")
    func timeout() async throws {
        try await withLoopback { loop in
            let start = Date()
            let error = await apiError {
                _ = try await loop.client(timeout: 0.5).send(Request("GET", "/slow", query: [("ms", "600000")]))
            }
            // The server answers after 10 minutes: without a deadline that ends the exchange
            // (and a prompt cancellation of the losing request) the call would wait that long.
            // 120 s is far from both 0.5 s and 600 s, so machine load cannot decide the result.
            #expect(error?.kind == .timeout)
            #expect(Date().timeIntervalSince(start) < 120)
            #expect(loop.requests("/slow").count == 1)
        }
    }

    @Test("a truncated body is a network error (retried, then given up)")
    func truncated() async throws {
        try await withLoopback { loop in
            loop.server.inject(Array(repeating: .truncated, count: 4), path: "/users/octocat")
            let error = await apiError { _ = try await loop.client().send(Request("GET", "/users/octocat")) }
            #expect(error?.kind == .network)
        }
    }

    @Test("a 429 with a short retry-after is waited out")
    func waitsForRetryAfter() async throws {
        try await withLoopback { loop in
            loop.server.inject([.rateLimited(retryAfter: 1)], path: "/users/octocat")
            let start = Date()
            let status = try await loop.client().send(Request("GET", "/users/octocat")).status
            #expect(status == 200)
            #expect(Date().timeIntervalSince(start) >= 0.9)
            #expect(loop.requests("/users/octocat").count == 2)
        }
    }

    @Test("a rate limit longer than the max wait raises RateLimited with its reset time")
    func rateLimitTooLong() async throws {
        try await withLoopback { loop in
            loop.server.inject([.rateLimited(retryAfter: 120)], path: "/users/octocat")
            let error = await apiError { _ = try await loop.client(maxWait: 60).send(Request("GET", "/users/octocat")) }
            #expect(error?.kind == .rateLimited)
            #expect(error?.status == 429)
            #expect(error?.retryAfter == 120)
            #expect(error?.resetAt != nil)
            loop.server.inject([.forbiddenRateLimit(resetIn: 3600)], path: "/users/octocat")
            let forbidden = await apiError {
                _ = try await loop.client(maxWait: 60).send(Request("GET", "/users/octocat"))
            }
            #expect(forbidden?.kind == .rateLimited)
            #expect(forbidden?.status == 403)
            #expect(forbidden?.message.contains("API rate limit exceeded") == true)
            #expect((forbidden?.resetAt ?? 0) > Int(Date().timeIntervalSince1970) + 3000)
        }
    }

    @Test("credentials go to the client's own host only: not to another host's pagination link or redirect")
    func credentialsStayHome() async throws {
        try await withLoopback { loop in
            let client = loop.client(credential: .bearer(Secret("ghp_test_token_value")))
            let first = try await client.send(Request("GET", "/cross-host/items"))
            let next = try #require(LinkHeader.next(first.headers["link"]))
            #expect(next.hasPrefix(loop.server.otherHostURL))
            _ = try await client.send(Request("GET", next))
            let seen = loop.requests("/cross-host/items")
            #expect(seen.count == 2)
            #expect(
                seen[0].listener == TestServer.mainHost
                    && seen[0].header("authorization") == "Bearer ghp_test_token_value")
            #expect(seen[1].listener == TestServer.otherHost && seen[1].header("authorization") == nil)

            loop.server.clearRequests()
            let target = "\(loop.server.otherHostURL)/bearer"
            let redirected = try await client.send(
                Request("GET", "/redirect", query: [("to", target)], validatesStatus: false))
            #expect(redirected.status == 401)
            #expect(loop.requests("/redirect").first?.header("authorization") != nil)
            #expect(loop.requests("/bearer").first?.header("authorization") == nil)
        }
    }

    @Test("a query credential is added last and never appears in the URL a caller sees")
    func queryCredential() async throws {
        try await withLoopback { loop in
            let client = loop.client(credential: .query(name: "key", value: Secret("AIzaSECRETKEY")))
            let response = try await client.send(Request("GET", "/echo/q", query: [("a", "1")]))
            #expect(loop.requests("/echo/q").first?.query["key"] == "AIzaSECRETKEY")
            #expect(!response.url.contains("AIzaSECRETKEY"))
            loop.server.inject([.status(404)], path: "/echo/q")
            let error = await apiError { _ = try await client.send(Request("GET", "/echo/q")) }
            #expect(
                error.map { !$0.message.contains("AIzaSECRETKEY") && !($0.url ?? "").contains("AIzaSECRETKEY") } == true
            )
        }
    }

    @Test("basic auth is refused over plain http to a non-loopback host, before any request")
    func basicAuthOverHTTP() async throws {
        try await withLoopback { loop in
            let client = loop.client()
            let error = await apiError {
                _ = try await client.send(
                    Request("GET", "http://example.invalid/x", basicAuth: .init(user: "u", password: Secret("p"))))
            }
            #expect(error?.kind == .auth)
            let ok = try await client.send(
                Request("GET", "/basic-auth/ada/pw", basicAuth: .init(user: "ada", password: Secret("pw"))))
            #expect(JSONPath.value(in: ok.body, path: ["authenticated"]) as? Bool == true)
        }
    }

    @Test("bodies: query, JSON, form, multipart and raw reach the server as sent")
    func bodies() async throws {
        try await withLoopback { loop in
            let client = loop.client()
            let json = try await client.send(
                Request("POST", "/echo", query: [("q", "a b&c")], body: .json(Array(#"{"x":[1,"é"]}"#.utf8))))
            #expect(JSONPath.string(in: json.body, path: ["query", "q"]) == "a b&c")
            #expect(JSONPath.string(in: json.body, path: ["json", "x", "1"]) == "é")
            let form = try await client.send(Request("POST", "/echo", body: .form([("name", "Zoë"), ("n", "1&2")])))
            #expect(JSONPath.string(in: form.body, path: ["form", "name"]) == "Zoë")
            #expect(JSONPath.string(in: form.body, path: ["form", "n"]) == "1&2")
            let multipart = try await client.send(
                Request(
                    "POST", "/echo",
                    body: .multipart([
                        MultipartPart(name: "field", data: Array("value".utf8)),
                        MultipartPart(
                            name: "file", filename: "a.txt", contentType: "text/plain", data: Array("hello".utf8)),
                    ])))
            #expect(JSONPath.string(in: multipart.body, path: ["form", "field"]) == "value")
            #expect(JSONPath.string(in: multipart.body, path: ["files", "0", "filename"]) == "a.txt")
            #expect(JSONPath.string(in: multipart.body, path: ["files", "0", "text"]) == "hello")
            let raw = try await client.send(
                Request("PUT", "/echo", body: .raw([0, 1, 2, 255], contentType: "application/octet-stream")))
            #expect(JSONPath.string(in: raw.body, path: ["body_base64"]) == "AAEC/w==")
            #expect(JSONPath.string(in: raw.body, path: ["method"]) == "PUT")
        }
    }

    @Test("the exchange log counts every request that reached the network")
    func counting() async throws {
        try await withLoopback { loop in
            loop.server.inject([.status(503)], path: "/users/octocat")
            _ = try await loop.client().send(Request("GET", "/users/octocat"))
            #expect(loop.log.requests == 2)
        }
    }
}
