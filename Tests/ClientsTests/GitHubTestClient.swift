import Clients
import TestSupport
import WebAPI

/// A GitHub client on a fresh loopback test server and its own transport, for `body`; both are
/// shut down afterwards, also when `body` throws.
/// - Parameters:
///   - token: the token the client sends, or nil for none.
///   - baseURL: the REST base URL for the server (default: the server's own).
///   - graphQLURL: the GraphQL endpoint for the server (default: derived from the base URL).
///   - warn: what the client's warnings go to.
///   - body: the test.
/// - Throws: what `body` or the server throws.
func withGitHubClient(
    token: String?, baseURL: ((TestServer) -> String)? = nil, graphQLURL: ((TestServer) -> String)? = nil,
    warn: @escaping @Sendable (String) -> Void = { _ in }, _ body: (GitHubClient, TestServer) async throws -> Void
) async throws {
    let server = try await TestServer.start()
    let transport = CurlTransport(userAgent: "apimacro/test")
    let configuration = GitHubConfiguration(
        baseURL: baseURL?(server) ?? server.baseURL, token: token.map(Secret.init), graphQLURL: graphQLURL?(server))
    let client = GitHubClient(
        configuration: configuration, transport: transport, log: ExchangeLog(logger: nil),
        redactor: Redactor(secrets: []), warn: warn)
    do { try await body(client, server) } catch {
        try await transport.shutdown()
        try await server.shutdown()
        throw error
    }
    try await transport.shutdown()
    try await server.shutdown()
}
