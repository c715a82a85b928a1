import Foundation
import TestSupport
import Testing

/// Two stored GitHub accounts sharing one real `redis-server` (APIMACRO_SHARED_STATE), through
/// the binary (issue 41): each account has its own rate-limit governor key and budget, and
/// neither a key nor a value in Redis holds a token.
@Suite("each account its own governor key in Redis, through the binary", .serialized)
struct AccountGovernorTests {
    /// The governor names in `keys` (`{apimacro:ORIGIN:NAME}:limits` and `:leases`) for `origin`.
    static func governors(_ keys: String, origin: String) -> Set<String> {
        let prefix = "{apimacro:\(origin):"
        return Set(
            keys.split(separator: "\n").compactMap { key -> String? in
                guard key.hasPrefix(prefix), key.hasSuffix("}:limits") || key.hasSuffix("}:leases") else { return nil }
                let rest = key.dropFirst(prefix.count)
                return rest.firstIndex(of: "}").map { String(rest[..<$0]) }
            })
    }

    @Test("two accounts: two governor keys, stable per account; one account's spent budget leaves the other's")
    func separateGovernors() async throws {
        let server = try await TestServer.start()
        let redis = try await RedisServer.start(password: "redis-pw-accounts")
        defer { redis.stop() }
        let space = try Workspace(files: [
            "both.py": """
            import apimacro
            from apimacro import github
            out = []
            for label in ("user1", "work"):
                try:
                    out.append(github.as_account(label).get("/users/octocat", params={"p": label})["login"])
                except apimacro.RateLimited as error:
                    out.append("RateLimited")
            print(" ".join(out))
            """,
            "one.py": """
            import apimacro
            from apimacro import github
            try:
                print(github.get("/users/octocat", params={"p": "one"})["login"])
            except apimacro.RateLimited:
                print("RateLimited")
            """,
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        var env = AccountsTests.environment(server, home: home)
        env["APIMACRO_KEYRING"] = "off"
        for (label, token) in [(nil, AccountsTests.one), ("work", AccountsTests.two)] {
            let login = try await Binary.run(
                ["login", "github"] + (label.map { ["--account", $0] } ?? []) + ["--with-token"], in: space.url,
                environment: env, stdin: token + "\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
        env["APIMACRO_SHARED_STATE"] = redis.url
        // A hang guard only: a Redis call that is merely slow (a busy machine) must not make a
        // process fall back to its own state, which the checks below would see.
        env["APIMACRO_SHARED_STATE_TIMEOUT"] = "600"
        env["APIMACRO_MAX_WAIT"] = "0"
        let origin = "http://127.0.0.1:\(server.port)"
        let cli = SharedStateTests()

        // Both accounts in one run: two governors.
        let both = try await space.run("run", "--no-cache", "both.py", environment: env)
        #expect(both.status == 0 && both.stdout == "octocat octocat\n", "\(both.stdout)\(both.stderr)")
        let afterBoth = Self.governors(try cli.redisCLI(redis, ["--scan"]), origin: origin)
        #expect(afterBoth.count == 2, "\(afterBoth)")

        // Each account alone, in its own process: the same key as before, no new one.
        for selection in [["APIMACRO_GITHUB_ACCOUNT": "user1"], ["APIMACRO_GITHUB_ACCOUNT": "work"]] {
            let alone = try await space.run(
                "run", "--no-cache", "one.py", environment: env.merging(selection) { $1 })
            #expect(alone.stdout == "octocat\n", "\(alone.stderr)")
        }
        #expect(Self.governors(try cli.redisCLI(redis, ["--scan"]), origin: origin) == afterBoth)

        // user1's budget used up: GitHub's 403 with remaining 0 in the window the earlier answers
        // named (the same reset; a different one would be an answer of another window) ...
        server.inject(
            [
                .status(
                    403, body: #"{"message":"API rate limit exceeded for user ID 1.","status":"403"}"#,
                    headers: [
                        ("x-ratelimit-limit", "5000"), ("x-ratelimit-remaining", "0"),
                        ("x-ratelimit-reset", String(server.rateLimitReset)), ("x-ratelimit-used", "5000"),
                        ("x-ratelimit-resource", "core"),
                    ])
            ], path: "/users/octocat")
        let spent = try await space.run(
            "run", "--no-cache", "one.py",
            environment: env.merging(["APIMACRO_GITHUB_ACCOUNT": "user1"]) { $1 })
        #expect(spent.stdout == "RateLimited\n", "\(spent.stdout)\(spent.stderr)")
        // ... another process: user1 is refused without sending, work still goes.
        let before = server.requests.count
        let next = try await space.run("run", "--no-cache", "both.py", environment: env)
        let sent = server.requests.dropFirst(before).map { $0.header("Authorization") }
        #expect(next.status == 0 && next.stdout == "RateLimited octocat\n", "\(next.stdout)\(next.stderr)")
        #expect(sent == ["Bearer \(AccountsTests.two)"], "\(sent)")

        // Redis holds no token, in a key or a value.
        let keys = try cli.redisCLI(redis, ["--scan"])
        var values = ""
        for key in keys.split(separator: "\n") { values += try cli.redisCLI(redis, ["DUMP", String(key)]) }
        try await server.shutdown()
        #expect(!keys.isEmpty && !values.isEmpty)
        for token in [AccountsTests.one, AccountsTests.two] {
            #expect(!keys.contains(token) && !values.contains(token))
            #expect(!both.stderr.contains(token) && !next.stderr.contains(token))
        }
    }
}
