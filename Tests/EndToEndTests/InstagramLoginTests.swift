import Foundation
import TestSupport
import Testing

/// Business Login for Instagram as a user runs it (`apimacro login instagram`, `--token -`,
/// `auth status`, a stored token refreshed, `:login` in a macro), against the loopback
/// server's authorize page, code exchange and Graph token endpoints.
@Suite("instagram's Business Login, through the binary", .serialized)
struct InstagramLoginTests {
    static let secret = "test-secret"

    static func environment(_ server: TestServer, home: URL) -> [String: String] {
        [
            "APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph",
            "APIMACRO_INSTAGRAM_CLIENT_ID": "test-client", "APIMACRO_INSTAGRAM_CLIENT_SECRET": secret,
            "APIMACRO_INSTAGRAM_AUTHORIZE_URL": server.baseURL + "/instagram/oauth/authorize",
            "APIMACRO_INSTAGRAM_TOKEN_URL": server.baseURL + "/instagram/oauth/access_token",
            "APIMACRO_INSTAGRAM_REDIRECT_URI": "http://127.0.0.1:8765/callback",
        ]
    }

    /// The stored instagram entry of `home`'s credentials.json.
    static func stored(_ home: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: home.appendingPathComponent("credentials.json"))
        let all = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return all?["instagram"] as? [String: Any] ?? [:]
    }

    /// Nothing secret of the login in `texts`: the client secret, any token issued, and the code
    /// unless the user typed it there.
    static func expectNoSecrets(
        _ texts: [String], typedCode: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for text in texts {
            for secret in [Self.secret, "IGAA-short-1", "IGAA-long-1"] + (typedCode ? [] : ["ig-code-1"]) {
                #expect(!text.contains(secret), "\(secret) in \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("login --listen: the code is caught on the loopback listener, exchanged twice, stored 0600 with its expiry")
    func listenFlow() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import instagram\nprint(instagram.me()['username'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let (process, url, files) = try await LoginTests.listen(Self.environment(server, home: home), in: space)
        let (outFile, errFile) = files
        let query = try #require(URLComponents(string: url)?.queryItems)
        func field(_ name: String) -> String? { query.first { $0.name == name }?.value }
        #expect(field("response_type") == "code" && field("client_id") == "test-client")
        #expect(field("scope") == "instagram_business_basic,instagram_business_manage_insights")
        #expect(field("redirect_uri")?.hasPrefix("http://127.0.0.1:") == true)
        // The "browser": Meta redirects with the code in the query (and #_ after it)…
        let provider = try await runBlocking { try LoginTests.http("GET", url) }
        #expect(provider.status == 302)
        let location = try #require(provider.headers["location"])
        #expect(location.contains("?code=ig-code-1&state=") && location.hasSuffix("#_"))
        let callback = String(location.split(separator: "#")[0])
        // …and the browser's GET of the callback is all it takes: the code is in the query, so the
        // page needs no script (a text browser, scripts off; issue 36, friction 6).
        let page = try await runBlocking { try LoginTests.http("GET", callback) }
        #expect(page.status == 200)
        #expect(page.body.contains("you can close this window") && !page.body.contains("<script"), "\(page.body)")
        let exit = await process.exit()
        let out = try String(contentsOf: outFile, encoding: .utf8)
        let err = try String(contentsOf: errFile, encoding: .utf8)
        #expect(exit.status == 0 && !exit.signalled, "\(out)\(err)")
        #expect(out.contains("instagram: logged in; the token (valid 60 days) is stored in"), "\(out)")
        let entry = try Self.stored(home)
        #expect(entry["token"] as? String == "IGAA-long-1")
        #expect(entry["scope"] as? String == "instagram_business_basic,instagram_business_manage_insights")
        let expires = try #require(entry["expires_at"] as? Int)
        #expect(abs(expires - (Int(Date().timeIntervalSince1970) + 5_184_000)) < 600)
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: home.appendingPathComponent("credentials.json").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // The code exchange carried the listener's redirect URI, the secret in the body only.
        let exchange = try #require(server.requests.first { $0.path == "/instagram/oauth/access_token" })
        #expect(exchange.bodyText.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A"))
        let macro = try await space.run("run", "me.py", environment: Self.environment(server, home: home))
        #expect(macro.stdout == "facebookfordevelopers\n", "\(macro.stderr)")
        #expect(server.requests.last?.query["access_token"] == "IGAA-long-1")
        let status = try await space.run("auth", "status", environment: Self.environment(server, home: home))
        #expect(
            status.stdout.split(separator: "\n").contains {
                $0.hasPrefix("instagram ")
                    && $0.hasSuffix("credentials.json), account facebookfordevelopers, 60 days left")
            }, "\(status.stdout)")
        Self.expectNoSecrets([out, err, macro.stdout, macro.stderr, status.stdout])
        try await server.shutdown()
    }

    @Test("login then --redirect-url: the code flow's state is checked; a missing secret says what to set")
    func pasteFlow() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = Self.environment(server, home: home)
        var noSecret = env
        noSecret["APIMACRO_INSTAGRAM_CLIENT_SECRET"] = nil
        let refused = try await space.run("login", "instagram", environment: noSecret)
        #expect(refused.status == 2)
        #expect(refused.stdout.isEmpty, "no URL is printed for an app that cannot finish")
        #expect(
            refused.stderr.contains(
                "set APIMACRO_INSTAGRAM_CLIENT_ID and APIMACRO_INSTAGRAM_CLIENT_SECRET (and APIMACRO_INSTAGRAM_REDIRECT_URI) to your app's values"
            ), "\(refused.stderr)")
        let start = try await space.run("login", "instagram", environment: env)
        // Nothing pasted: not logged in, so not 0 (`login && run` stops); the URL's state is kept.
        #expect(start.status == 1)
        #expect(
            start.stderr
                == "apimacro: no address given, so not logged in; finish later with: apimacro login instagram --redirect-url URL\n",
            "\(start.stderr)")
        let url = try #require(start.stdout.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init))
        let state = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "state" }?.value)
        let forged = try await space.run(
            "login", "instagram", "--redirect-url", "http://127.0.0.1:8765/callback?code=ig-code-1&state=forged#_",
            environment: env)
        #expect(forged.status == 2)
        #expect(forged.stderr.contains("state mismatch"))
        _ = try await space.run("login", "instagram", environment: env)
        let again = try await space.run("login", "instagram", environment: env)
        let newState = try #require(
            again.stdout.split(separator: "\n").first { $0.hasPrefix("http") }.flatMap {
                URLComponents(string: String($0))?.queryItems?.first { $0.name == "state" }?.value
            })
        #expect(newState != state)
        let done = try await space.run(
            "login", "instagram", "--redirect-url", "http://127.0.0.1:8765/callback?code=ig-code-1&state=\(newState)#_",
            environment: env)
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.contains("instagram: logged in; the token (valid 60 days) is stored in"))
        #expect(try Self.stored(home)["token"] as? String == "IGAA-long-1")
        Self.expectNoSecrets([start.stdout, forged.stderr, done.stdout, done.stderr])
        try await server.shutdown()
    }

    @Test("login --token - stores a token from stdin, taken to live 60 days; other uses of --token are refused")
    func pastedToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import instagram\nprint(instagram.me()['username'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let env = ["APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph"]
        let stored = try await space.run(
            "login", "instagram", "--token", "-", environment: env, stdin: "  IGAA-pasted-7  \n")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(
            stored.stdout.contains("instagram: token stored in") && stored.stdout.contains("taken to be valid 60 days"))
        #expect(!stored.stdout.contains("IGAA-pasted-7"))
        let entry = try Self.stored(home)
        #expect(entry["token"] as? String == "IGAA-pasted-7" && entry["kind"] as? String == "access_token")
        #expect(abs((entry["expires_at"] as? Int ?? 0) - (Int(Date().timeIntervalSince1970) + 5_184_000)) < 600)
        let macro = try await space.run("run", "me.py", environment: env)
        #expect(macro.stdout == "facebookfordevelopers\n", "\(macro.stderr)")
        let onArgv = try await space.run("login", "instagram", "--token", "IGAA-typed-1", environment: env)
        #expect(onArgv.status == 2)
        #expect(onArgv.stderr.contains("--token takes - and reads the token from standard input"))
        #expect(!onArgv.stderr.contains("IGAA-typed-1"))
        let empty = try await space.run("login", "instagram", "--token", "-", environment: env, stdin: "\n")
        #expect(empty.status == 2 && empty.stderr.contains("no token given on standard input; nothing stored"))
        let shortener = try await space.run("login", "shortener", "--token", "-", environment: env, stdin: "k-1234\n")
        #expect(
            shortener.status == 2 && shortener.stderr.contains("--token is for a login by OAuth (github, instagram"))
        #expect(try Self.stored(home)["token"] as? String == "IGAA-pasted-7", "a refused --token stores nothing")
        try await server.shutdown()
    }

    /// Writes a stored instagram login obtained `age` days ago, expiring in `left` days (mode 0600).
    static func storeLogin(_ token: String, in home: URL, age: Double, left: Double) throws {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let now = Date().timeIntervalSince1970
        let entry: [String: Any] = [
            "instagram": [
                "token": token, "kind": "access_token", "obtained_at": Int(now - age * 86_400),
                "expires_at": Int(now + left * 86_400),
            ]
        ]
        let file = home.appendingPathComponent("credentials.json")
        try JSONSerialization.data(withJSONObject: entry).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
    }

    @Test("a stored token 5 days from expiry is refreshed before the macro's request and stored again")
    func refreshThroughTheBinary() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "me.py": "from apimacro import instagram\nprint(instagram.me()['username'])\n"
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try Self.storeLogin("ig-token-aging", in: home, age: 55, left: 5)
        let env = ["APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph"]
        let before = try await space.run("auth", "status", environment: env)
        #expect(before.stdout.contains("credentials.json), 5 days left"), "\(before.stdout)")
        let macro = try await space.run("run", "-v", "me.py", environment: env)
        #expect(macro.stdout == "facebookfordevelopers\n", "\(macro.stderr)")
        #expect(server.instagramGraph.refreshes == 1)
        #expect(server.requests.map(\.path) == ["/instagram/graph/refresh_access_token", "/instagram/graph/v27.0/me"])
        #expect(server.requests.last?.query["access_token"] == "IGAA-refreshed-1")
        #expect(try Self.stored(home)["token"] as? String == "IGAA-refreshed-1")
        let after = try await space.run("auth", "status", environment: env)
        #expect(after.stdout.contains("credentials.json), 60 days left"), "\(after.stdout)")
        for text in [macro.stdout, macro.stderr, after.stdout] {
            #expect(!text.contains("ig-token-aging") && !text.contains("IGAA-refreshed-1"), "\(text)")
        }
        #expect(macro.stderr.contains("refresh_access_token?grant_type=ig_refresh_token&access_token=REDACTED"))
        // A second run uses the refreshed token as it is.
        let second = try await space.run("run", "me.py", environment: env)
        #expect(second.stdout == "facebookfordevelopers\n")
        #expect(server.instagramGraph.refreshes == 1)
        try await server.shutdown()
    }

    @Test("an expired stored token is Unauthorized saying what to run, with nothing sent")
    func expiredToken() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["me.py": "from apimacro import instagram\ninstagram.me()\n"])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try Self.storeLogin("ig-token-gone", in: home, age: 63, left: -3)
        let env = ["APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph"]
        let macro = try await space.run("run", "me.py", environment: env)
        #expect(macro.status == 1)
        #expect(macro.stderr.contains("apimacro.Unauthorized: the Instagram token stored in"), "\(macro.stderr)")
        #expect(macro.stderr.contains("expired on") && macro.stderr.contains("log in again: apimacro login instagram"))
        #expect(!macro.stderr.contains("ig-token-gone"))
        #expect(server.requests.isEmpty)
        let status = try await space.run("auth", "status", environment: env)
        #expect(status.stdout.contains("credentials.json), expired 3 days ago: log in again"), "\(status.stdout)")
        try await server.shutdown()
    }

    @Test(
        "in a macro: authorize_url() and complete_login() exchange the code, store and use the token; -v shows no secret"
    )
    func inMacro() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let result = try await InstagramGraphEndToEndTests.run(
            """
            import apimacro
            from apimacro import instagram
            url = instagram.authorize_url()
            state = dict(p.split('=', 1) for p in url.split('?', 1)[1].split('&'))['state']
            try:
                instagram.complete_login('http://127.0.0.1:8765/callback?code=ig-code-1&state=forged#_')
            except apimacro.AuthError as e:
                print('refused:', 'state mismatch' in str(e))
            print(instagram.logged_in)
            instagram.complete_login('http://127.0.0.1:8765/callback?code=ig-code-1&state=' + state + '#_')
            print(instagram.logged_in, instagram.me()['username'])
            """, in: space, arguments: ["-v"], environment: Self.environment(server, home: home))
        #expect(result.stdout == "refused: True\nFalse\nTrue facebookfordevelopers\n", "\(result.stderr)")
        #expect(try Self.stored(home)["token"] as? String == "IGAA-long-1")
        #expect(
            result.stderr.contains(
                "access_token?grant_type=ig_exchange_token&client_secret=REDACTED&access_token=REDACTED"),
            "\(result.stderr)")
        #expect(result.stderr.contains("POST \(server.baseURL)/instagram/oauth/access_token 200"))
        Self.expectNoSecrets([result.stdout, result.stderr])
        // With --offline nothing may reach the network, the code exchange included.
        let offline = try await InstagramGraphEndToEndTests.run(
            """
            from apimacro import instagram
            url = instagram.authorize_url()
            state = dict(p.split('=', 1) for p in url.split('?', 1)[1].split('&'))['state']
            instagram.complete_login('http://127.0.0.1:8765/callback?code=ig-code-1&state=' + state)
            """, in: space, arguments: ["--offline"], environment: Self.environment(server, home: home))
        #expect(offline.status == 1)
        #expect(offline.stderr.contains("AuthError: instagram.complete_login() exchanges the code over the network"))
        #expect(server.requests.filter { $0.path == "/instagram/oauth/access_token" }.count == 1)
        try await server.shutdown()
    }

    @Test("the REPL's :login instagram runs Business Login in the session; the redirect stays out of the history")
    func replLogin() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let terminal = try await ReplTests.start(space, environment: Self.environment(server, home: home))
        defer { terminal.close() }
        let start = terminal.count
        terminal.type(":login instagram\r")
        _ = try await terminal.expect("sent to: ", after: start)
        let shown = String(decoding: Array(terminal.output.utf8)[start...], as: UTF8.self)
        #expect(shown.contains("response_type=code"), "\(shown)")
        let state = try #require(
            shown.components(separatedBy: "state=").dropFirst().first?.prefix {
                $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_"
            })
        let answer = try await ReplTests.enter(
            "http://127.0.0.1:8765/callback?code=ig-code-1&state=\(state)#_", on: terminal)
        #expect(answer.contains("instagram: logged in"), "\(answer)")
        let me = try await ReplTests.enter("print(instagram.me()['username'])", on: terminal)
        #expect(me.contains("facebookfordevelopers"), "\(me)")
        terminal.type(":quit\r")
        #expect(try await terminal.waitForExit() == 0)
        #expect(try Self.stored(home)["token"] as? String == "IGAA-long-1")
        let history = (try? String(contentsOf: home.appendingPathComponent("history"), encoding: .utf8)) ?? ""
        #expect(!history.contains("ig-code-1"), "\(history)")
        // The terminal shows the redirect the user typed (its code), nothing else of the login.
        Self.expectNoSecrets([terminal.output], typedCode: true)
        try await server.shutdown()
    }
}
