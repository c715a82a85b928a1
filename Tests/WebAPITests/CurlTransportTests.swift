import Foundation
import Synchronization
import TestSupport
import Testing
import WebAPI

#if canImport(Glibc)
    import Glibc
#endif

@Suite("the libcurl transport: caller-thread and transfer-thread calls, cancellation")
struct CurlTransportTests {
    @Test("a transfer on its caller's thread stops when the call's task is cancelled", .timeLimit(.minutes(10)))
    func callerTransferStops() async throws {
        let server = try await TestServer.start()
        let caller = TestCallerThread()
        let transport = CurlTransport(userAgent: "apimacro/test", caller: caller.hook)
        let exchange = Exchange(
            method: "GET", url: server.baseURL + "/slow?ms=600000", headers: Headers(), body: [], timeout: 600)
        // The server answers after 10 minutes; the call must end when its task is cancelled.
        let call = caller.run { await apiError { _ = try await transport.send(exchange) } }
        while !server.requests.contains(where: { $0.path == "/slow" }) { try await Task.sleep(for: .milliseconds(10)) }
        call.cancel()
        let error = try await call.value
        #expect(error?.kind == .cancelled, "\(String(describing: error))")
        #expect(caller.hostedDriver, "the transfer ran on the caller's thread, not the transfer thread")
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("transfers on the caller's thread return the response, its headers and body")
    func callerTransferAnswers() async throws {
        let server = try await TestServer.start()
        let caller = TestCallerThread()
        let transport = CurlTransport(userAgent: "apimacro/test", caller: caller.hook)
        let exchange = Exchange(
            method: "GET", url: server.baseURL + "/users/octocat", headers: Headers(), body: [], timeout: 600)
        let responses = try await caller.run {
            var responses: [WebAPI.Response] = []
            for _ in 0..<3 { responses.append(try await transport.send(exchange)) }
            return responses
        }.value
        for response in responses {
            #expect(response.status == 200)
            #expect(response.headers["content-type"]?.contains("json") == true)
            #expect(response.body.first == UInt8(ascii: "{"))
        }
        #expect(server.requests.filter { $0.path == "/users/octocat" }.count == 3)
        #expect(caller.hostedDriver, "the transfers ran on the caller's thread, not the transfer thread")
        #expect(caller.driverWaits.load(ordering: .relaxed) > 0, "the caller's thread drove the transfers")
        // One thread, one multi: the three requests went over one kept-alive connection.
        #expect(server.connections == 1, "connections: \(server.connections)")
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("a handle keeps its header list only for the same header bytes: a Kelvin sign is not a K")
    func headerListFollowsTheBytes() async throws {
        let server = try await TestServer.start()
        let caller = TestCallerThread()
        let transport = CurlTransport(userAgent: "apimacro/test", caller: caller.hook)
        // "\u{212A}ey-1" == "Key-1" for Swift's String ==; on the wire they differ.
        let values = ["Key-1", "Key-1", "\u{212A}ey-1", "Key-1", "Key-2"]
        try await caller.run {
            for value in values {
                let exchange = Exchange(
                    method: "GET", url: server.baseURL + "/users/octocat", headers: Headers([("X-Probe", value)]),
                    body: [], timeout: 600)
                _ = try await transport.send(exchange)
            }
        }.value
        let seen = server.requests.filter { $0.path == "/users/octocat" }.map { request in
            request.headers.first { $0.0.lowercased() == "x-probe" }?.1
        }
        #expect(seen.count == 5)
        #expect(seen[0] == "Key-1" && seen[1] == "Key-1" && seen[3] == "Key-1" && seen[4] == "Key-2", "\(seen)")
        #expect(seen[2]?.utf8.contains { $0 >= 0x80 } == true, "the Kelvin sign went out as a K: \(seen)")
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("cancelling the task ends a transfer on the transfer thread", .timeLimit(.minutes(10)))
    func taskCancellationEndsTransfer() async throws {
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test")
        let exchange = Exchange(
            method: "GET", url: server.baseURL + "/slow?ms=600000", headers: Headers(), body: [], timeout: 600)
        let call = Task { await apiError { _ = try await transport.send(exchange) } }
        while !server.requests.contains(where: { $0.path == "/slow" }) { try await Task.sleep(for: .milliseconds(10)) }
        call.cancel()
        let error = await call.value
        #expect(error?.kind == .cancelled, "\(String(describing: error))")
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("a header value with CR LF is refused before anything is sent")
    func headerInjectionRefused() async throws {
        try await withLoopback { loop in
            let exchange = Exchange(
                method: "GET", url: loop.server.baseURL + "/echo",
                headers: Headers([("X-Note", "a\r\nX-Injected: yes")]), body: [], timeout: 5)
            let error = await apiError { _ = try await loop.transport.send(exchange) }
            #expect(error?.kind == .invalidRequest, "\(String(describing: error))")
            #expect(loop.server.requests.isEmpty)
        }
    }

    @Test("a POST is sent once with its body and no header libcurl would add on its own")
    func postAsGiven() async throws {
        try await withLoopback { loop in
            let exchange = Exchange(
                method: "POST", url: loop.server.baseURL + "/echo",
                headers: Headers([("Content-Type", "application/json")]),
                body: Array(String(repeating: "x", count: 4000).utf8),
                timeout: 600)
            let response = try await loop.transport.send(exchange)
            #expect(response.status == 200)
            let recorded = try #require(loop.requests("/echo").first)
            #expect(recorded.body.count == 4000)
            #expect(recorded.header("expect") == nil, "no Expect: 100-continue")
            #expect(recorded.header("accept") == nil, "no Accept: */* of libcurl's own")
            #expect(recorded.header("user-agent") == "apimacro/test")
        }
    }
}

@Suite("the libcurl transport applies NetworkSettings")
struct CurlNetworkSettingsTests {
    @Test("a proxied http request goes through a CONNECT tunnel: the proxy never sees the request or its headers")
    func proxiedRequestIsTunnelled() async throws {
        let proxy = try await TestServer.start()
        let origin = try await TestServer.start()
        let network = NetworkSettings(httpProxy: proxy.baseURL)
        let transport = CurlTransport(userAgent: "apimacro/test", network: network)
        let exchange = Exchange(
            method: "GET", url: origin.baseURL + "/users/octocat",
            headers: Headers([("Authorization", "Bearer tunnel-secret-123")]), body: [], timeout: 600)
        // The test server answers CONNECT like any unknown route (not 2xx): the tunnel fails.
        let error = await apiError { _ = try await transport.send(exchange) }
        #expect(error?.kind == .network, "\(String(describing: error))")
        let seen = proxy.requests
        #expect(seen.count == 1 && seen.first?.method == "CONNECT", "\(seen.map { "\($0.method) \($0.uri)" })")
        #expect(!seen.contains { $0.header("authorization") != nil }, "a header reached the proxy in clear")
        #expect(origin.requests.isEmpty)
        try await transport.shutdown()
        try await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("NO_PROXY names the host: the request goes direct, the proxy is never dialled")
    func noProxyGoesDirect() async throws {
        let origin = try await TestServer.start()
        // Port 1 on loopback refuses: were it dialled, the request would fail.
        let network = NetworkSettings(httpProxy: "http://127.0.0.1:1", noProxy: ["127.0.0.1"])
        let transport = CurlTransport(userAgent: "apimacro/test", network: network)
        let exchange = Exchange(
            method: "GET", url: origin.baseURL + "/users/octocat", headers: Headers(), body: [], timeout: 600)
        let response = try await transport.send(exchange)
        #expect(response.status == 200)
        try await transport.shutdown()
        try await origin.shutdown()
    }
}

@Suite("the libcurl transport reuses handles and connections")
struct CurlReuseTests {
    @Test("a POST reuses the kept-alive connection of the GET before it, and the GET after it reuses it too")
    func postReusesConnection() async throws {
        // No caller: every transfer runs on the transport's one transfer thread, one handle. The
        // idle limit for a POST's connection is an hour here, not 2 s, so a busy machine's pause
        // between the GET and the POST cannot make the test open a second connection.
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test", nonIdempotentConnectionAge: 3600)
        let loop = Loopback(server: server, transport: transport)
        do {
            let get = Exchange(
                method: "GET", url: loop.server.baseURL + "/users/octocat", headers: Headers(), body: [], timeout: 600)
            let post = Exchange(
                method: "POST", url: loop.server.baseURL + "/echo",
                headers: Headers([("Content-Type", "application/json")]), body: Array(#"{"a":1}"#.utf8), timeout: 600)
            for exchange in [get, post, get] {
                let response = try await loop.transport.send(exchange)
                #expect(response.status == 200)
            }
            #expect(loop.server.requests.map(\.method) == ["GET", "POST", "GET"])
            // FRESH_CONNECT on every POST made this 2: the POST's own connection, then the GET's.
            #expect(loop.server.connections == 1, "connections: \(loop.server.connections)")
        } catch {
            try await loop.close()
            throw error
        }
        try await loop.close()
    }

    @Test("a POST after the server closed the kept-alive connection (a short keep-alive timeout) goes on a new one")
    func postAfterServerClosedIdleConnection() async throws {
        // The server answers the GET keep-alive, then closes: a 1 s keep-alive timeout ending
        // while the connection sits idle, within the POST's 2 s reuse age. libcurl sees the close
        // when it picks the connection and dials a new one; nothing is sent on the dead one.
        try await withLoopback { loop in
            loop.server.inject([.closeAfterAnswer], path: "/users/octocat")
            let get = Exchange(
                method: "GET", url: loop.server.baseURL + "/users/octocat", headers: Headers(), body: [], timeout: 600)
            #expect(try await loop.transport.send(get).status == 200)
            // The event, not a delay: the server's close has happened before the POST leaves.
            let limit = ContinuousClock.now + .seconds(600)
            while loop.server.closedConnections < 1, ContinuousClock.now < limit {
                try await Task.sleep(for: .milliseconds(10))
            }
            try #require(loop.server.closedConnections == 1, "the server closed the connection")
            let post = Exchange(
                method: "POST", url: loop.server.baseURL + "/echo",
                headers: Headers([("Content-Type", "application/json")]), body: Array(#"{"a":1}"#.utf8), timeout: 600)
            let response = try await loop.transport.send(post)
            #expect(response.status == 200)
            #expect(loop.server.requests.map(\.method) == ["GET", "POST"], "the POST was sent once")
            #expect(loop.server.connections == 2, "connections: \(loop.server.connections)")
        }
    }

    @Test("a POST whose reused connection the server closes as it arrives is sent once: a NetworkError, never resent")
    func postOnConnectionClosingAsItArrives() async throws {
        // The race a short keep-alive timeout leaves: the server closes the idle connection just
        // as the POST goes out on it (here: it reads the POST, then resets). libcurl would send it
        // again on a new connection; the server may have acted on it, so the transport refuses.
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test", nonIdempotentConnectionAge: 3600)
        let loop = Loopback(server: server, transport: transport)
        do {
            let get = Exchange(
                method: "GET", url: server.baseURL + "/users/octocat", headers: Headers(), body: [], timeout: 600)
            #expect(try await transport.send(get).status == 200)
            server.inject([.reset], path: "/echo")
            let post = Exchange(
                method: "POST", url: server.baseURL + "/echo",
                headers: Headers([("Content-Type", "application/json")]), body: Array(#"{"a":1}"#.utf8), timeout: 600)
            let error = await apiError { _ = try await transport.send(post) }
            #expect(error?.kind == .network, "\(String(describing: error))")
            #expect(error?.message.contains("was not sent again") == true, "\(String(describing: error))")
            #expect(server.requests.map(\.method) == ["GET", "POST"], "the POST was sent once")
            #expect(try await transport.send(get).status == 200, "the transport goes on")
        } catch {
            try await loop.close()
            throw error
        }
        try await loop.close()
    }

    @Test("one handle sends POST, HEAD, GET, DELETE and PUT in turn: each its own method, only the bodies given")
    func methodsInTurnOnOneHandle() async throws {
        let server = try await TestServer.start()
        // No caller: every transfer runs on the transport's one transfer thread, so one easy
        // handle sends them all (inline transfers would follow the test task across threads).
        let transport = CurlTransport(userAgent: "apimacro/test")
        let sequence: [(String, String)] = [
            ("POST", "first"), ("HEAD", ""), ("GET", ""), ("DELETE", ""), ("PUT", "last"),
        ]
        for (method, body) in sequence {
            let exchange = Exchange(
                method: method, url: server.baseURL + "/echo", headers: Headers(), body: Array(body.utf8), timeout: 600)
            let response = try await transport.send(exchange)
            #expect(response.status == 200, "\(method)")
        }
        let recorded = server.requests.filter { $0.path == "/echo" }
        #expect(recorded.map(\.method) == sequence.map(\.0))
        #expect(recorded.map(\.bodyText) == sequence.map(\.1))
        #expect(recorded.map { $0.header("content-length") } == ["5", nil, nil, nil, "4"])
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("one handle sends a run of URLs, repeated and not, each to its own target; one libcurl refuses, refused once")
    func urlsInTurnOnOneHandle() async throws {
        let server = try await TestServer.start()
        // No caller: one transfer thread, so one easy handle and its parsed URL serve them all.
        let transport = CurlTransport(userAgent: "apimacro/test")
        let targets = ["/echo?a=1", "/echo?a=1", "/echo/b", "/echo?a=1", "/echo?a=2", "/echo/b?c=%20d", "/echo?a=2"]
        for (index, target) in targets.enumerated() {
            let exchange = Exchange(
                method: "GET", url: server.baseURL + target, headers: Headers(), body: [], timeout: 600)
            let response = try await transport.send(exchange)
            #expect(response.status == 200, "\(target)")
            #expect(server.requests.count == index + 1)
            #expect(server.requests.last?.uri == target, "\(target)")
            #expect(server.requests.last?.host == "127.0.0.1:\(server.port)", "\(target)")
        }
        // A space: libcurl's parser refuses the URL, as it refused it as CURLOPT_URL alone.
        let refused = Exchange(
            method: "GET", url: server.baseURL + "/echo/a b", headers: Headers(), body: [], timeout: 600)
        let error = await apiError { _ = try await transport.send(refused) }
        #expect(error?.kind == .network && error?.isRetryable == false, "\(String(describing: error))")
        #expect(server.requests.count == targets.count, "nothing sent")
        // The URL before it is sent as before.
        _ = try await transport.send(
            Exchange(method: "GET", url: server.baseURL + "/echo?a=2", headers: Headers(), body: [], timeout: 600))
        #expect(server.requests.last?.uri == "/echo?a=2")
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("Accept-Encoding lists each coding libcurl decodes, once; a request's own Accept-Encoding replaces it")
    func acceptEncodingOnce() async throws {
        try await withLoopback { loop in
            for own in [nil, "identity", nil] as [String?] {
                let headers = own.map { Headers([("Accept-Encoding", $0)]) } ?? Headers()
                let exchange = Exchange(
                    method: "GET", url: loop.server.baseURL + "/echo", headers: headers, body: [], timeout: 600)
                _ = try await loop.transport.send(exchange)
                let recorded = try #require(loop.requests("/echo").last)
                let offered = recorded.headers.filter { $0.0.lowercased() == "accept-encoding" }.map(\.1)
                if let own {
                    #expect(offered == [own])
                } else {
                    #expect(offered.count == 1, "\(offered)")
                    #expect(offered.first?.hasPrefix("deflate, gzip") == true, "\(offered)")
                }
            }
            // What it offers is decoded.
            let decoded = try await loop.transport.send(
                Exchange(
                    method: "GET", url: loop.server.baseURL + "/hostile/coded?ce=gzip", headers: Headers(), body: [],
                    timeout: 600))
            #expect(JSONPath.string(in: decoded.body, path: ["login"]) == "octokit-fixture-org")
        }
    }

    @Test(
        "only the codings apimacro asked for are decoded: any other Content-Encoding or Transfer-Encoding arrives as sent, its header kept, and the next answer is decoded again"
    )
    func codingsNotAskedForArriveAsSent() async throws {
        try await withLoopback { loop in
            func get(_ query: String) async throws -> WebAPI.Response {
                try await loop.transport.send(
                    Exchange(
                        method: "GET", url: loop.server.baseURL + "/hostile/coded?" + query, headers: Headers(),
                        body: [], timeout: 600))
            }
            // Asked for (Accept-Encoding): decoded.
            let decoded = try await get("ce=gzip")
            #expect(JSONPath.string(in: decoded.body, path: ["login"]) == "octokit-fixture-org")
            // Not asked for: the bytes as sent, the header as sent; libcurl 7.88 failed the first
            // three ("Unrecognized content encoding type") and decoded the last.
            for (query, header, value) in [
                ("ce=arizona", "content-encoding", "arizona"),
                ("ce=gzip,%20arizona", "content-encoding", "gzip, arizona"),
                ("te=arizona", "transfer-encoding", "arizona"), ("te=gzip", "transfer-encoding", "gzip"),
            ] {
                let response = try await get(query)
                #expect(response.status == 200, "\(query)")
                #expect(response.headers[header] == value, "\(query)")
                // The route's 361 bytes of gzip, not the 1,000 bytes of JSON they inflate to.
                #expect(response.body.count == 361 && response.body.starts(with: [0x1F, 0x8B]), "\(query)")
                // The handle is reused: a coding asked for is decoded again right after.
                let again = try await get("ce=gzip")
                #expect(JSONPath.string(in: again.body, path: ["login"]) == "octokit-fixture-org", "after \(query)")
            }
        }
    }

    @Test("a gzip answer sent chunked is decoded whole (the ratio check allows libcurl's late count of wire bytes)")
    func chunkedGzipDecoded() async throws {
        try await withLoopback { loop in
            let exchange = Exchange(
                method: "GET", url: loop.server.baseURL + "/hostile/gzip-chunked", headers: Headers(), body: [],
                timeout: 600)
            let response = try await loop.transport.send(exchange)
            #expect(response.status == 200)
            #expect(response.headers["content-encoding"] == "gzip")
            #expect(response.body.count == 1000)
            #expect(JSONPath.string(in: response.body, path: ["login"]) == "octokit-fixture-org")
        }
    }
}
