import Foundation
import TestSupport
import Testing
import WebAPI

/// Redirects between the test server's two origins (127.0.0.1 and 127.0.0.2, each on its own
/// port): what a request carries to another origin.
@Suite("redirects to another origin")
struct RedirectTests {
    /// A secret the client knows (as one from the environment).
    static let known = "env-SECRET-known-7"

    /// Headers that carry a credential: named so by the credential rule, Proxy-Authorization, and
    /// one of any name whose value holds a secret the client knows.
    static let credentials = [
        ("X-Api-Key", "k-SECRET-1"), ("Private-Token", "k-SECRET-2"), ("X-Auth-Token", "k-SECRET-3"),
        ("Proxy-Authorization", "Basic k-SECRET-4"), ("Authorization", "Bearer k-SECRET-5"),
        ("Cookie", "session=k-SECRET-6"), ("X-Anything", "v=\(known)"),
    ]

    func client(_ loop: Loopback) -> APIClient {
        APIClient(
            configuration: ClientConfiguration(name: "test", baseURL: loop.server.baseURL, timeout: 30, maxWait: 60),
            transport: loop.transport, log: loop.log, redactor: Redactor(secrets: [Self.known]))
    }

    @Test(
        "a redirect to another origin carries no credential header; one to the same origin keeps them",
        arguments: [301, 302, 303, 307, 308])
    func credentialHeadersDropped(status: Int) async throws {
        try await withLoopback { loop in
            let client = client(loop)
            let headers = Self.credentials + [("X-Trace", "trace-1")]
            let away = try await client.send(
                Request(
                    "GET", "/redirect",
                    query: [("to", "\(loop.server.otherHostURL)/echo/away"), ("status", "\(status)")],
                    headers: headers))
            #expect(away.status == 200)
            let first = try #require(loop.requests("/redirect").first)
            for (name, value) in Self.credentials { #expect(first.header(name) == value, "\(name) was not sent home") }
            let landed = try #require(loop.requests("/echo/away").first)
            #expect(landed.listener == TestServer.otherHost)
            for (name, _) in Self.credentials {
                #expect(landed.header(name) == nil, "\(name) followed a \(status) to another origin")
            }
            #expect(landed.header("x-trace") == "trace-1", "an ordinary header is kept")

            _ = try await client.send(
                Request(
                    "GET", "/redirect", query: [("to", "\(loop.server.baseURL)/echo/home"), ("status", "\(status)")],
                    headers: headers))
            let home = try #require(loop.requests("/echo/home").first)
            for (name, value) in Self.credentials { #expect(home.header(name) == value, "\(name) dropped at home") }
        }
    }

    @Test(
        "a request body is not sent on to another origin: a clear error naming the target origin, nothing sent there",
        arguments: [("POST", 307), ("POST", 308), ("PUT", 302), ("PATCH", 301)])
    func bodyRefused(method: String, status: Int) async throws {
        try await withLoopback { loop in
            let error = await apiError {
                _ = try await client(loop).send(
                    Request(
                        method, "/redirect",
                        query: [
                            ("to", "\(loop.server.otherHostURL)/echo/posted"), ("status", "\(status)"),
                            ("private_token", "pt-SECRET-8"),
                        ],
                        body: .json(Array(#"{"secret":"body"}"#.utf8))))
            }
            let refused = try #require(error)
            #expect(refused.kind == .http && refused.status == status)
            #expect(refused.message.contains(loop.server.otherHostURL), "\(refused.message)")
            #expect(refused.message.contains("body"), "\(refused.message)")
            #expect(!refused.message.contains("pt-SECRET-8") && !(refused.url ?? "").contains("pt-SECRET-8"))
            #expect(loop.requests("/echo/posted").isEmpty, "the body went to the other origin")
            #expect(loop.requests("/redirect").count == 1)
        }
    }

    @Test("a body still follows a 307 within its origin; a POST's 302 to another origin goes on as a GET without it")
    func bodyWithinOrigin() async throws {
        try await withLoopback { loop in
            let client = client(loop)
            let body = Array(#"{"n":1}"#.utf8)
            let same = try await client.send(
                Request(
                    "POST", "/redirect", query: [("to", "\(loop.server.baseURL)/echo/same"), ("status", "307")],
                    body: .json(body)))
            #expect(same.status == 200)
            #expect(loop.requests("/echo/same").first.map { ($0.method, $0.body) } ?? ("", []) == ("POST", body))
            let away = try await client.send(
                Request(
                    "POST", "/redirect", query: [("to", "\(loop.server.otherHostURL)/echo/get"), ("status", "302")],
                    body: .json(body)))
            #expect(away.status == 200)
            #expect(
                loop.requests("/echo/get").first.map { ($0.method, $0.body.isEmpty) } ?? ("", false) == ("GET", true))
        }
    }
}
