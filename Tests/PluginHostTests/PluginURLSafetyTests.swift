import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

@testable import PluginHost

/// What a plugin's base URL, path parameters and basic credential may never do: reach a Unix
/// socket, climb a path with a dot segment, or show the credential's base64.
@Suite("plugin clients against hostile URLs and echoes")
struct PluginURLSafetyTests {
    static let manifest = """
        name = "echo"
        description = "Echo"
        base_url = "https://echo.example.com"
        auth = { kind = "basic", user_env = "APIMACRO_ECHO_USER", env = "APIMACRO_ECHO_PASSWORD" }

        [endpoints.show]
        path = "/echo/{name}"
        params = { name = "string!" }
        """

    static let environment = ["APIMACRO_ECHO_USER": "alice", "APIMACRO_ECHO_PASSWORD": "Sup3rS3cretPw"]

    func client(baseURL: String, transport: CurlTransport) throws -> PluginClient {
        let folder = PluginFolder()
        defer { folder.remove() }
        try folder.write("echo", Self.manifest)
        let manifest = try #require(
            PluginRegistry.load(folders: [folder.url], reservedNames: builtInNames).plugin(named: "echo"))
        var environment = Self.environment
        environment["APIMACRO_ECHO_URL"] = baseURL
        return PluginClient(
            manifest: manifest, environment: environment, storedToken: nil, transport: transport,
            log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
    }

    @Test("APIMACRO_<NAME>_URL on http+unix:// is refused; nothing reaches the socket")
    func baseURLOnUnixSocket() async throws {
        let trap = try UnixSocketTrap()
        defer { trap.remove() }
        let transport = CurlTransport(userAgent: "apimacro/test")
        let client = try client(baseURL: "http+unix://\(trap.queryValue)", transport: transport)
        var failure: APIError?
        do {
            _ = try await client.send(try client.request("show", [("name", .string("x"))]).1)
        } catch let error as APIError {
            failure = error
        }
        try await transport.shutdown()
        #expect(failure?.kind == .invalidRequest, "\(String(describing: failure))")
        #expect(trap.connections() == 0, "a request reached the Unix socket")
    }

    @Test("a path parameter of .. is sent as %2E%2E; the basic credential's base64 is redacted")
    func dotSegmentAndBasicBase64() async throws {
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test")
        let client = try client(baseURL: server.baseURL, transport: transport)
        let (_, request) = try client.request("show", [("name", .string(".."))])
        let response = try await client.send(request)
        let uris = server.requests.map(\.uri)
        try await transport.shutdown()
        try await server.shutdown()
        #expect(request.target == "/echo/%2E%2E")
        #expect(uris == ["/echo/%2E%2E"])
        // The echo holds the header as sent (the negative control); the redactor hides it.
        #expect(response.text.contains("YWxpY2U6U3VwM3JTM2NyZXRQdw=="))
        #expect(!client.api.redactor.redact(response.text).contains("YWxpY2U6U3VwM3JTM2NyZXRQdw"))
    }
}
