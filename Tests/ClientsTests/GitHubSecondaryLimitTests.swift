import Clients
import Foundation
import Synchronization
import TestSupport
import Testing
import WebAPI

@Suite("GitHub's secondary limits against the loopback server")
struct GitHubSecondaryLimitTests {
    /// A GitHub client whose pacer runs on `clock` (sleeps advance it, nothing waits for real),
    /// on a fresh server; both shut down afterwards.
    static func withPacedClient(
        maxWait: Double = 60,
        _ body: (GitHubClient, SecondaryPacer, TestServer, _ advance: @Sendable (Double) -> Void) async throws -> Void
    ) async throws {
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test")
        let time = Mutex(1_700_000_000.0)
        let pacer = SecondaryPacer(
            limits: GitHubSecondaryLimits.limits, now: { time.withLock { $0 } },
            sleep: { seconds in time.withLock { $0 += seconds } })
        let configuration = GitHubConfiguration(
            baseURL: server.baseURL, token: Secret("ghp_pacetest123"), maxWait: maxWait)
        let client = GitHubClient(
            configuration: configuration, transport: transport, log: ExchangeLog(logger: nil),
            redactor: Redactor(secrets: []), pacer: pacer)
        do { try await body(client, pacer, server, { seconds in time.withLock { $0 += seconds } }) } catch {
            try await transport.shutdown()
            try await server.shutdown()
            throw error
        }
        try await transport.shutdown()
        try await server.shutdown()
    }

    /// A new issue (a content-creating write).
    static func issue(_ number: Int) -> GitHubRouter {
        .write(
            method: "POST", path: "/repos/octo/paced/issues", parameters: [], headers: [],
            body: .json(Array(#"{"title":"paced \#(number)"}"#.utf8)))
    }

    @Test("100 writes sent 10 at a time: one in flight at a time, a gap before each; reads are not serialised")
    func pacedWrites() async throws {
        try await Self.withPacedClient { client, pacer, server, _ in
            // Every answer is a little late, so writes sent together would overlap at the server.
            server.setBudget(limit: 10_000, delayMilliseconds: 5)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for number in 0..<100 {
                    if number >= 10 { _ = try await group.next() }
                    group.addTask { try await client.send(Self.issue(number)).status }
                }
                for try await status in group { #expect(status == 201) }
            }
            let writes = server.requests.filter { $0.method == "POST" }
            #expect(writes.count == 100, "each write sent once")
            #expect(server.budgetReport.peakInFlight == 1, "no two writes were in flight at once")
            let report = pacer.report
            #expect(report.admitted == 100 && report.peakInFlight == 1)
            #expect(report.waits["the gap between writes"] == 99, "\(report.waits)")
            #expect(report.queued > 0, "writes waited for the one in flight")
            #expect(report.refused == 0)
            // Reads are not serialised: 10 GETs are in flight at once (the server holds every
            // answer until it sees 10), and none waited for the pacer.
            server.setBudget(limit: 10_000, holdUntilInFlight: 10)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<10 { group.addTask { _ = try await client.send(.user(login: "user\(number)")) } }
                try await group.waitForAll()
            }
            #expect(server.budgetReport.gateOpened)
            #expect(pacer.report.waits["the gap between writes"] == 99)
        }
    }

    static let secondaryBody =
        #"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 8C2E:3A5C:1F0E1B:3E6F2A:65A1B2C3.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}"#

    @Test(
        "GitHub's secondary 403: Retry-After waited and the write sent again; without it, 60 s past APIMACRO_MAX_WAIT")
    func secondaryAnswers() async throws {
        try await Self.withPacedClient(maxWait: 5) { client, pacer, server, advance in
            server.inject(
                [.status(403, body: Self.secondaryBody, headers: [("retry-after", "1")])],
                path: "/repos/octo/paced/issues")
            #expect(try await client.send(Self.issue(1)).status == 201, "the refused write was sent again")
            #expect(server.requests.filter { $0.method == "POST" }.count == 2)
            #expect(pacer.report.waits["an answer that said a secondary limit was exceeded"] == 1)
            // Without Retry-After GitHub says to wait a minute: more than APIMACRO_MAX_WAIT.
            for status in [403, 429] {
                server.inject([.status(status, body: Self.secondaryBody)], path: "/users/limited")
                let error = try await #require(throws: APIError.self) {
                    try await client.send(.user(login: "limited"))
                }
                #expect(error.kind == .rateLimited && error.isSecondary, "\(error)")
                #expect(error.retryAfter == 60 && error.status == status)
                #expect(error.message.contains("secondary rate limit"))
                // The minute holds every request of the token: refused unsent within it.
                let sent = server.requests.count
                let held = try await #require(throws: APIError.self) { try await client.send(.user(login: "other")) }
                #expect(held.kind == .rateLimited && held.isSecondary && held.message.contains("nothing was sent"))
                #expect(server.requests.count == sent)
                advance(61)
            }
            // A plain 403 is no rate limit.
            server.inject(
                [.status(403, body: #"{"message":"Resource not accessible by integration"}"#)], path: "/users/plain")
            let forbidden = try await #require(throws: APIError.self) {
                try await client.send(.user(login: "plain"))
            }
            #expect(forbidden.kind == .forbidden && !forbidden.isSecondary)
        }
    }

    @Test("GitHub's rules: what mutates, creates content and costs what, and the endpoint's template")
    func rules() {
        func exchange(_ method: String, _ path: String, _ body: String = "") -> Exchange {
            Exchange(
                method: method, url: "https://api.github.com" + path, headers: Headers([]), body: Array(body.utf8),
                timeout: 30)
        }
        let limits = GitHubSecondaryLimits.limits
        let query = exchange("POST", "/graphql", #"{"query":"query { viewer { login } }"}"#)
        let mutation = exchange(
            "POST", "/graphql", #"{"query":"  # add one\n mutation { addStar(input: {}) { clientMutationId } }"}"#)
        #expect(!limits.isMutating(query) && !limits.createsContent(query))
        #expect(limits.isMutating(mutation) && limits.createsContent(mutation))
        #expect(limits.cost(query) == .init(endpoint: "graphql", points: 1, perMinute: 2000))
        #expect(limits.cost(mutation)?.points == 5)
        let patch = exchange("PATCH", "/repos/octo/hello/issues/12")
        #expect(limits.isMutating(patch) && !limits.createsContent(patch))
        #expect(limits.cost(patch) == .init(endpoint: "PATCH /repos/{}/{}/issues/{}", points: 5, perMinute: 900))
        #expect(
            limits.cost(exchange("GET", "/users/octocat/repos?page=2"))
                == .init(endpoint: "GET /users/{}/repos", points: 1, perMinute: 900))
        #expect(limits.maxInFlight == 100 && limits.writeGap == 1 && limits.defaultWait == 60)
        #expect(limits.contentCreation == [.init(requests: 80, seconds: 60), .init(requests: 500, seconds: 3600)])
    }
}
