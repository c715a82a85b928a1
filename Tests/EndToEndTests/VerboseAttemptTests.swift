import Foundation
import TestSupport
import Testing

/// `-v` lines of a request that needed more than one attempt (issue 27, friction 10): each
/// failed attempt says which it was and why, and the answer that follows says which attempt
/// it answered.
@Suite("-v lines of retried requests")
struct VerboseAttemptTests {
    static let fetch = "from apimacro import github\nprint(github.user('octocat')['login'])\n"

    @Test("a reset, then a 503, then the answer: three lines naming attempts 1, 2 and 3 of 4, the reset's reason")
    func retriedAttempts() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["fetch.py": Self.fetch])
        defer { space.remove() }
        server.inject([.reset, .status(503)], path: "/users/octocat")
        let result = try await space.run(
            "run", "-v", "--no-cache", "fetch.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "octocat\n")
        let lines = result.stderr.split(separator: "\n").map(String.init).filter { $0.contains("/users/octocat") }
        #expect(lines.count == 3, "\(result.stderr)")
        guard lines.count == 3 else { return }
        let url = "\(server.baseURL)/users/octocat"
        #expect(lines[0].hasPrefix("apimacro: GET \(url) --- "), "\(lines[0])")
        #expect(lines[0].contains(" network (attempt 1 of 4, network error: no response ("), "\(lines[0])")
        #expect(lines[1].hasPrefix("apimacro: GET \(url) 503 "), "\(lines[1])")
        #expect(lines[1].hasSuffix(" network (attempt 2 of 4)"), "\(lines[1])")
        #expect(lines[2].hasPrefix("apimacro: GET \(url) 200 "), "\(lines[2])")
        #expect(lines[2].hasSuffix(" network (attempt 3 of 4)"), "\(lines[2])")
    }

    @Test("a request that needed one attempt keeps its short line; a failed POST names attempt 1 and its reason")
    func singleAttempt() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "fetch.py": Self.fetch,
            "post.py": """
            import apimacro
            try:
                apimacro.post(\(String(reflecting: server.baseURL + "/echo")), json={"a": 1})
            except apimacro.NetworkError:
                print("failed")
            """,
        ])
        defer { space.remove() }
        let plain = try await space.run(
            "run", "-v", "--no-cache", "fetch.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        #expect(plain.status == 0, "\(plain.stderr)")
        let line = try #require(plain.stderr.split(separator: "\n").first { $0.contains("/users/octocat") })
        #expect(line.hasSuffix("ms network"), "\(line)")
        server.inject([.reset], path: "/echo")
        let post = try await space.run("run", "-v", "post.py")
        try await server.shutdown()
        #expect(post.stdout == "failed\n", "\(post.stderr)")
        let failed = try #require(post.stderr.split(separator: "\n").first { $0.contains("POST ") })
        #expect(failed.contains(" --- "), "\(failed)")
        #expect(failed.contains("(attempt 1, network error: "), "\(failed)")
    }
}
