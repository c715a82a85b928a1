import Clients
import Foundation
import Synchronization
import TestSupport
import Testing
import WebAPI

/// GitHub App authentication against the loopback server playing the App, whose JWT checks use
/// the public half of a key pair each test makes with `openssl genrsa`.
@Suite("GitHub App authentication against the loopback server")
struct GitHubAppTests {
    static let appID = "243473"
    static let one = [GitHubAppSetup.Installation(id: 30_614_487, account: "GithubApp-Test-Org")]

    /// What a test gets: the client, the server, the secrets the client handed out, the key pair.
    ///
    /// The secrets a client handed out.
    final class Learned: Sendable {
        let items = Mutex<[String]>([])
    }

    struct Context {
        let client: GitHubClient
        let server: TestServer
        let learned: Learned
        let keys: TestRSAKeyPair
        let folder: URL
    }

    /// A client acting as the App on a fresh server; `keyFor` chooses the key the client signs
    /// with (default: the pair the server knows).
    static func withApp(
        installations: [GitHubAppSetup.Installation] = one, lifetimes: [Int] = [3600], appID: String = appID,
        installationID: Int? = nil, traditional: Bool = true,
        now: @escaping @Sendable () -> Double = {
            Date().timeIntervalSince1970
        }, keyFor: ((TestRSAKeyPair, URL) throws -> String)? = nil, _ body: (Context) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("app-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = try TestRSAKeyPair(in: folder, traditional: traditional)
        let server = try await TestServer.start()
        server.setGitHubApp(
            GitHubAppSetup(
                appID: Self.appID, publicKeyPath: keys.publicKeyPath, installations: installations,
                tokenLifetimes: lifetimes))
        let transport = CurlTransport(userAgent: "apimacro/test")
        var configuration = GitHubConfiguration(baseURL: server.baseURL)
        configuration.app = GitHubAppConfiguration(
            appID: appID, keyPath: try keyFor?(keys, folder) ?? keys.privateKeyPath, installationID: installationID)
        let learned = Learned()
        let client = GitHubClient(
            configuration: configuration, transport: transport, log: ExchangeLog(logger: nil),
            redactor: Redactor(secrets: []), learned: { secret in learned.items.withLock { $0.append(secret) } },
            appNetwork: transport, now: now)
        let context = Context(client: client, server: server, learned: learned, keys: keys, folder: folder)
        do { try await body(context) } catch {
            try await transport.shutdown()
            try await server.shutdown()
            throw error
        }
        try await transport.shutdown()
        try await server.shutdown()
    }

    static let query = "query { viewer { login } }"

    @Test("the JWT is RS256 with iss, iat 60 s back and exp at most 10 minutes on; the token serves REST and GraphQL")
    func mintAndUse() async throws {
        try await Self.withApp { context in
            let (client, server) = (context.client, context.server)
            _ = try await client.send(.user(login: "octocat"))
            _ = try? await client.graphQL(Self.query)
            let report = server.gitHubAppReport
            #expect(report.refusedJWTs.isEmpty)
            let jwt = try #require(report.jwts.first)
            #expect(jwt.issuer == Self.appID)
            #expect((55...120).contains(jwt.serverNow - jwt.issuedAt), "iat is a minute in the past")
            #expect(jwt.expiresAt - jwt.issuedAt == 600 && jwt.expiresAt > jwt.serverNow)
            let token = try #require(report.tokens.first)
            #expect(report.tokens.count == 1 && token.installation == 30_614_487)
            // GET /users/octocat/installation (not installed there), the App's only installation,
            // the token; then the request itself and the GraphQL query, both with the token.
            let paths = server.requests.map { "\($0.method) \($0.path)" }
            #expect(
                paths == [
                    "GET /users/octocat/installation", "GET /app/installations",
                    "POST /app/installations/30614487/access_tokens", "GET /users/octocat", "POST /graphql",
                ])
            #expect(server.requests.prefix(3).allSatisfy { $0.header("authorization") == "Bearer \(jwt.jwt)" })
            #expect(server.requests.suffix(2).allSatisfy { $0.header("authorization") == "Bearer \(token.token)" })
            #expect(report.uses[token.token] == 2)
            #expect(Set(context.learned.items.withLock { $0 }) == [jwt.jwt, token.token])
            #expect(client.appAuth?.known.installationID == 30_614_487)
            #expect(client.appAuth?.known.account == "GithubApp-Test-Org")
            #expect(client.tokenExpiresAt.map { abs($0 - Double(token.expiresAt)) < 1 } == true)
        }
    }

    @Test("the installation is the one GitHub names for the repository a request names, or the configured one")
    func installationFound() async throws {
        let two = Self.one + [GitHubAppSetup.Installation(id: 30_614_431, account: "ammarmallik", type: "User")]
        try await Self.withApp(installations: two) { context in
            _ = try await context.client.send(
                .write(
                    method: "POST", path: "/repos/ammarmallik/test-runner/issues", parameters: [], headers: [],
                    body: .json(Array(#"{"title":"from the App"}"#.utf8))))
            #expect(context.server.gitHubAppReport.tokens.map(\.installation) == [30_614_431])
            #expect(context.server.requests.first?.path == "/repos/ammarmallik/test-runner/installation")
        }
        try await Self.withApp(installations: two) { context in
            let error = try await #require(throws: APIError.self) {
                try await context.client.send(.user(login: "octocat"))
            }
            #expect(error.kind == .auth)
            #expect(
                error.message.contains("has 2 installations (30614487 (GithubApp-Test-Org), 30614431 (ammarmallik))"))
            #expect(error.message.contains("APIMACRO_GITHUB_INSTALLATION_ID"))
        }
        try await Self.withApp(installations: two, installationID: 30_614_487) { context in
            _ = try await context.client.send(.user(login: "octocat"))
            #expect(context.server.requests.first?.path == "/app/installations/30614487/access_tokens")
        }
        // A client ID as iss (a string), and a PKCS #8 key: both work.
        try await Self.withApp(appID: "Iv23liAppClientID", traditional: false) { _ in }
    }

    @Test("renewed before expires_at in the middle of many concurrent calls, which never notice")
    func renewedMidMap() async throws {
        // The first token is within the renewal margin as soon as it is made (2 minutes left), the
        // second good for an hour: 40 calls, 8 at a time, use the first, then one renewal, then the second.
        try await Self.withApp(lifetimes: [120, 3600]) { context in
            let client = context.client
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                var statuses: [Int] = []
                var next = 0
                func add() {
                    group.addTask { try await client.send(.user(login: "octocat")).status }
                    next += 1
                }
                while next < 8 { add() }
                while let status = try await group.next() {
                    statuses.append(status)
                    if next < 40 { add() }
                }
                return statuses
            }
            #expect(statuses.count == 40)
            let report = context.server.gitHubAppReport
            #expect(report.tokens.count == 2, "one renewal")
            let (first, second) = (report.tokens[0].token, report.tokens[1].token)
            #expect((report.uses[first] ?? 0) >= 1 && (report.uses[second] ?? 0) >= 1)
            #expect((report.uses[first] ?? 0) + (report.uses[second] ?? 0) == 40)
            #expect(report.expiredUses == 0)
            #expect(second.count > 300, "the second token has the longer format")
        }
    }

    @Test("renewal follows the clock: a token is used until refreshMargin before its expiry, then replaced")
    func renewedByClock() async throws {
        // The client's clock stands still (at the test's start) until the test moves it: how long
        // the machine takes between two calls cannot make a renewal come early or late. The token
        // lives 330 s, so it is due 30 s after the server made it; the clock is then set to that
        // moment exactly, read from the server's own `expires_at`, which the JWT's iat (60 s back)
        // and exp (540 s on) still fit within GitHub's rules for any delay under 9 minutes.
        let moment = Mutex<Double>(Date().timeIntervalSince1970)
        let clock: @Sendable () -> Double = { moment.withLock { $0 } }
        try await Self.withApp(lifetimes: [330, 3600], now: clock) { context in
            _ = try await context.client.send(.user(login: "octocat"))
            _ = try await context.client.send(.user(login: "octocat"))
            let first = try #require(context.server.gitHubAppReport.tokens.first)
            #expect(context.server.gitHubAppReport.tokens.count == 1)
            moment.withLock { $0 = Double(first.expiresAt) - GitHubAppAuth.refreshMargin - 1 }
            _ = try await context.client.send(.user(login: "octocat"))
            #expect(context.server.gitHubAppReport.tokens.count == 1, "still 1 s before the margin")
            moment.withLock { $0 = Double(first.expiresAt) - GitHubAppAuth.refreshMargin }
            _ = try await context.client.send(.user(login: "octocat"))
            _ = try await context.client.send(.user(login: "octocat"))
            let report = context.server.gitHubAppReport
            #expect(report.tokens.count == 2 && report.refusedJWTs.isEmpty, "\(report.refusedJWTs)")
            #expect(report.uses[report.tokens[0].token] == 3 && report.uses[report.tokens[1].token] == 2)
        }
    }

    @Test("a wrong key is an AuthError saying what to check; the key file must be owner-only and a key")
    func wrongKey() async throws {
        let otherKey: (TestRSAKeyPair, URL) throws -> String = { _, folder in
            try TestRSAKeyPair(in: folder, name: "other").privateKeyPath
        }
        try await Self.withApp(keyFor: otherKey) { context in
            let error = try await #require(throws: APIError.self) {
                try await context.client.send(.user(login: "octocat"))
            }
            #expect(error.kind == .auth)
            #expect(error.message.contains("GitHub refused the JWT of GitHub App 243473"))
            #expect(error.message.contains("(A JSON web token could not be decoded)"))
            #expect(error.message.contains("APIMACRO_GITHUB_APP_KEY"))
            #expect(context.server.gitHubAppReport.refusedJWTs == ["A JSON web token could not be decoded"])
            #expect(context.server.gitHubAppReport.tokens.isEmpty)
        }
        let readableByOthers: (TestRSAKeyPair, URL) throws -> String = { keys, _ in
            _ = chmod(keys.privateKeyPath, 0o644)
            return keys.privateKeyPath
        }
        try await Self.withApp(keyFor: readableByOthers) { context in
            let error = try await #require(throws: APIError.self) {
                try await context.client.send(.user(login: "octocat"))
            }
            #expect(error.kind == .auth)
            #expect(
                error.message.contains(
                    "it is readable by others (mode 0644); run: chmod 600 \(context.keys.privateKeyPath)"))
            #expect(context.server.requests.isEmpty, "nothing is sent")
        }
        let notAKey: (TestRSAKeyPair, URL) throws -> String = { _, folder in
            let path = folder.appendingPathComponent("not-a-key.pem").path
            try Data("-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END RSA PRIVATE KEY-----\n".utf8)
                .write(to: URL(fileURLWithPath: path))
            _ = chmod(path, 0o600)
            return path
        }
        try await Self.withApp(keyFor: notAKey) { context in
            let error = try await #require(throws: APIError.self) {
                try await context.client.send(.user(login: "octocat"))
            }
            #expect(error.message.contains("is not an RSA private key of at least 2048 bits"))
            #expect(!error.message.contains("bm90IGEga2V5"))
        }
    }

    @Test("an installation path is read from the request's URL under the base URL")
    func installationPaths() {
        let base = "https://ghe.example.com/api/v3"
        #expect(
            GitHubAppAuth.installationPath(for: "\(base)/repos/o/r/issues?state=open", baseURL: base)
                == "/repos/o/r/installation")
        #expect(
            GitHubAppAuth.installationPath(for: "\(base)/orgs/acme/members", baseURL: base) == "/orgs/acme/installation"
        )
        #expect(
            GitHubAppAuth.installationPath(for: "\(base)/users/octocat", baseURL: base) == "/users/octocat/installation"
        )
        #expect(GitHubAppAuth.installationPath(for: "\(base)/search/issues?q=x", baseURL: base) == nil)
        #expect(GitHubAppAuth.installationPath(for: "https://ghe.example.com/api/graphql", baseURL: base) == nil)
        #expect(GitHubAppAuth.installationPath(for: "\(base)/repos/o", baseURL: base) == nil)
    }
}
