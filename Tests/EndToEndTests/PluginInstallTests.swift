import Foundation
import TestSupport
import Testing

/// Issue 39, "Install, upgrade and remove plugins like gh extensions": plugins served by a real
/// `git daemon` on 127.0.0.1, installed, used, upgraded, pinned and removed through the built
/// binary; a failed install leaves nothing behind.
@Suite("plugins install, upgrade, remove from git")
struct PluginInstallTests {
    static func manifest(
        _ name: String, description: String = "Weather for tests", baseURL: String = "https://example.com"
    ) -> String {
        """
        name = "\(name)"
        description = "\(description)"
        base_url = "\(baseURL)"

        [endpoints.user]
        path = "/users/{login}"
        params = { login = "string!" }
        """
    }

    /// The workspace's home, where plugins are installed.
    static func plugins(_ space: Workspace) -> URL {
        space.url.appendingPathComponent(".config/apimacro/plugins")
    }

    static func leftovers(_ space: Workspace) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: plugins(space).path)) ?? []).filter { $0.hasPrefix(".") }
            .sorted()
    }

    @Test("install from git://, use it, list it, upgrade it, remove it")
    func lifecycle() async throws {
        let git = try await GitDaemon.start()
        defer { git.stop() }
        let server = try await TestServer.start()
        let first = try await git.create("weather", files: ["plugin.toml": Self.manifest("weather")])
        let space = try Workspace(files: [
            "who.py": "import apimacro\nprint(apimacro.client('weather').user(login='octocat')['login'])\n"
        ])
        defer { space.remove() }
        let environment = ["APIMACRO_WEATHER_URL": server.baseURL]
        let installed = try await space.run("plugins", "install", git.url("weather"), environment: environment)
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(
            installed.stdout
                == "installed weather from \(git.url("weather")) at \(first.prefix(12)) in "
                + "\(Self.plugins(space).appendingPathComponent("weather").path)\n", "\(installed.stdout)")
        let used = try await space.run("run", "--no-cache", "who.py", environment: environment)
        #expect(used.stdout == "octocat\n", "\(used.stderr)")
        let listed = try await space.run("plugins", "list", environment: environment)
        #expect(listed.stdout.contains("Installed with plugins install:\nNAME     SOURCE"), "\(listed.stdout)")
        #expect(listed.stdout.contains("weather  \(git.url("weather"))  \(first.prefix(12))  -"), "\(listed.stdout)")

        let upToDate = try await space.run("plugins", "upgrade", "weather", environment: environment)
        #expect(upToDate.stdout == "weather: up to date at \(first.prefix(12))\n", "\(upToDate.stderr)")
        let second = try await git.push(
            "weather", files: ["plugin.toml": Self.manifest("weather", description: "Weather v2")])
        let upgraded = try await space.run("plugins", "upgrade", "--all", environment: environment)
        #expect(
            upgraded.stdout == "weather: upgraded \(first.prefix(12)) → \(second.prefix(12))\n", "\(upgraded.stderr)")
        let shown = try await space.run("plugins", "show", "weather", environment: environment)
        #expect(shown.stdout.hasPrefix("weather: Weather v2"), "\(shown.stdout)")
        #expect(Self.leftovers(space).isEmpty, "\(Self.leftovers(space))")

        let removed = try await space.run("plugins", "remove", "weather", environment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        let gone = try await space.run("run", "--no-cache", "who.py", environment: environment)
        #expect(gone.status != 0)
        let again = try await space.run("plugins", "remove", "weather", environment: environment)
        #expect(again.status == 2)
        #expect(again.stderr.hasPrefix("apimacro: plugins remove: no plugin 'weather' in "), "\(again.stderr)")
        try await server.shutdown()
    }

    @Test("--pin REF installs that tag and upgrade leaves it; OWNER/REPO names GitHub (or --host)")
    func pinned() async throws {
        let git = try await GitDaemon.start()
        defer { git.stop() }
        let first = try await git.create("pinme", files: ["plugin.toml": Self.manifest("pinme")], tag: "v1")
        try await git.push("pinme", files: ["plugin.toml": Self.manifest("pinme", description: "later")])
        let space = try Workspace()
        defer { space.remove() }
        let installed = try await space.run("plugins", "install", git.url("pinme"), "--pin", "v1")
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("at \(first.prefix(12)) (pinned to v1)"), "\(installed.stdout)")
        let upgraded = try await space.run("plugins", "upgrade", "--all")
        #expect(
            upgraded.stdout == "pinme: pinned to v1, left as it is (install it again without --pin to follow)\n",
            "\(upgraded.stderr)")
        let shown = try await space.run("plugins", "show", "pinme")
        #expect(shown.stdout.hasPrefix("pinme: Weather for tests"), "\(shown.stdout)")
        // OWNER/REPO is GitHub's (not reachable here: the error names the URL it tried).
        let github = try await space.run("plugins", "install", "octo/weather", "--host", "127.0.0.1:9")
        #expect(github.status == 1)
        #expect(github.stderr.contains("git could not clone https://127.0.0.1:9/octo/weather.git"), "\(github.stderr)")
    }

    @Test("a failed install leaves nothing behind: a broken manifest, a clashing name, a failing self-test, ext::")
    func failures() async throws {
        let git = try await GitDaemon.start()
        defer { git.stop() }
        let server = try await TestServer.start()
        try await git.create("broken", files: ["plugin.toml": "name = \"broken\"\n"])
        try await git.create("clash", files: ["plugin.toml": Self.manifest("github")])
        try await git.create("twin", files: ["plugin.toml": Self.manifest("hackernews")])
        let space = try Workspace(files: [
            "record.py": "import apimacro\nprint(apimacro.client('tested').user(login='octocat')['login'])\n"
        ])
        defer { space.remove() }
        // A self-test recorded against the loopback server (the plugin's base URL), then a variant
        // that fails on replay; the server is gone before either is installed.
        let recordEnvironment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]
        let tested = Self.manifest("tested", baseURL: server.baseURL)
        try space.write("plugins/tested/plugin.toml", tested)
        let recorded = try await space.run(
            "run", "--no-cache", "--record", "selftest.har", "record.py", environment: recordEnvironment)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let cassette = try String(contentsOf: space.url.appendingPathComponent("selftest.har"), encoding: .utf8)
        try FileManager.default.removeItem(at: space.url.appendingPathComponent("plugins"))
        try await git.create(
            "tested",
            files: [
                "plugin.toml": tested, "cassettes/selftest.har": cassette,
                "selftest.py":
                    "import apimacro\nassert apimacro.client('tested').user(login='octocat')['login'] == 'octocat'\n",
            ])
        try await git.create(
            "untested",
            files: [
                "plugin.toml": tested, "cassettes/selftest.har": cassette,
                "selftest.py":
                    "import apimacro\nassert apimacro.client('tested').user(login='octocat')['login'] == 'nobody'\n",
            ])
        try await server.shutdown()

        let broken = try await space.run("plugins", "install", git.url("broken"))
        #expect(broken.status == 1)
        #expect(
            broken.stderr.contains("plugins install: the repository's plugin.toml does not load: "), "\(broken.stderr)")
        let clash = try await space.run("plugins", "install", git.url("clash"))
        #expect(clash.status == 1)
        #expect(clash.stderr.contains("github"), "\(clash.stderr)")
        let twin = try await space.run("plugins", "install", git.url("twin"))
        #expect(twin.status == 1)
        #expect(
            twin.stderr.contains("the repository's plugin 'hackernews' has the name of the plugin in "),
            "\(twin.stderr)")
        let failing = try await space.run("plugins", "install", git.url("untested"))
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("the plugin's self-test"), "\(failing.stderr)")
        let withPassword = try await space.run(
            "plugins", "install", "https://octo:ghp_inTheURL123@127.0.0.1:9/octo/weather.git")
        #expect(withPassword.status == 2)
        #expect(withPassword.stderr.contains("the URL holds a password"), "\(withPassword.stderr)")
        #expect(!withPassword.stderr.contains("ghp_inTheURL123"), "\(withPassword.stderr)")
        let transport = try await space.run("plugins", "install", "ext::sh -c touch% /tmp/apimacro-pwned")
        #expect(transport.status == 2)
        #expect(transport.stderr.contains("names a git transport apimacro does not use"), "\(transport.stderr)")
        #expect(Self.leftovers(space).isEmpty, "\(Self.leftovers(space))")
        let plugins = (try? FileManager.default.contentsOfDirectory(atPath: Self.plugins(space).path)) ?? []
        #expect(plugins.isEmpty, "nothing installed: \(plugins)")
        // The self-test that passes (replayed, no network): installed.
        let passing = try await space.run("plugins", "install", git.url("tested"))
        #expect(passing.status == 0, "\(passing.stderr)")
    }
}
