import Foundation
import TestSupport
import Testing
import WebAPI

@Suite("a hostile server: no redirect or link off http(s), no endless body")
struct HostileServerTests {
    @Test(
        "a 307 to http+unix:// after a POST and a 302 after a GET are refused; nothing reaches the socket",
        arguments: [
            ("POST", 307), ("GET", 302),
        ])
    func redirectToUnixSocket(method: String, status: Int) async throws {
        let trap = try UnixSocketTrap()
        defer { trap.remove() }
        try await withLoopback { loop in
            let body: Request.Body = method == "POST" ? .json(Array(#"{"Image":"alpine"}"#.utf8)) : .none
            let error = await apiError {
                _ = try await loop.client(timeout: 5).send(
                    Request(method, "/hostile/redirect/unix?socket=\(trap.queryValue)&status=\(status)", body: body))
            }
            #expect(error?.kind == .network, "\(String(describing: error))")
            #expect(
                error?.message.contains("refused to follow the redirect to http+unix://") == true,
                "\(String(describing: error))")
            #expect(trap.connections() == 0, "a request reached the Unix socket")
            #expect(loop.requests("/hostile/redirect/unix").count == 1)
        }
    }

    @Test(
        "redirects to file:// and ftp:// are NetworkErrors, never followed",
        arguments: ["/hostile/redirect/file", "/hostile/redirect/ftp"])
    func redirectOffHTTP(path: String) async throws {
        try await withLoopback { loop in
            let error = await apiError { _ = try await loop.client().send(Request("GET", path)) }
            #expect(error?.kind == .network, "\(String(describing: error))")
            #expect(error?.message.contains("only http and https") == true, "\(String(describing: error))")
            #expect(loop.server.requests.count == 1)
        }
    }

    @Test("a base URL (plugin or APIMACRO_*_URL) on http+unix:// is refused before anything is sent")
    func baseURLOnUnixSocket() async throws {
        let trap = try UnixSocketTrap()
        defer { trap.remove() }
        try await withLoopback { loop in
            let client = loop.client(timeout: 5, baseURL: "http+unix://\(trap.queryValue)")
            let error = await apiError { _ = try await client.send(Request("GET", "/containers/json")) }
            #expect(error?.kind == .invalidRequest, "\(String(describing: error))")
            #expect(error?.message.contains("is not an http(s) URL") == true, "\(String(describing: error))")
            #expect(trap.connections() == 0, "a request reached the Unix socket")
        }
    }

    @Test("a Link next and a next_url pointing at http+unix:// are NetworkErrors; nothing reaches the socket")
    func nextLinksToUnixSocket() async throws {
        let trap = try UnixSocketTrap()
        defer { trap.remove() }
        try await withLoopback { loop in
            let target = "http+unix://\(trap.queryValue)/containers/create"
            let client = loop.client(timeout: 5)
            for (path, pagination) in [
                ("/hostile/link-next", Pagination.linkHeader),
                ("/hostile/next-url", .nextURL(path: ["pagination", "next_url"])),
            ] {
                let first = Request("GET", path, query: [("to", target)])
                let page = try await client.send(first)
                let next = try #require(pagination.next(after: page, request: first, itemCount: 1))
                let error = await apiError { _ = try await client.send(next) }
                #expect(error?.kind == .network, "\(path): \(String(describing: error))")
                #expect(
                    error?.message.contains("refused to follow the next page link") == true,
                    "\(String(describing: error))")
            }
            #expect(trap.connections() == 0, "a request reached the Unix socket")
        }
    }

    @Test("a next page link from https down to plain http elsewhere is refused; to loopback it is allowed")
    func nextLinkDowngrade() async throws {
        try await withLoopback { loop in
            let client = loop.client(baseURL: "https://api.example.com")
            let page = Response(
                status: 200, headers: Headers([("Link", "<http://api.example.com/items?page=2>; rel=\"next\"")]),
                body: Array("[1]".utf8),
                url: "https://api.example.com/items")
            let next = try #require(
                Pagination.linkHeader.next(after: page, request: Request("GET", "/items"), itemCount: 1))
            #expect(throws: APIError.self) { _ = try client.prepare(next) }
            var loopback = next
            loopback.target = "http://127.0.0.1:9/items?page=2"
            #expect(throws: Never.self) { _ = try client.prepare(loopback) }
        }
    }

    @Test("the transport alone never follows a redirect (AsyncHTTPClient's own following is off) nor sends off http(s)")
    func transportFollowsNothing() async throws {
        let trap = try UnixSocketTrap()
        defer { trap.remove() }
        try await withLoopback { loop in
            let exchange = Exchange(
                method: "POST", url: loop.server.baseURL + "/hostile/redirect/unix?socket=\(trap.queryValue)",
                headers: Headers(), body: Array("{}".utf8), timeout: 5)
            let response = try await loop.transport.send(exchange)
            #expect(response.status == 307)
            var direct = exchange
            direct.url = "http+unix://\(trap.queryValue)/containers/create"
            let error = await apiError { _ = try await loop.transport.send(direct) }
            #expect(error?.kind == .network, "\(String(describing: error))")
            #expect(trap.connections() == 0, "a request reached the Unix socket")
        }
    }

    @Test("the scheme rule: http(s) only; https to http only towards loopback")
    func schemeRule() {
        #expect(SchemeRule.violation("http+unix://%2Ftmp%2Fx.sock/a", from: nil) != nil)
        #expect(SchemeRule.violation("https+unix://%2Ftmp%2Fx.sock/a", from: "https://a.example") != nil)
        #expect(SchemeRule.violation("file:///etc/passwd", from: "http://a.example") != nil)
        #expect(SchemeRule.violation("ftp://127.0.0.1/x", from: "http://127.0.0.1") != nil)
        #expect(SchemeRule.violation("HTTPS://b.example/x", from: "http://a.example") == nil)
        #expect(SchemeRule.violation("http://b.example/x", from: "http://a.example") == nil)
        #expect(SchemeRule.violation("http://b.example/x", from: "https://a.example") != nil)
        #expect(SchemeRule.violation("http://127.0.0.1:8080/x", from: "https://a.example") == nil)
        #expect(SchemeRule.violation("http://b.example/x", from: nil) == nil)
    }

    @Test("headers, then a stalled body: Timeout at the deadline, one attempt", .timeLimit(.minutes(10)))
    func stalledBody() async throws {
        try await withLoopback { loop in
            let error = await apiError { _ = try await loop.client(timeout: 1).send(Request("GET", "/hostile/stall")) }
            // The server never sends the rest of the body: a Timeout is the deadline's doing, and
            // nothing else can end the call (without a deadline the time limit, a hang guard only,
            // fails the test). No duration is measured: load cannot decide the result.
            #expect(error?.kind == .timeout, "\(String(describing: error))")
            #expect(loop.requests("/hostile/stall").count == 1)
        }
    }

    @Test("a body trickling one byte at a time ends at the deadline, one attempt", .timeLimit(.minutes(10)))
    func tricklingBody() async throws {
        try await withLoopback { loop in
            let error = await apiError {
                _ = try await loop.client(timeout: 1).send(
                    Request("GET", "/hostile/trickle", query: [("interval_ms", "100")]))
            }
            // A byte every 100 ms of a 1 MiB body is 29 hours: only the deadline ends it.
            #expect(error?.kind == .timeout, "\(String(describing: error))")
            #expect(loop.requests("/hostile/trickle").count == 1)
        }
    }

    @Test("a body over the size limit is a NetworkError, never retried")
    func oversizedBodyNotRetried() async throws {
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test", maximumBodySize: 1024)
        let client = APIClient(
            configuration: ClientConfiguration(name: "test", baseURL: server.baseURL), transport: transport,
            log: ExchangeLog(logger: nil),
            redactor: Redactor(secrets: []))
        let error = await apiError {
            _ = try await client.send(Request("GET", "/hostile/big", query: [("bytes", "4096")]))
        }
        let attempts = server.requests.filter { $0.path == "/hostile/big" }.count
        try await transport.shutdown()
        try await server.shutdown()
        #expect(error?.kind == .network, "\(String(describing: error))")
        #expect(error?.message.contains("larger than") == true, "\(String(describing: error))")
        #expect(attempts == 1)
    }

    @Test("a response head past 256 KiB is a NetworkError, never retried")
    func hugeHeadNotRetried() async throws {
        try await withLoopback { loop in
            let error = await apiError { _ = try await loop.client().send(Request("GET", "/hostile/huge-head")) }
            #expect(error?.kind == .network, "\(String(describing: error))")
            #expect(
                error?.message.contains("response head is larger than 256 KiB") == true, "\(String(describing: error))")
            #expect(loop.requests("/hostile/huge-head").count == 1)
        }
    }

    @Test("a gzip bomb is a NetworkError, never retried")
    func gzipBombNotRetried() async throws {
        try await withLoopback { loop in
            let error = await apiError { _ = try await loop.client().send(Request("GET", "/hostile/gzip-bomb")) }
            #expect(error?.kind == .network, "\(String(describing: error))")
            #expect(error?.message.contains("decompression bomb") == true, "\(String(describing: error))")
            #expect(loop.requests("/hostile/gzip-bomb").count == 1)
        }
    }

    @Test("the retry budget: timeout × (retries + 1) plus at most 1.4 s of backoff by default")
    func retryBudget() {
        #expect(abs(RetryPolicy().maximumTotalDelay - 1.4) < 1e-9)
        #expect(RetryPolicy(maxRetries: 0).maximumTotalDelay == 0)
        let ten: Double = 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 25
        #expect(abs(RetryPolicy(maxRetries: 10).maximumTotalDelay - ten) < 1e-9)
    }

    @Test("basic credentials of a request: the password and its base64 are redacted in the echo, -v and errors")
    func basicAuthRedacted() async throws {
        try await withLoopback { loop in
            let client = loop.client()
            var request = Request("GET", "/echo/basic")
            request.basicAuth = Request.BasicAuth(user: "alice", password: Secret("Sup3rS3cretPw"))
            let response = try await client.send(request)
            #expect(response.text.contains("YWxpY2U6U3VwM3JTM2NyZXRQdw=="), "the echo is the negative control")
            let redacted = client.redactor.redact(response.text)
            #expect(!redacted.contains("YWxpY2U6U3VwM3JTM2NyZXRQdw"))
            #expect(!redacted.contains("Sup3rS3cretPw"))
        }
    }

    @Test("a basic credential of a client (plugin kind = basic) is redacted in its base64 forms too")
    func basicCredentialRedacted() {
        let slot = CredentialSlot(.basic(user: "alice", password: Secret("Sup3rS3cretPw")))
        for text in [
            "Basic YWxpY2U6U3VwM3JTM2NyZXRQdw==", "YWxpY2U6U3VwM3JTM2NyZXRQdw", "YWxpY2U6U3VwM3JTM2NyZXRQdw%3D%3D",
        ] {
            #expect(!slot.redactor.redact(text).contains("YWxpY2U6U3VwM3JTM2NyZXRQdw"), "\(text)")
        }
    }

    @Test("a path parameter of exactly .. or . is percent-encoded, never a dot segment")
    func dotSegments() async throws {
        #expect(FormEncoding.pathSegment("..") == "%2E%2E")
        #expect(FormEncoding.pathSegment(".") == "%2E")
        #expect(FormEncoding.pathSegment("...") == "...")
        #expect(FormEncoding.pathSegment("../x") == "..%2Fx")
    }
}
