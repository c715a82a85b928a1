import Foundation
import TestSupport
import Testing

/// Issue 18 items 3, 4, 5, 6 and 12 (cache side), through the built binary: no answer across
/// credentials, no secret in the cache files in any form, a damaged cache never stops a command.
@Suite("the HTTP cache keeps secrets and credentials apart")
struct CacheSecurityTests {
    /// A plugin whose key travels in `X-Api-Key`, against an endpoint that answers `max-age=600`.
    static let headerKeyPlugin = """
        name = "hk"
        description = "Test plugin hk"
        base_url = "https://example.com"
        auth = { kind = "header_key", header = "X-Api-Key", env = "HK_KEY" }
        query = { h = "Cache-Control: max-age=600" }

        [endpoints.probe]
        path = "/conformance/hk"
        """

    static let probe = """
        import apimacro, os, sys
        r = apimacro.client("hk").probe()
        print("serial", r["serial"])
        """

    @Test("issue 18.4: a header_key plugin run with HK_KEY=A then HK_KEY=B: the second run is a miss")
    func headerKeyPluginMisses() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["plugins/hk/plugin.toml": Self.headerKeyPlugin, "probe.py": Self.probe])
        defer { space.remove() }
        var environment = [
            "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path, "APIMACRO_HK_URL": server.baseURL,
            "HK_KEY": "hk-key-of-alice-111",
        ]
        let alice = try await space.run("run", "probe.py", environment: environment)
        let aliceAgain = try await space.run("run", "probe.py", environment: environment)
        environment["HK_KEY"] = "hk-key-of-bob-222"
        let bob = try await space.run("run", "probe.py", environment: environment)
        try await server.shutdown()
        #expect(alice.status == 0 && bob.status == 0, "\(alice.stderr)\(bob.stderr)")
        #expect(alice.stdout == "serial 1\n")
        #expect(aliceAgain.stdout == "serial 1\n", "the same key is a cache hit")
        #expect(bob.stdout == "serial 2\n", "another key must not get alice's answer")
        let keys = server.requests.filter { $0.path == "/conformance/hk" }.map { $0.header("x-api-key") ?? "-" }
        #expect(keys == ["hk-key-of-alice-111", "hk-key-of-bob-222"])
    }

    @Test("issue 18.4: a credential-looking header a macro sets (X-Api-Key, X-Auth-Token, Cookie) is part of the key")
    func requestHeadersInKey() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "headers.py": """
            import apimacro, sys
            url = sys.argv[1] + "/conformance/rh?h=Cache-Control:%20max-age%3D600"
            for headers in [{"X-Api-Key": "k1"}, {"X-Api-Key": "k2"}, {}, {"X-Auth-Token": "t1"}, {"Cookie": "c=1"}, {"X-Api-Key": "k1"}]:
                print(apimacro.request("GET", url, headers=headers).json()["serial"])
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "headers.py", server.baseURL)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "1\n2\n3\n4\n5\n1\n", "each credential its own answer; the same one again a hit")
    }

    @Test("issue 18.3, 18.5, 18.6: no token, key or Basic password in the cache files in any form; bodies are sealed")
    func noSecretInCacheFiles() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "store.py": """
            import apimacro, sys
            from apimacro import instagram
            base = sys.argv[1]
            media = list(instagram.recent_media(limit=40))
            apimacro.get(base + "/echo/basic", auth=("alice", "Sup3rS3cretPw"))
            apimacro.get(base + "/echo/header", headers={"X-Api-Key": "echoed-api-key-777", "Authorization": "Bearer echoed-bearer-888"})
            print(len(media))
            """
        ])
        defer { space.remove() }
        let environment = ExampleTests.environment(server)  // the Instagram token is ig-token-1
        let result = try await space.run("run", "store.py", server.baseURL, environment: environment)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.contains { $0.uri.contains("access_token=ig-token-1") }, "the token went on the wire")
        #expect(
            server.requests.contains { $0.header("authorization") == "Basic YWxpY2U6U3VwM3JTM2NyZXRQdw==" },
            "basic went on the wire")
        let secrets = ["ig-token-1", "Sup3rS3cretPw", "echoed-api-key-777", "echoed-bearer-888"]
        let cache = space.url.appendingPathComponent(".cache/apimacro")
        let files = try Self.cacheFiles(cache)
        #expect(files.contains { $0.lastPathComponent == "cache.sqlite" })
        // The bodies themselves (the echo's JSON, Instagram's envelope) are sealed: not even their keys show.
        var all = Data()
        for file in files { all += try Data(contentsOf: file) }
        #expect(all.range(of: Data("\"pagination\"".utf8)) == nil, "bodies are stored sealed")
        #expect(all.range(of: Data("next_url".utf8)) == nil, "bodies are stored sealed")
        for secret in secrets {
            for form in SecretForms.forms(of: secret) + SecretForms.forms(of: "alice:" + secret) {
                #expect(all.range(of: Data(form.utf8)) == nil, "the cache holds \(secret) as \(form)")
            }
        }
        // The key is beside the credential store, owner-only, and not in the cache folder.
        let key = space.url.appendingPathComponent(".config/apimacro/cache.key")
        #expect(try SecretsAuditTests.mode(key) == 0o600)
        #expect(try Data(contentsOf: key).count == 32)
        #expect(!FileManager.default.fileExists(atPath: cache.appendingPathComponent("cache.key").path))
    }

    @Test(
        "issue 18.3: a lost cache key makes old entries misses, never a crash; a bad key file is a warning, the run goes on"
    )
    func lostKey() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "once.py": """
            import apimacro, sys
            print(apimacro.get(sys.argv[1] + "/conformance/lost?h=Cache-Control:%20max-age%3D600").json()["serial"])
            """
        ])
        defer { space.remove() }
        let first = try await space.run("run", "once.py", server.baseURL)
        let key = space.url.appendingPathComponent(".config/apimacro/cache.key")
        try FileManager.default.removeItem(at: key)
        let second = try await space.run("run", "once.py", server.baseURL)
        try Data("short".utf8).write(to: key)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
        let third = try await space.run("run", "once.py", server.baseURL)
        try await server.shutdown()
        #expect(first.stdout == "1\n" && first.status == 0, "\(first.stderr)")
        #expect(second.stdout == "2\n" && second.status == 0, "a new key: the old entry is a miss. \(second.stderr)")
        #expect(third.stdout == "3\n" && third.status == 0, "\(third.stderr)")
        #expect(third.stderr.contains("cache.key") && third.stderr.contains("continuing without it"), "\(third.stderr)")
    }

    @Test("issue 18.12: cache clear on a corrupt database removes and recreates it; a run on it warns once and goes on")
    func corruptDatabase() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "twice.py": """
            import apimacro, sys
            for _ in range(2):
                print(apimacro.get(sys.argv[1] + "/conformance/corrupt?h=Cache-Control:%20max-age%3D600").json()["serial"])
            """
        ])
        defer { space.remove() }
        let cache = space.url.appendingPathComponent(".cache/apimacro")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        try garbage.write(to: cache.appendingPathComponent("cache.sqlite"))
        let run = try await space.run("run", "twice.py", server.baseURL)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "1\n2\n", "without the cache, both go to the server")
        let warnings = run.stderr.split(separator: "\n").filter { $0.contains("HTTP cache") }
        #expect(warnings.count == 1, "\(run.stderr)")
        let info = try await space.run("cache", "info")
        #expect(info.status != 0 && info.stderr.contains("apimacro cache clear"), "\(info.stdout)\(info.stderr)")
        let clear = try await space.run("cache", "clear")
        #expect(clear.status == 0, "\(clear.stderr)")
        #expect(clear.stdout.contains("removed it and started an empty one"), "\(clear.stdout)")
        let after = try await space.run("cache", "info")
        #expect(after.status == 0 && after.stdout.contains("entries  0"), "\(after.stdout)\(after.stderr)")
        let again = try await space.run("run", "twice.py", server.baseURL)
        try await server.shutdown()
        #expect(
            again.stdout == "3\n3\n" && !again.stderr.contains("HTTP cache"), "the cache works again: \(again.stderr)")
    }

    /// Every regular file in the cache folder and below: the database, its WAL and
    /// shared-memory files, and the compiled code in `bytecode/`.
    static func cacheFiles(_ folder: URL) throws -> [URL] {
        guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        return walk.compactMap { $0 as? URL }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }
}

/// The forms a secret may take on disk: as is, base64 (Basic), percent-encoded, hex.
enum SecretForms {
    static func forms(of secret: String) -> [String] {
        let bytes = Data(secret.utf8)
        return [
            secret, bytes.base64EncodedString(),
            secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret,
            bytes.map { String(format: "%02x", $0) }.joined(),
        ]
    }
}
