import Foundation
import Testing

@testable import TestSupport

/// The TLS mode of the test server, the test CA, the recording proxy and tinyproxy, checked with
/// `openssl s_client` (a client independent of apimacro's transport): a GET with a bearer token,
/// straight or through a proxy's CONNECT tunnel.
@Suite("proxy and TLS harness")
struct ProxyHarnessTests {
    static let token = "ghp_harnessSECRET0123456789"

    struct ClientResult {
        let status: Int32
        let output: String
    }

    /// `openssl s_client` sending one GET of `path` with the token to the test server at `port`,
    /// trusting `caFile` (none: an empty bundle), optionally through `proxy` (`host:port`).
    static func sClient(
        port: Int, path: String = "/users/octocat", caFile: URL?, proxy: String? = nil, proxyUser: String? = nil,
        proxyPassword: String? = nil
    ) async throws -> ClientResult {
        var arguments = [
            "s_client", "-quiet", "-verify_return_error", "-connect", "127.0.0.1:\(port)", "-servername", "localhost",
            "-verify_ip", "127.0.0.1",
        ]
        if let caFile {
            arguments += ["-CAfile", caFile.path]
        } else {
            arguments += ["-no-CAfile", "-no-CApath", "-no-CAstore"]
        }
        if let proxy { arguments += ["-proxy", proxy] }
        if let proxyUser { arguments += ["-proxy_user", proxyUser] }
        if let proxyPassword { arguments += ["-proxy_pass", "pass:\(proxyPassword)"] }
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
        let command = ["openssl"] + arguments
        return try await runBlocking {
            let input = Pipe()
            let output = Pipe()
            let writer = output.fileHandleForWriting.fileDescriptor
            let process = try Spawned(
                "/usr/bin/env", command, environment: ProcessInfo.processInfo.environment,
                stdin: .descriptor(input.fileHandleForReading.fileDescriptor), stdout: .descriptor(writer),
                stderr: .descriptor(writer))
            try input.fileHandleForReading.close()
            try output.fileHandleForWriting.close()
            input.fileHandleForWriting.write(Data(request.utf8))
            try input.fileHandleForWriting.close()
            // -quiet: s_client ignores the end of its input and ends when the server closes (Connection: close).
            let data = output.fileHandleForReading.readDataToEndOfFile()
            let exit = process.waitUntilExit()
            return ClientResult(status: exit.status, output: String(decoding: data, as: UTF8.self))
        }
    }

    /// A TLS test server with a fresh CA, for `body`.
    static func withTLSServer(_ body: (TestServer, TestCertificateAuthority) async throws -> Void) async throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let server = try await TestServer.start(tls: try authority.serverContext())
        do {
            try await body(server, authority)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    @Test("the TLS server answers https to a client trusting the test CA, and fails verification without it")
    func tlsServer() async throws {
        try await Self.withTLSServer { server, authority in
            #expect(server.baseURL == "https://127.0.0.1:\(server.port)")
            let trusted = try await Self.sClient(port: server.port, caFile: authority.caFile)
            #expect(trusted.output.contains("HTTP/1.1 200"), "\(trusted.output)")
            #expect(trusted.output.contains(#""login":"octocat""#) || trusted.output.contains(#""login" : "octocat""#))
            #expect(server.requests.last?.header("authorization") == "Bearer \(Self.token)")
            let untrusted = try await Self.sClient(port: server.port, caFile: nil)
            #expect(untrusted.status != 0)
            #expect(
                untrusted.output.contains("verify error") || untrusted.output.contains("certificate verify failed"),
                "\(untrusted.output)")
        }
    }

    @Test("the recording proxy tunnels CONNECT and sees the CONNECT head in clear, then only ciphertext")
    func recordingProxy() async throws {
        try await Self.withTLSServer { server, authority in
            let proxy = try await RecordingProxy.start()
            defer { Task { try? await proxy.shutdown() } }
            let result = try await Self.sClient(
                port: server.port, caFile: authority.caFile, proxy: "127.0.0.1:\(proxy.port)")
            #expect(result.output.contains("HTTP/1.1 200"), "\(result.output)")
            #expect(proxy.requests.map(\.method) == ["CONNECT"])
            #expect(proxy.requests.first?.target == "127.0.0.1:\(server.port)")
            #expect(proxy.receivedText.hasPrefix("CONNECT 127.0.0.1:\(server.port) HTTP/1."))
            #expect(proxy.received.count > 200)
            #expect(!proxy.receivedText.contains(Self.token))
            #expect(!proxy.receivedText.contains("/users/octocat"))
            #expect(server.requests.last?.header("authorization") == "Bearer \(Self.token)")
            try await proxy.shutdown()
        }
    }

    @Test("the recording proxy with credentials answers 407 without them and records Proxy-Authorization")
    func recordingProxyCredentials() async throws {
        try await Self.withTLSServer { server, authority in
            let proxy = try await RecordingProxy.start(credentials: ("alice", "pr0xy-pw"))
            defer { Task { try? await proxy.shutdown() } }
            let refused = try await Self.sClient(
                port: server.port, caFile: authority.caFile, proxy: "127.0.0.1:\(proxy.port)")
            #expect(refused.status != 0)
            #expect(!refused.output.contains("HTTP/1.1 200"))
            let accepted = try await Self.sClient(
                port: server.port, caFile: authority.caFile, proxy: "127.0.0.1:\(proxy.port)", proxyUser: "alice",
                proxyPassword: "pr0xy-pw")
            #expect(accepted.output.contains("HTTP/1.1 200"), "\(accepted.output)")
            let basic = "Basic " + Data("alice:pr0xy-pw".utf8).base64EncodedString()
            #expect(proxy.requests.last?.header("Proxy-Authorization") == basic)
            try await proxy.shutdown()
        }
    }

    @Test("the recording proxy tunnels only to loopback and refuses other methods")
    func recordingProxyRefusals() async throws {
        let proxy = try await RecordingProxy.start()
        defer { Task { try? await proxy.shutdown() } }
        let outside = try RawConnection(host: "127.0.0.1", port: proxy.port)
        defer { outside.shutdown() }
        #expect(try outside.request("CONNECT", "example.com:443", headers: [("Host", "example.com:443")]).status == 403)
        let plain = try RawConnection(host: "127.0.0.1", port: proxy.port)
        defer { plain.shutdown() }
        #expect(try plain.request("GET", "http://example.com/", headers: [("Host", "example.com")]).status == 405)
        #expect(proxy.requests.map(\.method) == ["CONNECT", "GET"])
        try await proxy.shutdown()
    }

    @Test("tinyproxy, started on a free port, tunnels to the TLS server and requires its BasicAuth")
    func tinyproxy() async throws {
        try await Self.withTLSServer { server, authority in
            let proxy = try await Tinyproxy.start(connectPorts: [server.port], credentials: ("bob", "tiny-pw"))
            defer { Task { try? await proxy.stop() } }
            let accepted = try await Self.sClient(
                port: server.port, caFile: authority.caFile, proxy: "127.0.0.1:\(proxy.port)", proxyUser: "bob",
                proxyPassword: "tiny-pw")
            #expect(accepted.output.contains("HTTP/1.1 200"), "\(accepted.output)\n\(proxy.log)")
            let refused = try await Self.sClient(
                port: server.port, caFile: authority.caFile, proxy: "127.0.0.1:\(proxy.port)")
            #expect(!refused.output.contains("HTTP/1.1 200"))
            #expect(server.requests.count == 1)
            try await proxy.stop()
        }
    }
}
