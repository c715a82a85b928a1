import Foundation
import TestSupport
import Testing
import WebAPI

@Suite("rate limit as last seen in response headers")
struct RateLimitMemoryTests {
    @Test("a 403 rate-limit answer and a 404 update rateLimit too, not only successes (issue 14)")
    func errorsUpdateRateLimit() async throws {
        try await withLoopback { loop in
            let client = APIClient(
                configuration: ClientConfiguration(name: "github", baseURL: loop.server.baseURL, maxWait: 0),
                transport: loop.transport, log: loop.log, redactor: Redactor(secrets: []))
            #expect(client.rateLimit == nil)
            loop.server.inject([.forbiddenRateLimit(resetIn: 3600)], path: "/users/octocat")
            let error = await apiError { _ = try await client.send(Request("GET", "/users/octocat")) }
            #expect(error?.kind == .rateLimited, "\(String(describing: error))")
            #expect(client.rateLimit?.remaining == 0, "\(String(describing: client.rateLimit))")
            let missing = await apiError { _ = try await client.send(Request("GET", "/status/404")) }
            #expect(missing?.kind == .notFound)
            #expect(
                (client.rateLimit?.remaining ?? 0) > 0, "the 404's headers: \(String(describing: client.rateLimit))")
        }
    }
}
