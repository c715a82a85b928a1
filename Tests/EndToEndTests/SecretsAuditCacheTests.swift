import Foundation
import TestSupport
import Testing

/// The secrets audit on the HTTP cache's files (issue 18 item 3): the database, its WAL and
/// shared-memory files, and the files beside the cache key in `APIMACRO_HOME`, after runs that
/// store answers echoing every kind of credential. A negative control plants a secret in a copy
/// of the database and checks the same scan finds it.
extension SecretsAuditTests {
    static let cacheSecrets = [
        "ghp_AuditGitHubToken0123456789", "ig-token-1", "AIza-test-key", "ow-test-key", "audit-basic-password",
        "audit-x-api-key-42",
    ]

    static let cacheScenario = """
        import apimacro, os
        from apimacro import github, instagram
        base = os.environ["APIMACRO_GITHUB_URL"]
        print(github.user("octocat")["login"])
        print(len(list(instagram.recent_media(limit=40))))
        apimacro.get(base + "/echo/basic", auth=("user", "audit-basic-password"))
        apimacro.get(base + "/echo/key", headers={"X-Api-Key": "audit-x-api-key-42"})
        apimacro.get(base + "/echo/query", params={"key": os.environ["APIMACRO_SHORTENER_KEY"], "appid": "ow-test-key"})
        print(list(apimacro.client("openweather").find(q="Altstadt", type="like"))[0]["name"])
        """

    /// Every secret form found in `files`: (file name, secret).
    static func findings(in files: [URL], secrets: [String]) throws -> [(String, String)] {
        var found: [(String, String)] = []
        for file in files {
            let bytes = try Data(contentsOf: file)
            for secret in secrets {
                for form in SecretForms.forms(of: secret) + SecretForms.forms(of: "user:" + secret)
                where bytes.range(of: Data(form.utf8)) != nil {
                    found.append((file.lastPathComponent, secret))
                }
            }
        }
        return found
    }

    @Test("no secret in the cache database, its WAL or the files beside the cache key; a planted secret is found")
    func cacheDatabaseAudit() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["cache_scenario.py": Self.cacheScenario])
        defer { space.remove() }
        var environment = Self.environment(server)
        environment["APIMACRO_PLUGINS"] = Self.repository.appendingPathComponent("plugins").path
        // Twice: the second run revalidates (304s rewrite the stored headers).
        for _ in 0..<2 {
            let run = try await space.run("run", "cache_scenario.py", environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
        }
        try await server.shutdown()
        let cache = space.url.appendingPathComponent(".cache/apimacro")
        let home = space.url.appendingPathComponent(".config/apimacro")
        let cacheFiles = try CacheSecurityTests.cacheFiles(cache)
        let homeFiles =
            ((try? FileManager.default.contentsOfDirectory(at: home, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.lastPathComponent != "credentials.json" && !$0.hasDirectoryPath }
        #expect(cacheFiles.contains { $0.lastPathComponent == "cache.sqlite" }, "\(cacheFiles)")
        #expect(homeFiles.contains { $0.lastPathComponent == "cache.key" }, "\(homeFiles)")
        let found = try Self.findings(in: cacheFiles + homeFiles, secrets: Self.cacheSecrets)
        #expect(found.isEmpty, "\(found)")
        for file in cacheFiles + homeFiles { #expect(try Self.mode(file) == 0o600, "\(file.lastPathComponent)") }

        // Negative control: the same scan sees a secret planted in a copy of the database, raw and as Basic.
        let copy = space.url.appendingPathComponent("planted.sqlite")
        var bytes = try Data(contentsOf: cache.appendingPathComponent("cache.sqlite"))
        bytes.replaceSubrange(100..<(100 + 20), with: Data("ig-token-1".utf8) + Data("dXNlcjph".utf8) + Data([0, 0]))
        bytes += Data(("Basic " + Data("user:audit-basic-password".utf8).base64EncodedString()).utf8)
        try bytes.write(to: copy)
        let planted = try Self.findings(in: [copy], secrets: Self.cacheSecrets)
        #expect(
            planted.contains { $0.1 == "ig-token-1" } && planted.contains { $0.1 == "audit-basic-password" },
            "\(planted)")
    }
}
