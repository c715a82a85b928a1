import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("the OAuth 2 implicit grant")
struct OAuthFlowTests {
    let flow = OAuthImplicitFlow(
        authorizeURL: "https://api.instagram.com/oauth/authorize", clientID: "abc 123",
        redirectURI: "http://127.0.0.1:8080/callback", scope: "basic public_content", name: "instagram")

    @Test("the authorization URL carries every parameter, percent-encoded")
    func authorizationURL() {
        #expect(
            flow.authorizationURL(state: "s/1+2")
                == "https://api.instagram.com/oauth/authorize?client_id=abc%20123"
                + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fcallback&response_type=token"
                + "&scope=basic%20public_content&state=s%2F1%2B2")
        let plain = OAuthImplicitFlow(authorizeURL: "https://example.com/auth?app=x", clientID: "c", redirectURI: "r")
        #expect(
            plain.authorizationURL(state: "S")
                == "https://example.com/auth?app=x&client_id=c&redirect_uri=r&response_type=token&state=S")
    }

    @Test("new states are 32 random URL-safe characters")
    func newState() {
        let state = OAuthImplicitFlow.newState()
        #expect(state.count == 32)
        #expect(state.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        #expect(state != OAuthImplicitFlow.newState())
    }

    @Test("the token is taken from the fragment, or else the query")
    func completes() throws {
        let fromFragment = try flow.complete(
            redirect: "http://127.0.0.1:8080/callback#access_token=IGQ.tok%2Ben&state=S1", expectedState: "S1")
        #expect(fromFragment.revealed == "IGQ.tok+en")
        let fromQuery = try flow.complete(
            redirect: " https://example.com/cb?access_token=q-token&state=S2\n", expectedState: "S2")
        #expect(fromQuery.revealed == "q-token")
    }

    @Test("no pending state (none, used or expired) is a refusal saying to start again (issue 18, item 7)")
    func noPendingState() throws {
        // Instagram's login, as its descriptor declares it: the message also says how a macro logs in.
        let instagram = try Instagram.login.flow(
            clientID: "abc", redirectURI: nil, authorizeURL: "https://api.instagram.com/oauth/authorize")
        for expected in [nil, ""] as [String?] {
            let thrown = try #require(throws: APIError.self) {
                try instagram.complete(
                    redirect: "https://example.com/cb#access_token=t-attacker&state=forged", expectedState: expected)
            }
            #expect(thrown.kind == .auth)
            #expect(thrown.message.contains("no instagram login is pending"))
            #expect(thrown.message.contains("apimacro login instagram"))
            #expect(thrown.message.contains("instagram.authorize_url()"))
            #expect(!thrown.message.contains("t-attacker"))
        }
        // A plugin's login has no macro methods to name.
        let plugin = OAuthImplicitFlow(
            authorizeURL: "https://example.com/auth", clientID: "c", redirectURI: "r", name: "places")
        let thrown = try #require(throws: APIError.self) {
            try plugin.complete(redirect: "https://example.com/cb#access_token=t&state=s", expectedState: nil)
        }
        #expect(thrown.message.contains("no places login is pending"))
        #expect(!thrown.message.contains("in a macro"))
    }

    @Test("a login started in this process expires after 15 minutes, measured with the clock given")
    func pendingLoginExpires() {
        let created = Date(timeIntervalSince1970: 1_000_000)
        let pending = OAuthImplicitFlow.PendingLogin(state: "S-1", created: created)
        #expect(pending.state(at: created) == "S-1")
        #expect(pending.state(at: created.addingTimeInterval(15 * 60)) == "S-1")
        #expect(pending.state(at: created.addingTimeInterval(15 * 60 + 1)) == nil)
        #expect(pending.state(at: created.addingTimeInterval(-3600)) == nil)
    }

    @Test("an error redirect is a refusal naming the error, reason and description")
    func refused() throws {
        let error = "error=access_denied&error_reason=user_denied&error_description=The+user+denied+your+request."
        for redirect in ["http://127.0.0.1:8080/callback?\(error)", "http://127.0.0.1:8080/callback#\(error)&state=S"] {
            let thrown = try #require(throws: APIError.self) {
                try flow.complete(redirect: redirect, expectedState: "S")
            }
            #expect(thrown.kind == .auth)
            #expect(
                thrown.message
                    == "login refused by the provider: access_denied (user_denied): The user denied your request.")
        }
    }

    @Test("a different or missing state is a CSRF refusal that never shows the token")
    func stateMismatch() throws {
        for redirect in [
            "https://x.test/cb#access_token=tok-secret-1&state=OTHER", "https://x.test/cb#access_token=tok-secret-1",
        ] {
            let thrown = try #require(throws: APIError.self) {
                try flow.complete(redirect: redirect, expectedState: "MINE")
            }
            #expect(thrown.kind == .auth)
            #expect(
                thrown.message.hasPrefix("state mismatch: the redirect does not belong to this login (possible CSRF)"))
            #expect(thrown.message.contains("apimacro login instagram"))
            #expect(!thrown.message.contains("tok-secret-1"))
        }
    }

    @Test("a redirect without a token names what it had, values left out")
    func missingToken() throws {
        let thrown = try #require(throws: APIError.self) {
            try flow.complete(redirect: "https://x.test/cb?code=secret-code-99&state=S", expectedState: "S")
        }
        #expect(thrown.kind == .auth)
        #expect(thrown.message.contains("no access_token") && thrown.message.contains("code, state"))
        #expect(!thrown.message.contains("secret-code-99"))
        let bare = try #require(throws: APIError.self) {
            try flow.complete(redirect: "https://x.test/cb", expectedState: "S")
        }
        #expect(bare.kind == .auth && bare.message.contains("after '#'"))
    }

    @Test("a string that is not a URL is an invalid request")
    func notAURL() throws {
        for text in ["", "access_token=abc", "not a url at all", "/callback#access_token=abc"] {
            let thrown = try #require(throws: APIError.self) { try flow.complete(redirect: text, expectedState: nil) }
            #expect(thrown.kind == .invalidRequest)
            #expect(!thrown.message.contains("abc"))
        }
    }

    @Test("pending state is saved 0600, taken once, and ignored after 15 minutes")
    func pendingState() throws {
        try withTemporaryFolder { home in
            try flow.savePendingState("STATE-1", for: "instagram", in: home)
            let file = home.appendingPathComponent("pending-login-instagram")
            #expect(try mode(of: file) == 0o600)
            #expect(try flow.takePendingState(for: "instagram", in: home) == "STATE-1")
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(try flow.takePendingState(for: "instagram", in: home) == nil)

            try flow.savePendingState("STATE-2", for: "instagram", in: home, now: Date().addingTimeInterval(-16 * 60))
            #expect(try flow.takePendingState(for: "instagram", in: home) == nil)
            #expect(!FileManager.default.fileExists(atPath: file.path))

            let thrown = try #require(throws: APIError.self) { try flow.savePendingState("S", for: "../x", in: home) }
            #expect(thrown.kind == .invalidRequest)
        }
    }
}

extension OAuthFlowTests {
    /// The listeners wait up to 600 s: they answer as soon as the redirect arrives (an event), and
    /// a full run on a busy 2-core machine once kept a waiting listener's task from running for
    /// over 20 s, so the listener gave up before the test's requests reached it.
    @Suite("the loopback listener for --listen")
    struct Listener {
        let flow = OAuthImplicitFlow(
            authorizeURL: "https://api.instagram.com/oauth/authorize", clientID: "c",
            redirectURI: "http://127.0.0.1/callback")

        @Test("the callback page posts the fragment to /token; the rebuilt URL completes the login")
        func fullFlow() async throws {
            let listener = try LoopbackListener(port: 0)
            #expect(listener.port > 0)
            async let redirect = listener.waitForRedirect(timeout: 600, callbackPath: "/callback")
            let transport = CurlTransport(userAgent: "apimacro/test")
            let client = APIClient(
                // The listener answers as soon as its thread runs (an event); a loaded machine once kept
                // it from starting for over 30 s, the default request timeout: 600 s is a hang guard.
                configuration: ClientConfiguration(
                    name: "login", baseURL: "http://127.0.0.1:\(listener.port)", timeout: 600, maxRetries: 0),
                transport: transport, log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
            do {
                let page = try await client.send(Request("GET", "/callback?from=provider"))
                #expect(page.status == 200)
                #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
                #expect(page.text.contains("fetch(\"/token\"") && page.text.contains("window.location.hash"))
                #expect(page.text.contains("application/x-www-form-urlencoded") && page.text.contains("<noscript>"))
                #expect(page.text.contains("apimacro: you can close this window"))
                let posted = try await client.send(
                    Request(
                        "POST", "/token",
                        body: .form([("fragment", "access_token=IGQ.tok%2Ben&state=S1"), ("query", "")])))
                #expect(posted.status == 200 && posted.text == "ok")
            } catch {
                try await transport.shutdown()
                throw error
            }
            try await transport.shutdown()
            let url = try await redirect
            #expect(url == "http://127.0.0.1:\(listener.port)/callback#access_token=IGQ.tok%2Ben&state=S1")
            #expect(try flow.complete(redirect: url, expectedState: "S1").revealed == "IGQ.tok+en")
        }

        @Test("requests split over several TCP segments are read whole; query and fragment are both kept")
        func segmented() async throws {
            let listener = try LoopbackListener(port: 0)
            async let redirect = listener.waitForRedirect(timeout: 600, callbackPath: "/cb")
            let body = "fragment=access_token%3Dseg-token%26state%3DS&query=from%3Dx"
            let reply = try await RawHTTP.exchange(
                port: listener.port,
                "POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)", segments: 4)
            #expect(reply.status == 200)
            let url = try await redirect
            #expect(url == "http://127.0.0.1:\(listener.port)/cb?from=x#access_token=seg-token&state=S")
            #expect(try flow.complete(redirect: url, expectedState: "S").revealed == "seg-token")
        }

        @Test("other paths get 404, oversized requests 413, foreign origins 403; the listener keeps waiting")
        func rejections() async throws {
            let listener = try LoopbackListener(port: 0)
            async let redirect = listener.waitForRedirect(timeout: 600, callbackPath: "/callback")
            let port = listener.port
            #expect(
                try await RawHTTP.exchange(port: port, "GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n").status == 404)
            #expect(try await RawHTTP.exchange(port: port, "GET /token HTTP/1.1\r\nHost: x\r\n\r\n").status == 404)
            let big = "POST /token HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
            #expect(try await RawHTTP.exchange(port: port, big).status == 413)
            let foreign = "POST /token HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.test\r\nContent-Length: 3\r\n\r\na=b"
            #expect(try await RawHTTP.exchange(port: port, foreign).status == 403)
            let body = "fragment=error%3Daccess_denied"
            let good =
                "POST /token HTTP/1.1\r\nOrigin: http://127.0.0.1:\(port)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            #expect(try await RawHTTP.exchange(port: port, good).status == 200)
            #expect(try await redirect == "http://127.0.0.1:\(port)/callback#error=access_denied")
        }

        @Test("no redirect within the timeout is an auth error", .timeLimit(.minutes(10)))
        func timeout() async throws {
            // The error itself proves the deadline; the time limit only rules out a hang (a loaded
            // 2-core machine delayed the wake-up past a 15-second bound once: no clock bound here).
            let listener = try LoopbackListener(port: 0)
            let error = await #expect(throws: APIError.self) {
                try await listener.waitForRedirect(timeout: 0.3, callbackPath: "/callback")
            }
            #expect(error?.kind == .auth)
            #expect(error?.message.hasPrefix("no redirect arrived within 0.3 s") == true)
            await #expect(throws: APIError.self) { try await listener.waitForRedirect(timeout: 1, callbackPath: "/") }
        }

        @Test("close() stops a waiting listener; a busy port is a clear error")
        func closing() async throws {
            let listener = try LoopbackListener(port: 0)
            let busy = try #require(throws: APIError.self) { try LoopbackListener(port: listener.port) }
            #expect(busy.message.contains("127.0.0.1:\(listener.port)") && busy.message.contains("--listen"))
            let waiting = Task { try await listener.waitForRedirect(timeout: 600, callbackPath: "/callback") }
            try await Task.sleep(for: .milliseconds(100))
            listener.close()
            await #expect(throws: APIError.self) { try await waiting.value }
        }
    }

}

/// A minimal HTTP client on POSIX sockets: sends a request in pieces and reads the reply to EOF.
enum RawHTTP {
    struct Reply {
        let status: Int
        let text: String
    }

    /// Sends `request` (in `segments` pieces 50 ms apart) and reads the reply to the end, on a
    /// thread of its own: the listener under test needs the cooperative pool meanwhile.
    static func exchange(port: Int, _ request: String, segments: Int = 1) async throws -> Reply {
        try await runBlocking { try blockingExchange(port: port, request, segments: segments) }
    }

    private static func blockingExchange(port: Int, _ request: String, segments: Int) throws -> Reply {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        // Only a hang may trip this: a full run on a busy 2-core machine once kept the listener's
        // answer from a 10-second wait.
        var timeout = timeval(tv_sec: 600, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        let bytes = Array(request.utf8)
        let size = max(1, (bytes.count + segments - 1) / segments)
        for start in stride(from: 0, to: bytes.count, by: size) {
            let piece = Array(bytes[start..<min(bytes.count, start + size)])
            let sent = piece.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            try #require(sent == piece.count)
            if segments > 1 { usleep(50_000) }
        }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            reply += chunk[0..<count]
        }
        let text = String(decoding: reply, as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return Reply(status: status, text: text)
    }
}
