import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The ten defects of issue 35's hostile review (and the one left from the round before), each
/// through the built binary against the loopback server: credentials learned during a run
/// redacted by `api` and `batch`, `api`'s error line redacted, jq's decoded text redacted, gh's
/// bare-host entry kept to its port, absurd Instagram tokens refused, the login listener that
/// only this login's redirect ends, server text shown (not obeyed) on a terminal, and a GitHub App
/// token that must look like one.
@Suite("security, round 4 (issue 35)")
struct SecurityRoundFourTests {

    /// Plays a GitHub App with one installation (`chosenToken`: the token it hands out) and returns
    /// the environment that authenticates as it.
    static func gitHubApp(
        _ server: TestServer, in space: Workspace, chosenToken: String? = nil
    ) throws -> [String: String] {
        let keys = try TestRSAKeyPair(in: space.url.appendingPathComponent("keys"))
        var setup = GitHubAppSetup(
            appID: "243473", publicKeyPath: keys.publicKeyPath,
            installations: [GitHubAppSetup.Installation(id: 30_614_487, account: "GithubApp-Test-Org")])
        setup.chosenToken = chosenToken
        server.setGitHubApp(setup)
        return [
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_APP_ID": "243473",
            "APIMACRO_GITHUB_APP_KEY": keys.privateKeyPath,
        ]
    }

    /// Writes gh's `hosts.yml` (mode 0600) holding `entries` and returns the environment that reads it.
    static func ghHosts(_ server: TestServer, in space: Workspace, _ entries: String) throws -> [String: String] {
        try space.write("ghconfig/hosts.yml", entries)
        let file = space.url.appendingPathComponent("ghconfig/hosts.yml").path
        #expect(chmod(file, 0o600) == 0)
        return [
            "APIMACRO_GITHUB_URL": server.baseURL, "GH_CONFIG_DIR": space.url.appendingPathComponent("ghconfig").path,
        ]
    }

    /// Expects none of `secrets` in any of `texts`, and at least one `REDACTED` among them.
    static func expectRedacted(
        _ texts: [String], of secrets: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!secrets.isEmpty, sourceLocation: sourceLocation)
        for text in texts {
            for secret in secrets {
                #expect(!text.contains(secret), "\(secret) in \(text)", sourceLocation: sourceLocation)
            }
        }
        #expect(texts.contains { $0.contains("REDACTED") }, "\(texts)", sourceLocation: sourceLocation)
    }

    /// Every way `api` prints an answer echoing the credential, run with `environment`: the body,
    /// `-i`'s headers, a `--jq` result, a failed answer's body and its error line.
    static func apiOutputs(_ space: Workspace, _ environment: [String: String]) async throws -> [String] {
        let body = try await space.run("api", "github", "/hostile/echo-message/200", environment: environment)
        #expect(body.status == 0, "\(body.stderr)")
        let head = try await space.run("api", "-i", "github", "/hostile/echo-message/200", environment: environment)
        #expect(head.stdout.lowercased().contains("x-echoed: "), "\(head.stdout)")
        let filtered = try await space.run(
            "api", "github", "/hostile/echo-message/200", "--jq", ".headers.authorization", environment: environment)
        #expect(filtered.stdout.hasPrefix("Bearer "), "\(filtered.stdout) \(filtered.stderr)")
        let failed = try await space.run("api", "github", "/hostile/echo-message/422", environment: environment)
        #expect(failed.status == 1 && failed.stdout.contains("authorization"), "\(failed.stderr)")
        return [body, head, filtered, failed].flatMap { [$0.stdout, $0.stderr] }
    }

    // MARK: 1. tokens learned during a run, redacted by `api`

    @Test("api redacts a GitHub App's installation token and JWT: body, -i, --jq, a failed answer and its error")
    func apiRedactsAppToken() async throws {
        try await Workspace.withServer { server, space in
            let environment = try Self.gitHubApp(server, in: space)
            let outputs = try await Self.apiOutputs(space, environment)
            let report = server.gitHubAppReport
            #expect(report.tokens.count >= 1, "the App's token was used")
            Self.expectRedacted(outputs, of: report.tokens.map(\.token) + report.jwts.map(\.jwt))
        }
    }

    @Test("api redacts a token from gh's hosts.yml and from gh auth token: body, -i, --jq, a failed answer")
    func apiRedactsGhTokens() async throws {
        try await Workspace.withServer { server, space in
            let host = "127.0.0.1:\(server.port)"
            let hostsToken = "gho_fromHostsFileRound4abcdef"
            let fromFile = try Self.ghHosts(server, in: space, "\(host):\n    oauth_token: \(hostsToken)\n")
            Self.expectRedacted(try await Self.apiOutputs(space, fromFile), of: [hostsToken])
            #expect(server.requests.last?.header("authorization") == "Bearer \(hostsToken)")
            // gh auth token, when hosts.yml holds none (the keyring).
            let keyringToken = "gho_fromKeyringRound4_0123456789"
            let noToken = try Self.ghHosts(server, in: space, "\(host):\n    user: monalisa\n")
            let bin = try GitHubPowerUserTests.fakeGH(in: space, "echo \(keyringToken)\n")
            let fromCommand = noToken.merging(["PATH": "\(bin):/usr/bin:/bin"]) { $1 }
            Self.expectRedacted(try await Self.apiOutputs(space, fromCommand), of: [keyringToken])
            #expect(server.requests.last?.header("authorization") == "Bearer \(keyringToken)")
        }
    }

    // MARK: 2. tokens a batch child learned, redacted by `batch`

    @Test("batch redacts what its children learned: the console, --output-dir files and the JUnit report")
    func batchRedactsLearnedTokens() async throws {
        let macro = """
            import sys
            from apimacro import github
            seen = github.get('/hostile/echo-message/200')['headers']['authorization']
            print('out:', seen)
            print('err:', seen, file=sys.stderr)
            """
        try await Workspace.withServer(files: ["learned.py": macro]) { server, space in
            let host = "127.0.0.1:\(server.port)"
            let token = "gho_batchChildLearned0123456789"
            let environment = try Self.ghHosts(server, in: space, "\(host):\n    oauth_token: \(token)\n")
            let junit = space.url.appendingPathComponent("junit.xml")
            let out = space.url.appendingPathComponent("out")
            let result = try await space.run(
                "batch", "--junit", junit.path, "--output-dir", out.path, "learned.py", environment: environment)
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(server.requests.last?.header("authorization") == "Bearer \(token)")
            let files = try [
                String(contentsOf: junit, encoding: .utf8),
                String(contentsOf: out.appendingPathComponent("learned.out"), encoding: .utf8),
                String(contentsOf: out.appendingPathComponent("learned.err"), encoding: .utf8),
            ]
            #expect(files[1].contains("out: Bearer REDACTED"), "\(files[1])")
            #expect(files[2].contains("err: Bearer REDACTED"), "\(files[2])")
            Self.expectRedacted([result.stdout, result.stderr] + files, of: [token])
        }
    }

    // MARK: 3. api's error line

    @Test("api's error line after a non-2xx answer redacts an echoed token, Bitly token and -H X-Api-Key")
    func apiErrorLineRedacted() async throws {
        try await Workspace.withServer { server, space in
            let token = "ghp_envTokenRound4_0123456789"
            let key = "cli-api-key-round4-0123456789"
            let github = try await space.run(
                "api", "github", "/hostile/echo-message/422", "-H", "X-Api-Key: \(key)",
                environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token])
            #expect(github.status == 1)
            #expect(github.stderr.contains("you sent"), "\(github.stderr)")
            Self.expectRedacted([github.stdout, github.stderr], of: [token, key])
            let bitlyToken = "bitly-token-round4-0123456789"
            let bitly = try await space.run(
                "api", "shortener", "/hostile/echo-message/403",
                environment: ["APIMACRO_SHORTENER_URL": server.baseURL, "APIMACRO_SHORTENER_TOKEN": bitlyToken])
            #expect(bitly.status == 1)
            #expect(bitly.stderr.contains("you sent"), "\(bitly.stderr)")
            Self.expectRedacted([bitly.stdout, bitly.stderr], of: [bitlyToken])
        }
    }

    // MARK: 4. text jq decoded

    @Test("a token echoed with a letter JSON-escaped is redacted once jq decoded it: --jq, and on a terminal")
    func jqDecodedTokenRedacted() async throws {
        try await Workspace.withServer { server, space in
            let token = "ghp_escapedRound4_0123456789x"
            let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": token]
            let filtered = try await space.run(
                "api", "github", "/hostile/echo-escaped", "--jq", ".token", environment: environment)
            #expect(filtered.status == 0, "\(filtered.stderr)")
            #expect(filtered.stdout == "REDACTED\n", "\(filtered.stdout)")
            let json = try await space.run(
                "api", "github", "/hostile/echo-escaped", "--jq", ".", environment: environment)
            Self.expectRedacted([json.stdout, json.stderr], of: [token])
            let (shown, status) = try await TerminalOutputTests.onTerminal(
                ["api", "github", "/hostile/echo-escaped"], in: space, environment: environment)
            #expect(status == 0, "\(shown)")
            Self.expectRedacted([shown], of: [token])
        }
    }

    // MARK: 5. gh's entry for a bare host

    @Test("a hosts.yml entry for a bare host is not sent to that host on another port")
    func hostsFileBareHost() async throws {
        try await Workspace.withServer { server, space in
            let environment = try Self.ghHosts(
                server, in: space, "127.0.0.1:\n    oauth_token: gho_bareHostRound4_0123456789\n")
            let result = try await space.run("api", "github", "/echo/whoami", environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(server.requests.last?.path == "/echo/whoami")
            #expect(server.requests.last?.header("authorization") == nil)
            let status = try await space.run("auth", "status", environment: environment)
            #expect(!status.stdout.contains("hosts.yml"), "\(status.stdout)")
        }
    }

    // MARK: 6. absurd Instagram tokens

    @Test("a 1.5 MiB token from Instagram's refresh is refused, not stored: every stored login stays usable")
    func instagramHugeToken() async throws {
        try await Workspace.withServer(files: [
            "me.py": "from apimacro import instagram\nprint(instagram.me()['username'])\n"
        ]) {
            server, space in
            let home = space.url.appendingPathComponent("home")
            try InstagramLoginTests.storeLogin("ig-token-huge-refresh", in: home, age: 55, left: 5)
            let environment = [
                "APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph",
            ]
            let login = try await space.run(
                "login", "shortener", environment: environment, stdin: "bitly-stored-round4-0123\n")
            #expect(login.status == 0, "\(login.stderr)")
            let macro = try await space.run("run", "me.py", environment: environment)
            #expect(macro.status == 0, "\(macro.stderr)")
            #expect(macro.stderr.contains("could not refresh the Instagram token"), "\(macro.stderr)")
            #expect(!macro.stderr.contains("HugeHuge"))
            let file = home.appendingPathComponent("credentials.json")
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
            #expect(size < 4096, "credentials.json is \(size) bytes")
            #expect(try InstagramLoginTests.stored(home)["token"] as? String == "ig-token-huge-refresh")
            let status = try await space.run("auth", "status", environment: environment)
            #expect(status.status == 0 && !status.stdout.contains("not valid JSON"), "\(status.stdout)")
            let logout = try await space.run("logout", "shortener", environment: environment)
            #expect(logout.status == 0, "\(logout.stderr)")
        }
    }

    // MARK: 7. the login listener

    /// Opens a connection to 127.0.0.1:`port` and sends `bytes` (then leaves it open).
    static func connect(port: Int, sending bytes: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw WorkspaceError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw WorkspaceError("connect: \(String(cString: strerror(errno)))")
        }
        _ = Array(bytes.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    @Test("login --listen: a forged error= and a wrong state do not end it, 40 slow connections do not keep it out")
    func listenerKeepsListening() async throws {
        try await Workspace.withServer { server, space in
            let home = space.url.appendingPathComponent("home")
            let environment = [
                "APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/v1",
                "APIMACRO_INSTAGRAM_CLIENT_ID": "test-client",
                "APIMACRO_INSTAGRAM_REDIRECT_URI": "http://127.0.0.1:8765/callback",
            ]
            let (process, url, output) = try await LoginTests.listen(environment, in: space)
            defer { kill(process.processIdentifier, SIGKILL) }
            let redirectURI = try #require(
                URLComponents(string: url)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
            let origin = redirectURI.components(separatedBy: "/callback")[0]
            let port = try #require(URLComponents(string: origin)?.port)
            // A web page's forged refusal, and a local process's token with a wrong state.
            for forged in [
                "query=error%3Daccess_denied&fragment=", "fragment=access_token%3Dig-forged%26state%3Dguess",
            ] {
                let answer = try await runBlocking { try LoginTests.http("POST", origin + "/token", body: forged) }
                #expect(answer.status == 400, "\(answer)")
            }
            // 40 connections that send part of a request and then nothing.
            var slow: [Int32] = []
            defer { for fd in slow { close(fd) } }
            for _ in 0..<40 { slow.append(try Self.connect(port: port, sending: "POST /token HTTP/1.1\r\nHost: x")) }
            // The browser's real redirect still gets in and ends the login.
            let provider = try await runBlocking { try LoginTests.http("GET", url) }
            let location = try #require(provider.headers["location"])
            let fragment = try #require(location.split(separator: "#", maxSplits: 1).last.map(String.init))
            let encoded = fragment.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? fragment
            let posted = try await runBlocking {
                try LoginTests.http("POST", origin + "/token", body: "fragment=\(encoded)&query=")
            }
            #expect(posted.status == 200)
            let exit = await process.exit()
            let said = (try? String(contentsOf: output.stderr, encoding: .utf8)) ?? ""
            #expect(exit.status == 0 && !exit.signalled, "\(said)")
            #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    // MARK: 8. server text on three terminal paths

    @Test("on a terminal: -v shows a Link's control characters escaped (refused once), jq's error message too")
    func serverTextOnTerminal() async throws {
        try await Workspace.withServer { server, space in
            let link = "\(server.baseURL)/echo/\u{1b}]0;pwned\u{07}\u{1b}[2J"
            let encoded = link.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? link
            let (paged, _) = try await TerminalOutputTests.onTerminal(
                ["api", "-v", "--paginate", "\(server.baseURL)/hostile/link-next?to=\(encoded)"], in: space)
            #expect(!paged.contains("\u{1b}]0;pwned") && !paged.contains("\u{1b}[2J"), "\(paged)")
            #expect(paged.contains("\\x1b]0;pwned"), "\(paged)")
            #expect(!paged.contains("attempt 2"), "refused once, not retried: \(paged)")
            let (filtered, _) = try await TerminalOutputTests.onTerminal(
                ["api", "\(server.baseURL)/echo/x", "--jq", #"error("\u001b]0;pwned\u0007")"#], in: space)
            #expect(!filtered.contains("\u{1b}]0;pwned"), "\(filtered)")
            #expect(filtered.contains("\\x1b]0;pwned"), "\(filtered)")
        }
    }

    @Test("on a terminal: the warning of a failed Instagram refresh shows the server's control characters escaped")
    func refreshWarningOnTerminal() async throws {
        try await Workspace.withServer(files: [
            "me.py": "from apimacro import instagram\nprint(instagram.me()['username'])\n"
        ]) {
            server, space in
            let home = space.url.appendingPathComponent("home")
            try InstagramLoginTests.storeLogin("ig-token-escape-refresh", in: home, age: 55, left: 5)
            let (shown, status) = try await TerminalOutputTests.onTerminal(
                ["run", "me.py"], in: space,
                environment: [
                    "APIMACRO_HOME": home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/graph",
                ])
            #expect(status == 0, "\(shown)")
            #expect(shown.contains("could not refresh the Instagram token"), "\(shown)")
            #expect(!shown.contains("\u{1b}]0;pwned") && !shown.contains("\u{1b}[2J"), "\(shown)")
            #expect(shown.contains("\\x1b]0;pwned"), "\(shown)")
        }
    }

    // MARK: 9. macros list

    @Test("macros list on a terminal shows a docstring's control characters escaped")
    func macrosListEscapes() async throws {
        let space = try Workspace(files: [
            "macros/evil.py": "\"\"\"Looks fine\u{1b}]0;pwned\u{07}\u{1b}[2J.\"\"\"\n"
        ])
        defer { space.remove() }
        let (shown, status) = try await TerminalOutputTests.onTerminal(["macros", "list"], in: space)
        #expect(status == 0, "\(shown)")
        #expect(shown.contains("evil"), "\(shown)")
        #expect(!shown.contains("\u{1b}]0;pwned") && !shown.contains("\u{1b}[2J"), "\(shown)")
        #expect(shown.contains("\\x1b]0;pwned"), "\(shown)")
    }

    // MARK: 10. a token the server chose

    @Test("a GitHub App installation token as short as 'http', or holding URL syntax, is refused")
    func appTokenMustLookLikeOne() async throws {
        for chosen in ["http", "ghs_0123456789abcdef0123/../?x=1"] {
            try await Workspace.withServer { server, space in
                let environment = try Self.gitHubApp(server, in: space, chosenToken: chosen)
                let result = try await space.run("api", "-v", "github", "/users/octocat", environment: environment)
                #expect(result.status != 0, "\(result.stdout) \(result.stderr)")
                #expect(result.stderr.contains("holds no usable token"), "\(result.stderr)")
                #expect(!result.stderr.contains("REDACTED://"), "\(result.stderr)")
                #expect(server.requests.last?.path != "/users/octocat", "nothing sent with that token")
            }
        }
    }

    // MARK: left from round 3

    @Test("Response.json() on a non-JSON echo: e.body holds no value sent under a credential name")
    func responseJSONBodyRedacted() async throws {
        let macro = """
            import sys, apimacro
            response = apimacro.get(sys.argv[1] + '/hostile/echo-text',
                                    headers={'X-Api-Key': 'header-key-round4-0123'})
            try:
                response.json()
            except apimacro.ParseError as e:
                print('body:', e.body)
                print('text:', str(e))
            """
        try await Workspace.withServer(files: ["echo.py": macro]) { server, space in
            let result = try await space.run("run", "echo.py", server.baseURL)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("body: "), "\(result.stdout)")
            Self.expectRedacted([result.stdout, result.stderr], of: ["header-key-round4-0123"])
        }
    }
}
