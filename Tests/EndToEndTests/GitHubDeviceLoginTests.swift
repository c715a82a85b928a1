import Foundation
import TestSupport
import Testing

/// `apimacro login github` by GitHub's OAuth device flow, through the binary.
///
/// Against the loopback server's `/login/device/code` and `/login/oauth/access_token` (which names an
/// `interval` of 1 second, so each login takes a few seconds). No test bounds a time from above.
@Suite("github's device-flow login, through the binary", .serialized)
struct GitHubDeviceLoginTests {
    static let token = "gho_device_token_1"
    static let deviceCode = "3584d83530557fdd1f46af8289938c8ef79f9dc5"

    static func environment(_ server: TestServer, home: URL, client: String) -> [String: String] {
        [
            "APIMACRO_HOME": home.path, "APIMACRO_GITHUB_URL": server.baseURL,
            "APIMACRO_GITHUB_CLIENT_ID": client, "APIMACRO_GITHUB_LOGIN_URL": server.baseURL + "/device-login",
        ]
    }

    /// The stored github entry of `home`'s credentials.json.
    static func stored(_ home: URL) throws -> [String: Any]? {
        let file = home.appendingPathComponent("credentials.json")
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let all = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        return all?["github"] as? [String: Any]
    }

    /// The github line of `auth status`.
    static func row(_ stdout: String) -> String {
        stdout.split(separator: "\n").first { $0.hasPrefix("github ") }.map(String.init) ?? ""
    }

    /// The polls of the token endpoint the server saw.
    static func polls(_ server: TestServer) -> [RecordedRequest] {
        server.requests.filter { $0.path == "/device-login/login/oauth/access_token" }
    }

    static func expectNoSecrets(_ texts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for text in texts {
            for secret in [token, deviceCode, "ghr_device_refresh_1"] {
                #expect(!text.contains(secret), "\(secret) in \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("login github: the code is printed, pending polls waited out, the token stored 0600 and used by run")
    func fullLogin() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import github\nprint(github.user('octocat')['login'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = Self.environment(server, home: home, client: "device-ok")
        let login = try await space.run("login", "github", environment: env)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("First copy your one-time code: WDJB-MJHT"), "\(login.stdout)")
        #expect(login.stdout.contains("Then open \(server.baseURL)/device-login/login/device in a browser"))
        #expect(login.stdout.contains("github: logged in; the token is stored in"))
        Self.expectNoSecrets([login.stdout, login.stderr])
        let code = try #require(server.requests.first)
        #expect(code.path == "/device-login/login/device/code")
        let form = code.bodyText
        #expect(form.contains("client_id=device-ok") && form.contains("scope="))
        #expect(code.header("Accept")?.contains("application/json") == true)
        let polls = Self.polls(server)
        #expect(polls.count == 3, "two authorization_pending answers, then the token")
        #expect(
            polls.allSatisfy {
                $0.bodyText.contains("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code")
            })
        for (earlier, later) in zip(polls, polls.dropFirst()) {
            #expect(later.arrived - earlier.arrived >= 0.9, "polls at least the interval apart")
        }
        let entry = try #require(try Self.stored(home))
        #expect(entry["token"] as? String == Self.token && entry["scope"] as? String == "repo,gist")
        let attributes = try FileManager.default.attributesOfItem(
            atPath: home.appendingPathComponent("credentials.json").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        server.clearRequests()
        let run = try await space.run("run", "-v", "me.py", environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "octocat\n")
        #expect(server.requests.last?.header("Authorization") == "Bearer \(Self.token)")
        Self.expectNoSecrets([run.stdout, run.stderr])
        let status = try await space.run("auth", "status", environment: env)
        #expect(Self.row(status.stdout).contains("credentials from stored login ("), "\(status.stdout)")
        // A variable still wins over the stored login.
        var withVariable = env
        withVariable["GITHUB_TOKEN"] = "ghp_from_the_environment_1"
        let overridden = try await space.run("auth", "status", environment: withVariable)
        #expect(Self.row(overridden.stdout).contains("credentials from env GITHUB_TOKEN"), "\(overridden.stdout)")
        // The stored login comes before gh's token (GH_TOKEN here).
        var withGH = env
        withGH["GH_TOKEN"] = "gho_from_gh_environment_1"
        let beforeGH = try await space.run("auth", "status", environment: withGH)
        #expect(Self.row(beforeGH.stdout).contains("credentials from stored login ("), "\(beforeGH.stdout)")
        server.clearRequests()
        let ghRun = try await space.run("run", "me.py", environment: withGH)
        #expect(ghRun.stdout == "octocat\n", "\(ghRun.stderr)")
        #expect(server.requests.last?.header("Authorization") == "Bearer \(Self.token)")
        let logout = try await space.run("logout", "github", environment: env)
        #expect(logout.stdout == "github: logged out (stored token removed).\n")
        #expect(try Self.stored(home) == nil)
        try await server.shutdown()
    }

    @Test("slow_down: the next poll waits the longer interval the answer names")
    func slowDown() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let login = try await space.run(
            "login", "github", environment: Self.environment(server, home: home, client: "device-slow"))
        #expect(login.status == 0, "\(login.stderr)")
        let polls = Self.polls(server)
        #expect(polls.count == 2)
        if polls.count == 2 {
            // Lower bound only: the wait after slow_down is the 2 seconds it named.
            #expect(polls[1].arrived - polls[0].arrived >= 1.9)
        }
        #expect(try Self.stored(home)?["token"] as? String == Self.token)
        try await server.shutdown()
    }

    @Test(
        "each refusal stops the login with what to do, and stores nothing",
        arguments: [
            (
                "device-expired",
                "the one-time code expired before it was entered; nothing stored: run apimacro login github again"
            ),
            ("device-denied", "access was denied in the browser; nothing stored"),
            (
                "device-disabled",
                "the app's device flow is disabled: tick \"Enable Device Flow\" on the app's settings page"
            ),
            ("device-unknown", "the server knows no app with this client ID: check APIMACRO_GITHUB_CLIENT_ID"),
            ("device-never", "the one-time code expired after 3 seconds before it was entered"),
        ])
    func refusals(client: String, message: String) async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let login = try await space.run(
            "login", "github", environment: Self.environment(server, home: home, client: client))
        #expect(login.status != 0)
        #expect(login.stderr.contains(message), "\(login.stderr)")
        Self.expectNoSecrets([login.stdout, login.stderr])
        #expect(try Self.stored(home) == nil)
        try await server.shutdown()
    }

    @Test("a GitHub App's user token is stored with its expiry and its refresh token, neither printed")
    func appUserToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = Self.environment(server, home: home, client: "device-app")
        let login = try await space.run("login", "github", environment: env)
        #expect(login.status == 0, "\(login.stderr)")
        let entry = try #require(try Self.stored(home))
        let expires = entry["expires_at"] as? Int ?? 0
        #expect(expires >= Int(Date().timeIntervalSince1970) + 28_000)
        #expect(entry["refresh_token"] as? String == "ghr_device_refresh_1")
        #expect((entry["refresh_expires_at"] as? Int ?? 0) >= Int(Date().timeIntervalSince1970) + 15_000_000)
        Self.expectNoSecrets([login.stdout, login.stderr])
        let status = try await space.run("auth", "status", environment: env)
        #expect(status.stdout.contains("expires within a day"), "\(status.stdout)")
        try await server.shutdown()
    }

    @Test("a stored App user token within an hour of its end is refreshed once, before the first request")
    func refreshBeforeExpiry() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import github\nprint(github.user('octocat')['login'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let now = Int(Date().timeIntervalSince1970)
        let entry: [String: Any] = [
            "github": [
                "token": "ghu_aging_token_1", "kind": "access_token", "obtained_at": now - 27_000,
                "expires_at": now + 600, "refresh_token": "ghr_stored_refresh_1",
            ]
        ]
        let file = home.appendingPathComponent("credentials.json")
        try JSONSerialization.data(withJSONObject: entry).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
        let env = Self.environment(server, home: home, client: "device-app")
        let run = try await space.run("run", "-v", "me.py", environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "octocat\n")
        #expect(server.requests.map(\.path) == ["/device-login/login/oauth/access_token", "/users/octocat"])
        #expect(server.requests.first?.bodyText.contains("grant_type=refresh_token") == true)
        #expect(server.requests.last?.header("Authorization") == "Bearer ghu_refreshed_token_1")
        let stored = try #require(try Self.stored(home))
        #expect(stored["token"] as? String == "ghu_refreshed_token_1")
        #expect(stored["refresh_token"] as? String == "ghr_device_refresh_1")
        #expect((stored["expires_at"] as? Int ?? 0) >= now + 28_000)
        for text in [run.stdout, run.stderr] {
            for secret in [
                "ghu_aging_token_1", "ghu_refreshed_token_1", "ghr_stored_refresh_1", "ghr_device_refresh_1",
            ] {
                #expect(!text.contains(secret), "\(secret) in \(text)")
            }
        }
        // Renewed for 8 hours: the next run sends it as it is.
        server.clearRequests()
        let second = try await space.run("run", "me.py", environment: env)
        #expect(second.stdout == "octocat\n", "\(second.stderr)")
        #expect(server.requests.map(\.path) == ["/users/octocat"])
        try await server.shutdown()
    }

    @Test("login github without a client id, or with an http host, says what to set; --hostname is github's only")
    func settingsChecked() async throws {
        let space = try Workspace(files: [:])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let none = try await space.run("login", "github", environment: ["APIMACRO_HOME": home.path])
        #expect(none.status != 0)
        #expect(none.stderr.contains("set APIMACRO_GITHUB_CLIENT_ID"), "\(none.stderr)")
        let http = try await space.run(
            "login", "github",
            environment: [
                "APIMACRO_HOME": home.path, "APIMACRO_GITHUB_CLIENT_ID": "device-ok",
                "APIMACRO_GITHUB_LOGIN_URL": "http://example.com",
            ])
        #expect(http.stderr.contains("use https (or a loopback address)"), "\(http.stderr)")
        let badHost = try await space.run(
            "login", "github", "--hostname", "a/b",
            environment: ["APIMACRO_HOME": home.path, "APIMACRO_GITHUB_CLIENT_ID": "device-ok"])
        #expect(badHost.stderr.contains("is not a host name"), "\(badHost.stderr)")
        // A token is made for the API it will be sent to: --hostname another server than
        // APIMACRO_GITHUB_URL's is refused before anything is asked, naming both.
        let elsewhere = try await space.run(
            "login", "github", "--hostname", "127.0.0.1:1",
            environment: ["APIMACRO_HOME": home.path, "APIMACRO_GITHUB_CLIENT_ID": "device-ok"])
        #expect(elsewhere.status != 0)
        #expect(
            elsewhere.stderr.contains(
                "a token made on 127.0.0.1:1 would be sent to https://api.github.com, another server; set "
                    + "APIMACRO_GITHUB_URL to 127.0.0.1:1's API first"), "\(elsewhere.stderr)")
        // With the API on that host, --hostname asks https://HOST/login/device/code (nothing listens
        // on port 1: the error names it).
        let enterprise = try await space.run(
            "login", "github", "--hostname", "127.0.0.1:1",
            environment: [
                "APIMACRO_HOME": home.path, "APIMACRO_GITHUB_CLIENT_ID": "device-ok",
                "APIMACRO_GITHUB_URL": "https://127.0.0.1:1/api/v3",
            ])
        #expect(enterprise.status != 0)
        #expect(enterprise.stderr.contains("https://127.0.0.1:1/login/device/code"), "\(enterprise.stderr)")
        let other = try await space.run(
            "login", "shortener", "--hostname", "example.com", environment: ["APIMACRO_HOME": home.path])
        #expect(other.stderr.contains("--hostname is for a login by the device flow"), "\(other.stderr)")
    }

    @Test("--with-token stores a token from standard input, used by run and shown by auth status")
    func withToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import github\nprint(github.user('octocat')['login'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = ["APIMACRO_HOME": home.path, "APIMACRO_GITHUB_URL": server.baseURL]
        let stored = try await space.run(
            "login", "github", "--with-token", environment: env, stdin: "ghp_pasted_token_7\n")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout.contains("github: token stored in") && !stored.stdout.contains("ghp_pasted_token_7"))
        // One request: GET /user, whose answer names the account the token is stored under.
        #expect(server.requests.map(\.path) == ["/user"], "only whose the token is was asked")
        #expect(stored.stdout.contains("github: account octocat is the active one."), "\(stored.stdout)")
        let run = try await space.run("run", "me.py", environment: env)
        #expect(run.stdout == "octocat\n", "\(run.stderr)")
        #expect(server.requests.last?.header("Authorization") == "Bearer ghp_pasted_token_7")
        let status = try await space.run("auth", "status", environment: env)
        #expect(Self.row(status.stdout).contains("credentials from stored login ("), "\(status.stdout)")
        #expect(!status.stdout.contains("ghp_pasted_token_7"))
        let both = try await space.run(
            "login", "github", "--with-token", "--token", "-", environment: env, stdin: "x\n")
        #expect(both.status == 2)
        let logout = try await space.run("logout", "github", environment: env)
        #expect(logout.stdout == "github: logged out (stored token removed).\n")
        let again = try await space.run("logout", "github", environment: env)
        #expect(again.stdout == "github: no stored token.\n")
        try await server.shutdown()
    }
}
