import Foundation
import TestSupport
import Testing

/// Several accounts per service (issue 41), through the binary: `login --account`, the default
/// label asked from the service, `auth status`, `auth switch`, `logout --account`, `as_account`,
/// `--account NAME=LABEL`, `APIMACRO_<NAME>_ACCOUNT`, and an old credentials.json.
///
/// The loopback server's `GET /user` answers a token ending `_for_LOGIN` as LOGIN's.
@Suite("several accounts per service, through the binary", .serialized)
struct AccountsTests {
    static let one = "gho_first_for_user1"
    static let two = "gho_second_for_user2"
    static let three = "gho_third_for_user3"

    static func environment(_ server: TestServer, home: URL) -> [String: String] {
        ["APIMACRO_HOME": home.path, "APIMACRO_GITHUB_URL": server.baseURL]
    }

    static func expectNoTokens(_ texts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for text in texts {
            for token in [one, two, three] {
                #expect(!text.contains(token), "a token in \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    /// The `credentials.json` of `home`, parsed.
    static func file(_ home: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: home.appendingPathComponent("credentials.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("login labels each account by GET /user; auth status, switch and logout --account")
    func loginStatusSwitchLogout() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = Self.environment(server, home: home)
        let first = try await space.run("login", "github", "--with-token", environment: env, stdin: Self.one + "\n")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("github: account user1 is the active one."), "\(first.stdout)")
        let second = try await space.run(
            "login", "github", "--account", "work", "--with-token", environment: env, stdin: Self.two + "\n")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("github: account work (user2) is the active one; also stored: user1"))
        // The server was asked whose each token is, with that token.
        let asked = server.requests.filter { $0.path == "/user" }.map { $0.header("Authorization") }
        #expect(asked == ["Bearer \(Self.one)", "Bearer \(Self.two)"])

        let status = try await space.run("auth", "status", environment: env)
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("github ") && $0.hasSuffix("account work (user2), active") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("also stored: account user1") }, "\(lines)")

        let switched = try await space.run("auth", "switch", "github", environment: env)
        #expect(switched.stdout == "github: account user1 is the active one.\n", "\(switched.stderr)")
        let named = try await space.run("auth", "switch", "github", "work", environment: env)
        #expect(named.stdout == "github: account work is the active one.\n")
        let unknown = try await space.run("auth", "switch", "github", "play", environment: env)
        #expect(unknown.status != 0)
        #expect(
            unknown.stderr.contains(
                "no github account labelled 'play': the accounts stored for github are: user1, work"),
            "\(unknown.stderr)")

        // Several accounts: logout asks which; --account removes that one only, and the other stays.
        let ambiguous = try await space.run("logout", "github", environment: env)
        #expect(ambiguous.status != 0 && ambiguous.stderr.contains("say which to log out of"), "\(ambiguous.stderr)")
        let logout = try await space.run("logout", "github", "--account", "work", environment: env)
        #expect(
            logout.stdout
                == "github: account work logged out (stored token removed).\ngithub: account user1 is the active one.\n"
        )
        let left = try Self.file(home)["github"] as? [String: Any]
        #expect(left?["token"] as? String == Self.one && left?["account"] as? String == "user1")
        #expect(left?["other_accounts"] == nil)
        Self.expectNoTokens([first.stdout, first.stderr, second.stdout, status.stdout, logout.stdout, unknown.stderr])
        try await server.shutdown()
    }

    @Test("two accounts with one label are refused, nothing changed; a bad label is refused")
    func oneLabelTwoAccounts() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = Self.environment(server, home: home)
        _ = try await space.run(
            "login", "github", "--account", "work", "--with-token", environment: env, stdin: Self.one + "\n")
        let before = try Data(contentsOf: home.appendingPathComponent("credentials.json"))
        let clash = try await space.run(
            "login", "github", "--account", "work", "--with-token", environment: env, stdin: Self.two + "\n")
        #expect(clash.status != 0)
        #expect(
            clash.stderr.contains("the github account labelled 'work' is user1, and this login is user2"),
            "\(clash.stderr)")
        let cased = try await space.run(
            "login", "github", "--account", "Work", "--with-token", environment: env, stdin: Self.two + "\n")
        #expect(cased.status != 0 && cased.stderr.contains("already has an account labelled 'work'"))
        #expect(try Data(contentsOf: home.appendingPathComponent("credentials.json")) == before, "nothing changed")
        // The same person again under the same label renews the token.
        let again = try await space.run(
            "login", "github", "--account", "work", "--with-token", environment: env, stdin: "gho_renewed_for_user1\n")
        #expect(again.status == 0, "\(again.stderr)")
        #expect((try Self.file(home)["github"] as? [String: Any])?["token"] as? String == "gho_renewed_for_user1")
        let bad = try await space.run(
            "login", "github", "--account", "my work", "--with-token", environment: env, stdin: Self.two + "\n")
        #expect(bad.status != 0 && bad.stderr.contains("is not an account label"), "\(bad.stderr)")
        Self.expectNoTokens([clash.stderr, cased.stderr, bad.stderr])
        try await server.shutdown()
    }

    @Test("as_account, --account and APIMACRO_GITHUB_ACCOUNT send that account's token; -v and HAR name the label")
    func choosingAnAccount() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "who.py": """
            import apimacro
            from apimacro import github
            work = github.as_account("work")
            print(github.get("/user")["login"], work.get("/user")["login"])
            print(apimacro.map(work.get, ["/user"])[0]["login"], apimacro.map(github.get, ["/user"])[0]["login"])
            print(work.rate_limit is not None, github.as_account("user1").get("/user")["login"])
            try:
                github.as_account("play")
            except apimacro.AuthError as error:
                print("AuthError:", error)
            """,
            "me.py": "from apimacro import github\nprint(github.get('/user')['login'])\n",
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = Self.environment(server, home: home)
        _ = try await space.run("login", "github", "--with-token", environment: env, stdin: Self.one + "\n")
        _ = try await space.run(
            "login", "github", "--account", "work", "--with-token", environment: env, stdin: Self.two + "\n")
        _ = try await space.run("auth", "switch", "github", "user1", environment: env)
        let har = space.url.appendingPathComponent("run.har")
        // The variable is set, yet as_account's stored account wins for that client.
        let run = try await space.run(
            "run", "-v", "--record", har.path, "who.py",
            environment: env.merging(["APIMACRO_GITHUB_TOKEN": Self.three]) { $1 })
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout
                == "user3 user2\nuser2 user3\nTrue user1\n"
                + "AuthError: no github account labelled 'play': the accounts stored for github are: user1, work\n",
            "\(run.stderr)")
        let verbose = run.stderr.split(separator: "\n").filter { $0.contains("/user ") }
        #expect(verbose.contains { $0.hasSuffix("[account work]") }, "\(run.stderr)")
        #expect(verbose.contains { $0.hasSuffix("[account user1]") })
        #expect(verbose.contains { !$0.contains("[account") }, "the variable's token is no stored account")
        let recorded = try String(contentsOf: har, encoding: .utf8)
        #expect(recorded.contains("\"comment\" : \"account work\"") || recorded.contains("; account work\""))
        Self.expectNoTokens([run.stdout, run.stderr, recorded])

        // Each process with its own account: the cache never hands one account's answer to another.
        for (arguments, variables, expected) in [
            (["run", "me.py"], [String: String](), "user1"),
            (["run", "--account", "github=work", "me.py"], [:], "user2"),
            (["run", "me.py"], ["APIMACRO_GITHUB_ACCOUNT": "work"], "user2"),
            (["run", "--account", "github=user1", "me.py"], ["APIMACRO_GITHUB_ACCOUNT": "work"], "user1"),
        ] {
            let chosen = try await Binary.run(
                arguments, in: space.url, environment: env.merging(variables) { $1 })
            #expect(chosen.stdout == expected + "\n", "\(arguments) \(variables): \(chosen.stderr)")
        }
        let api = try await space.run("api", "--account", "github=work", "/user", environment: env)
        #expect(api.status == 0 && api.stdout.contains("\"user2\""), "\(api.stdout) \(api.stderr)")
        let unknown = try await space.run("run", "--account", "github=play", "me.py", environment: env)
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("the accounts stored for github are: user1, work"), "\(unknown.stderr)")
        let variable = try await space.run(
            "run", "me.py", environment: env.merging(["APIMACRO_GITHUB_ACCOUNT": "play"]) { $1 })
        #expect(variable.status != 0 && variable.stderr.contains("no github account labelled 'play'"))
        let malformed = try await space.run("run", "--account", "github", "me.py", environment: env)
        #expect(malformed.status != 0 && malformed.stderr.contains("--account takes NAME=LABEL"), "\(malformed.stderr)")
        // mcp lists --account in its help: it reads it as run does.
        let mcp = try await space.run("mcp", "--account", "github", environment: env)
        #expect(mcp.status != 0 && mcp.stderr.contains("--account takes NAME=LABEL"), "\(mcp.stderr)")
        try await server.shutdown()
    }

    @Test("a credentials.json from before accounts keeps working and is migrated in place, nothing lost")
    func oldFile() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import github\nprint(github.get('/user')['login'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(
            at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let old = """
            {"github": {"token": "\(Self.one)", "kind": "access_token", "obtained_at": 1700000000, "scope": "repo",
              "refresh_token": "ghr_old_refresh_1", "refresh_expires_at": 1900000000},
             "shortener": {"token": "bitly-key-1", "kind": "api_key", "obtained_at": 1700000001}}
            """
        let file = home.appendingPathComponent("credentials.json")
        #expect(
            FileManager.default.createFile(
                atPath: file.path, contents: Data(old.utf8), attributes: [.posixPermissions: 0o600]))
        let env = Self.environment(server, home: home)
        let run = try await space.run("run", "me.py", environment: env)
        #expect(run.stdout == "user1\n", "\(run.stderr)")
        let status = try await space.run("auth", "status", environment: env)
        #expect(
            status.stdout.contains("github       credentials from stored login (\(file.path))\n"), "\(status.stdout)")
        // A second login: the old one becomes the account `default`, every field of it kept.
        let login = try await space.run(
            "login", "github", "--account", "work", "--with-token", environment: env, stdin: Self.two + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        let all = try Self.file(home)
        let github = try #require(all["github"] as? [String: Any])
        #expect(github["account"] as? String == "work" && github["token"] as? String == Self.two)
        let kept = try #require((github["other_accounts"] as? [String: Any])?["default"] as? [String: Any])
        #expect(kept["token"] as? String == Self.one && kept["refresh_token"] as? String == "ghr_old_refresh_1")
        #expect(kept["scope"] as? String == "repo" && kept["obtained_at"] as? Int == 1_700_000_000)
        #expect(kept["refresh_expires_at"] as? Int == 1_900_000_000)
        let shortener = try #require(all["shortener"] as? [String: Any])
        #expect(shortener["token"] as? String == "bitly-key-1" && shortener["obtained_at"] as? Int == 1_700_000_001)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let back = try await space.run("run", "--account", "github=default", "me.py", environment: env)
        #expect(back.stdout == "user1\n", "\(back.stderr)")
        try await server.shutdown()
    }

    @Test("a plugin's client has as_account too, its stored key winning over its variable")
    func pluginAccounts() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "plugins/mirror/plugin.toml": """
            name = "mirror"
            description = "GitHub's GET /user through a plugin"
            base_url = "\(server.baseURL)"
            auth = { kind = "bearer", env = "MIRROR_TOKEN" }

            [endpoints.me]
            path = "/user"
            """,
            "who.py": """
            from apimacro import client
            mirror = client("mirror")
            print(mirror.me()["login"], mirror.as_account("b").me()["login"], type(mirror.as_account("b")).__name__)
            """,
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = [
            "APIMACRO_HOME": home.path, "APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path,
        ]
        for (label, token) in [("a", Self.one), ("b", Self.two)] {
            let login = try await space.run(
                "login", "mirror", "--account", label, environment: env, stdin: token + "\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
        let run = try await space.run(
            "run", "-v", "who.py", environment: env.merging(["MIRROR_TOKEN": Self.three]) { $1 })
        #expect(run.stdout == "user3 user2 MirrorClient\n", "\(run.stderr)")
        #expect(run.stderr.contains("[account b]"))
        let chosen = try await space.run(
            "run", "--account", "mirror=a", "who.py", environment: env.merging(["MIRROR_TOKEN": Self.three]) { $1 })
        #expect(chosen.stdout == "user1 user2 MirrorClient\n", "\(chosen.stderr)")
        Self.expectNoTokens([run.stdout, run.stderr, chosen.stderr])
        try await server.shutdown()
    }
}
