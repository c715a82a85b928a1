import Foundation
import TestSupport
import Testing

/// GitHub as its power users need it (issue 28), through the built binary: an expiring token's
/// warning, the token `gh` already has, GitHub App authentication, search past 1,000 results,
/// secondary rate limits.
@Suite("GitHub for power users through the binary")
struct GitHubPowerUserTests {

    /// The `GitHub-Authentication-Token-Expiration` text for a moment `days` from now.
    static func expiration(days: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date().addingTimeInterval(days * 86_400)) + " UTC"
    }

    @Test("a token with fewer than 7 days left: one warning per run, and github.token_expires_at")
    func expiringToken() async throws {
        let macro = """
            from apimacro import github
            print(github.token_expires_at)
            for _ in range(3):
                github.user('octocat')
            print(github.token_expires_at.tzname(), (github.token_expires_at.timestamp() - __import__('time').time()) // 86400)
            """
        try await Workspace.withServer(files: ["expiring.py": macro]) { server, space in
            server.setTokenExpiration(Self.expiration(days: 2.5), for: "github_pat_e2eExpiring")
            let result = try await space.run(
                "run", "expiring.py",
                environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "github_pat_e2eExpiring"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "None\nUTC 2.0\n")
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
            #expect(warnings.count == 1, "\(result.stderr)")
            #expect(warnings.first?.contains("the GitHub token expires on ") == true)
            #expect(warnings.first?.contains("in 2 days") == true)
            #expect(!result.stderr.contains("github_pat_e2eExpiring"))
        }
    }

    // MARK: the token gh already has

    /// What `auth status` says of `client` (its line without the name column).
    static func line(_ client: String, of result: RunResult) -> String? {
        result.stdout.split(separator: "\n").first { $0.hasPrefix(client + " ") }.map {
            $0.dropFirst(client.count).trimmingCharacters(in: .whitespaces)
        }
    }

    /// Writes an executable `gh` script into `folder/bin` and returns the folder for `PATH`.
    static func fakeGH(in space: Workspace, _ script: String) throws -> String {
        try space.write("bin/gh", "#!/bin/sh\n" + script)
        let path = space.url.appendingPathComponent("bin/gh").path
        #expect(chmod(path, 0o755) == 0)
        return space.url.appendingPathComponent("bin").path
    }

    /// The macro every gh test runs: one request, and a traceback that quotes what the server saw.
    static let whoami = """
        from apimacro import github
        seen = github.get('/echo/whoami')['headers'].get('authorization')
        print('sent a token' if seen else 'sent no token')
        if seen:
            raise RuntimeError(seen)
        """

    @Test("hosts.yml in GH_CONFIG_DIR gives the host's token; auth status says it is gh's; tracebacks redact it")
    func hostsFile() async throws {
        try await Workspace.withServer(files: ["whoami.py": Self.whoami]) { server, space in
            let host = "127.0.0.1:\(server.port)"
            try space.write(
                "ghconfig/hosts.yml",
                "github.com:\n    oauth_token: gho_notForThisHost\n\(host):\n    user: monalisa\n    oauth_token: gho_fromHostsFile1234\n"
            )
            let file = space.url.appendingPathComponent("ghconfig/hosts.yml").path
            #expect(chmod(file, 0o600) == 0)
            let environment = [
                "APIMACRO_GITHUB_URL": server.baseURL,
                "GH_CONFIG_DIR": space.url.appendingPathComponent("ghconfig").path,
            ]
            let result = try await space.run("run", "whoami.py", environment: environment)
            #expect(result.status == 1)
            #expect(result.stdout == "sent a token\n")
            #expect(server.requests.last?.header("authorization") == "Bearer gho_fromHostsFile1234")
            #expect(result.stderr.contains("RuntimeError: Bearer REDACTED"), "\(result.stderr)")
            #expect(!result.stderr.contains("gho_"))
            let status = try await space.run("auth", "status", environment: environment)
            #expect(Self.line("github", of: status) == "credentials from gh: hosts.yml (\(file))", "\(status.stdout)")
            // A token apimacro's own variable names wins, and hosts.yml is not read.
            let own = try await space.run(
                "run", "whoami.py", environment: environment.merging(["GITHUB_TOKEN": "ghp_ownVariable"]) { $1 })
            #expect(own.status == 1 && server.requests.last?.header("authorization") == "Bearer ghp_ownVariable")
        }
    }

    @Test("gh auth token on PATH, when hosts.yml holds none (the keyring): used, its stderr kept out")
    func ghCommand() async throws {
        try await Workspace.withServer(files: ["whoami.py": Self.whoami]) { server, space in
            let host = "127.0.0.1:\(server.port)"
            try space.write(".config/gh/hosts.yml", "\(host):\n    user: monalisa\n    git_protocol: https\n")
            let bin = try Self.fakeGH(
                in: space,
                """
                echo "gh: reading the keyring for $3 $4" >&2
                [ "$1 $2 $3 $4" = "auth token --hostname \(host)" ] || exit 4
                echo "gho_fromKeyring9876543210_a_longer_token_of_any_format/+="
                """)
            let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "PATH": "\(bin):/usr/bin:/bin"]
            let result = try await space.run("run", "whoami.py", environment: environment)
            #expect(result.status == 1)
            #expect(
                server.requests.last?.header("authorization")
                    == "Bearer gho_fromKeyring9876543210_a_longer_token_of_any_format/+=")
            #expect(!result.stderr.contains("keyring") && !result.stdout.contains("keyring"), "\(result.stderr)")
            #expect(!result.stderr.contains("gho_fromKeyring"))
            let status = try await space.run("auth", "status", environment: environment)
            #expect(Self.line("github", of: status) == "credentials from gh: gh auth token", "\(status.stdout)")
            #expect(!status.stdout.contains("keyring") && !status.stderr.contains("keyring"))
        }
    }

    @Test("a gh that hangs is stopped at the bound; the request goes without a token, with one warning")
    func ghHangs() async throws {
        try await Workspace.withServer(files: ["whoami.py": Self.whoami]) { server, space in
            let pidFile = space.url.appendingPathComponent("gh.pid").path
            let bin = try Self.fakeGH(in: space, "echo $$ > \(pidFile)\nexec sleep 600\n")
            let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "PATH": "\(bin):/usr/bin:/bin"]
            // The bound is GitHubCLI.commandTimeout (5 s); the run's own hang guard is far wider.
            let result = try await space.run("run", "whoami.py", environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "sent no token\n")
            #expect(server.requests.last?.header("authorization") == nil)
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
            #expect(
                warnings == [
                    "apimacro: warning: gh auth token --hostname 127.0.0.1:\(server.port) did not answer within 5 s (it was stopped); no token from gh"
                ])
            // The hanging gh was ended, not left behind.
            let pid = try #require(
                Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(kill(pid, 0) != 0 && errno == ESRCH)
            // APIMACRO_GITHUB_TOKEN wins: gh is not even started.
            try FileManager.default.removeItem(atPath: pidFile)
            let own = try await space.run(
                "run", "whoami.py", environment: environment.merging(["APIMACRO_GITHUB_TOKEN": "ghp_own"]) { $1 })
            #expect(own.status == 1 && !FileManager.default.fileExists(atPath: pidFile))
        }
    }

    // MARK: GitHub App authentication

    @Test("a GitHub App: tokens minted and renewed mid-map; auth status names it; no JWT, key or token in any output")
    func githubApp() async throws {
        let macro = """
            import apimacro
            from apimacro import github
            before = github.app
            print(before['app_id'], before['installation_id'], before['account'], before['token_expires_at'])
            users = apimacro.map(github.user, ['octocat'] * 40)
            made = github.post('/repos/GithubApp-Test-Org/widgets/issues', json={'title': 'from the App'})
            after = github.app
            print(after['installation_id'], after['account'], after['token_expires_at'].tzname(), len(users), made['number'])
            raise RuntimeError('the macro failed on purpose, with a traceback')
            """
        try await Workspace.withServer(files: ["app.py": macro]) { server, space in
            let keys = try TestRSAKeyPair(in: space.url.appendingPathComponent("keys"))
            server.setGitHubApp(
                GitHubAppSetup(
                    appID: "243473", publicKeyPath: keys.publicKeyPath,
                    installations: [GitHubAppSetup.Installation(id: 30_614_487, account: "GithubApp-Test-Org")],
                    tokenLifetimes: [120, 3600]))
            let environment = [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_APP_ID": "243473",
                "APIMACRO_GITHUB_APP_KEY": keys.privateKeyPath, "GITHUB_TOKEN": "ghp_notUsedWhenAnAppIsSet",
            ]
            let result = try await space.run("run", "-v", "--record", "app.har", "app.py", environment: environment)
            #expect(result.status == 1)
            #expect(
                result.stdout == "243473 None None None\n30614487 GithubApp-Test-Org UTC 40 1\n", "\(result.stderr)")
            #expect(result.stderr.contains("RuntimeError: the macro failed on purpose"))
            let report = server.gitHubAppReport
            #expect(report.tokens.count == 2 && report.expiredUses == 0 && report.refusedJWTs.isEmpty)
            #expect(report.uses.values.reduce(0, +) == 41)
            #expect(!server.requests.contains { $0.header("authorization") == "Bearer ghp_notUsedWhenAnAppIsSet" })
            // The App's own exchanges show in -v, and are not recorded (their answers hold the token).
            #expect(
                result.stderr.contains("POST \(server.baseURL)/app/installations/30614487/access_tokens 201 "),
                "\(result.stderr)")
            let har = try String(contentsOf: space.url.appendingPathComponent("app.har"), encoding: .utf8)
            #expect(!har.contains("access_tokens") && har.contains("/users/octocat"))
            // No JWT, token or line of the key anywhere apimacro wrote.
            let keyLines = try String(contentsOfFile: keys.privateKeyPath, encoding: .utf8).split(separator: "\n")
                .filter { !$0.hasPrefix("-----") }.map(String.init)
            let secrets = report.jwts.map(\.jwt) + report.tokens.map(\.token) + keyLines
            #expect(secrets.count >= 2 + 2 + 20)
            let cache =
                (try? Data(contentsOf: space.url.appendingPathComponent(".cache/apimacro/cache.sqlite"))) ?? Data()
            for secret in secrets {
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret) && !har.contains(secret))
                #expect(cache.range(of: Data(secret.utf8)) == nil)
            }
            #expect(har.contains("REDACTED"))
            let status = try await space.run("auth", "status", environment: environment)
            #expect(
                Self.line("github", of: status)
                    == "credentials from GitHub App (243473, installation found on first use; key \(keys.privateKeyPath))",
                "\(status.stdout)")
            #expect(status.stdout.contains("REDACTED") == false)
            // auth status --check mints a token and asks which repositories it reaches.
            let checked = try await space.run("auth", "status", "--check", environment: environment)
            #expect(checked.status == 0, "\(checked.stderr)")
            #expect(
                checked.stdout.contains("✓ GitHub App installation (")
                    && checked.stdout.contains("repositories it reaches"),
                "\(checked.stdout)")
            let made = server.gitHubAppReport
            for secret in made.jwts.map(\.jwt) + made.tokens.map(\.token) {
                #expect(!checked.stdout.contains(secret) && !checked.stderr.contains(secret))
            }
            // A key others may read: auth status says why, and a macro's first call is an AuthError.
            #expect(chmod(keys.privateKeyPath, 0o640) == 0)
            let exposed = try await space.run("auth", "status", environment: environment)
            #expect(
                Self.line("github", of: exposed)?.contains("it is readable by others (mode 0640)") == true,
                "\(exposed.stdout)")
            try space.write("one.py", "from apimacro import github\ngithub.user('octocat')\n")
            let refused = try await space.run("run", "one.py", environment: environment)
            #expect(refused.status == 1 && refused.stderr.contains("AuthError"), "\(refused.stderr)")
        }
    }

    // MARK: search past 1,000 results

    static let search = """
        import sys
        from apimacro import github
        kind, query = sys.argv[1], sys.argv[2]
        options = dict(arg.split('=', 1) for arg in sys.argv[3:])
        if 'limit' in options:
            options['limit'] = int(options['limit'])
        items = list(github.search(kind, query, **options))
        ids = [item['id'] for item in items]
        created = [item['created_at'] for item in items]
        print(len(items), len(set(ids)), created == sorted(created), created == sorted(created, reverse=True))
        """

    /// The search requests the server saw, as (page, per_page) pairs.
    static func searchPages(_ server: TestServer) -> [(Int, Int)] {
        server.requests.filter { $0.path.hasPrefix("/search/") }.map {
            (Int($0.query["page"] ?? "1") ?? 1, Int($0.query["per_page"] ?? "30") ?? 30)
        }
    }

    @Test("2,500 issues over created dates: split by date, every result once, no 422, the search bucket waited on")
    func searchPastTheCap() async throws {
        try await Workspace.withServer(files: ["search.py": Self.search]) { server, space in
            // GitHub's bucket is 30 a minute; 30 every 2 s keeps the test short and still spends it.
            server.setSearchLimit(30, window: 2)
            let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_search"]
            let result = try await space.run(
                "run", "search.py", "issues", "repo:octo/bulk bulk", "sort=created", "order=asc",
                environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "2500 2500 True False\n", "oldest first across the slices")
            #expect(!result.stderr.contains("warning"), "\(result.stderr)")
            let pages = Self.searchPages(server)
            #expect(pages.count > 30, "the bucket of 30 was spent at least once (\(pages.count) requests)")
            #expect(pages.allSatisfy { $0.0 * $0.1 <= 1000 }, "nothing past the 1,000th result was asked for")
            #expect(server.searchRequestsRefused == 0, "the spent bucket was waited on, not run into")
            let queries = server.requests.compactMap { $0.query["q"] }
            #expect(queries.first == "repo:octo/bulk bulk" && queries.contains { $0.contains(" created:") })
            // Before the first split, one question: the newest result (the split's upper end comes
            // from the results, not the clock, so a recorded search replays).
            let probe = try #require(server.requests.filter { $0.path.hasPrefix("/search/") }.dropFirst().first)
            #expect(probe.query["q"] == "repo:octo/bulk bulk" && probe.query["per_page"] == "1")
            #expect(probe.query["sort"] == "created" && probe.query["order"] == "desc")
            // Newest first across the slices when asked.
            server.clearRequests()
            let newest = try await space.run(
                "run", "search.py", "issues", "bulk", "sort=created", "order=desc", environment: environment)
            #expect(newest.stdout == "2500 2500 False True\n", "\(newest.stderr)")
            // A limit under the cap never splits: two pages of 100 for 150.
            server.clearRequests()
            let limited = try await space.run(
                "run", "search.py", "repositories", "bulk", "limit=150", environment: environment)
            #expect(limited.stdout.hasPrefix("150 150 "), "\(limited.stderr)")
            #expect(Self.searchPages(server).map(\.0) == [1, 2])
        }
    }

    @Test("what cannot be split stops at 1,000 with one warning naming the cap; incomplete results warn once")
    func searchCap() async throws {
        try await Workspace.withServer(files: ["search.py": Self.search]) { server, space in
            server.setSearchLimit(100, window: 60)
            let environment = ["APIMACRO_GITHUB_URL": server.baseURL]
            let code = try await space.run("run", "search.py", "code", "bulk", environment: environment)
            #expect(code.status == 0, "\(code.stderr)")
            #expect(code.stdout.hasPrefix("1000 1000 "))
            let warnings = code.stderr.split(separator: "\n").filter { $0.contains("warning") }
            #expect(
                warnings == [
                    "apimacro: warning: GitHub search gives at most 1,000 results per query; \"bulk\" matched 2500 code: "
                        + "stopping at 1,000 (code search cannot be split by creation date)"
                ])
            #expect(Self.searchPages(server).allSatisfy { $0.0 * $0.1 <= 1000 })
            let second = try await space.run("run", "search.py", "issues", "samesecond", environment: environment)
            #expect(second.stdout.hasPrefix("1000 1000 "))
            #expect(second.stderr.contains("more than 1,000 were created within one second"))
            let slow = try await space.run("run", "search.py", "users", "slowpoke", environment: environment)
            #expect(slow.stdout.hasPrefix("3 3 "))
            #expect(slow.stderr.components(separatedBy: "incomplete results").count == 2, "\(slow.stderr)")
            try space.write("bad.py", "from apimacro import github\nlist(github.search('labels', 'x'))\n")
            let bad = try await space.run("run", "bad.py", environment: environment)
            #expect(
                bad.status == 1
                    && bad.stderr.contains(
                        "ValueError: search() kind must be one of issues, repositories, code, commits, users")
            )
        }
    }
}

extension GitHubPowerUserTests {
    // MARK: secondary rate limits

    static let secondaryBody =
        #"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}"#

    @Test(
        "writes in a map are paced one at a time (-v names each wait); a secondary 403 is RateLimited with .secondary")
    func secondaryLimits() async throws {
        let macro = """
            import apimacro
            from functools import partial
            from apimacro import github, RateLimited
            made = apimacro.map(partial(github.post, json={'title': 'paced'}), ['/repos/octo/paced/issues'] * 4)
            print(len(made), sorted(issue['number'] for issue in made))
            try:
                github.user('limited')
            except RateLimited as error:
                print('secondary', error.secondary, error.retry_after)
            try:
                github.user('octocat')
            except RateLimited as error:
                print('held', error.secondary, 'nothing was sent' in str(error))
            """
        try await Workspace.withServer(files: ["paced.py": macro]) { server, space in
            // Every answer is a little late, so writes sent together would overlap at the server.
            server.setBudget(limit: 10_000, delayMilliseconds: 5)
            server.inject([.status(403, body: Self.secondaryBody)], path: "/users/limited")
            let environment = [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_paced", "APIMACRO_MAX_WAIT": "5",
            ]
            let result = try await space.run("run", "-v", "paced.py", environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "4 [1, 2, 3, 4]\nsecondary True 60.0\nheld True True\n")
            #expect(server.budgetReport.peakInFlight == 1, "no two writes were in flight at once")
            let paced = result.stderr.split(separator: "\n").filter { $0.contains("paced ") }
            #expect(paced.count == 3, "\(result.stderr)")
            #expect(paced.allSatisfy { $0.contains("(github's secondary limits: the gap between writes)") })
            // The minute GitHub asks for holds the token's next request, refused unsent.
            #expect(!server.requests.contains { $0.path == "/users/octocat" })
            // With the pace off, the same writes overlap.
            server.setBudget(limit: 10_000, delayMilliseconds: 200)
            try space.write(
                "unpaced.py",
                "import apimacro\nfrom functools import partial\nfrom apimacro import github\n"
                    + "apimacro.map(partial(github.post, json={'title': 'x'}), ['/repos/octo/paced/issues'] * 4)\n")
            let unpaced = try await space.run(
                "run", "-v", "unpaced.py", environment: environment.merging(["APIMACRO_GITHUB_PACE": "off"]) { $1 })
            #expect(unpaced.status == 0 && !unpaced.stderr.contains("paced "), "\(unpaced.stderr)")
        }
    }
}

extension GitHubPowerUserTests {
    @Test("with shared state, a secondary limit one process met holds the token's requests in another, unsent")
    func secondaryLimitShared() async throws {
        let macro = """
            import sys
            from apimacro import github, RateLimited
            try:
                github.user(sys.argv[1])
                print('sent')
            except RateLimited as error:
                print('held', error.secondary, 'shared by every apimacro process' in str(error))
            """
        try await Workspace.withServer(files: ["one.py": macro]) { server, space in
            let redis = try await RedisServer.start()
            defer { redis.stop() }
            server.inject(
                [.status(403, body: Self.secondaryBody, headers: [("retry-after", "120")])], path: "/users/limited")
            let environment = [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_sharedSecondary",
                "APIMACRO_MAX_WAIT": "5", "APIMACRO_SHARED_STATE": redis.url,
            ]
            let first = try await space.run("run", "one.py", "limited", environment: environment)
            #expect(first.stdout == "held True False\n", "\(first.stderr)")
            let second = try await space.run("run", "one.py", "octocat", environment: environment)
            #expect(second.stdout == "held True True\n", "\(second.stderr)")
            #expect(!server.requests.contains { $0.path == "/users/octocat" }, "nothing was sent")
            // Another token is not held.
            let other = try await space.run(
                "run", "one.py", "octocat",
                environment: environment.merging(["APIMACRO_GITHUB_TOKEN": "ghp_other"]) { $1 })
            #expect(other.stdout == "sent\n", "\(other.stderr)")
        }
    }
}

extension GitHubPowerUserTests {
    @Test(
        "auth status --check asks GitHub who the token is: login, scopes, expiry; a refused token says so; never the token"
    )
    func authStatusCheck() async throws {
        try await Workspace.withServer { server, space in
            server.setTokenExpiration(Self.expiration(days: 20), for: "ghp_checkMe0123")
            let environment = [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": "ghp_checkMe0123",
            ]
            let checked = try await space.run("auth", "status", "--check", environment: environment)
            #expect(checked.status == 0, "\(checked.stderr)")
            let lines = checked.stdout.split(separator: "\n").map(String.init)
            let github = try #require(lines.firstIndex { $0.hasPrefix("github ") })
            #expect(
                lines[github + 1].trimmingCharacters(in: .whitespaces).hasPrefix(
                    "✓ octocat (scopes: repo, read:org; expires "), "\(checked.stdout)")
            #expect(!checked.stdout.contains("ghp_checkMe0123"))
            #expect(server.requests.contains { $0.path == "/user" })
            // Without --check nothing is asked.
            server.clearRequests()
            _ = try await space.run("auth", "status", environment: environment)
            #expect(server.requests.isEmpty)
            // A fine-grained token: no scopes header. A revoked one: GitHub's 401, named.
            let fine = try await space.run(
                "auth", "status", "--check",
                environment: environment.merging(["APIMACRO_GITHUB_TOKEN": "github_pat_fine0123"]) { $1 })
            #expect(fine.stdout.contains("✓ octocat (scopes not listed (a fine-grained token)"), "\(fine.stdout)")
            let revoked = try await space.run(
                "auth", "status", "--check",
                environment: environment.merging(["APIMACRO_GITHUB_TOKEN": "ghp_revoked0123"]) { $1 })
            #expect(
                revoked.status == 1 && revoked.stdout.contains("✗ check failed: ")
                    && revoked.stdout.contains("Bad credentials"), "\(revoked.stdout)")
            #expect(!revoked.stdout.contains("ghp_revoked0123") && !revoked.stderr.contains("ghp_revoked0123"))
        }
    }
}
