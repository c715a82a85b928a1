import Foundation
import Testing

/// `config.toml` as `auth status`, `plugins list` and its key checks show it (issue 27,
/// frictions 3, 4 and 14).
@Suite("config.toml seen from the commands")
struct ConfigFileEndToEndTests {
    /// A workspace whose `home/config.toml` holds `config` (mode 0600: it may hold a secret).
    static func workspace(config: String, files: [String: String] = [:]) throws -> (Workspace, [String: String]) {
        let space = try Workspace(files: files.merging(["home/config.toml": config]) { $1 })
        let file = space.url.appendingPathComponent("home/config.toml")
        guard chmod(file.path, 0o600) == 0 else { throw WorkspaceError("cannot chmod \(file.path)") }
        return (space, ["APIMACRO_HOME": space.url.appendingPathComponent("home").path])
    }

    @Test("a credential set in config.toml is named by its key there, in auth status and plugins list")
    func credentialSourceIsTheKey() async throws {
        let (space, environment) = try Self.workspace(
            config: "[github]\ntoken = \"ghp_fromConfig0000\"\n\n[openweather]\nkey = \"ow-from-config-1\"\n")
        defer { space.remove() }
        let file = space.url.appendingPathComponent("home/config.toml").path
        let status = try await space.run("auth", "status", environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("github       credentials from [github] token in \(file)"), "\(status.stdout)")
        #expect(lines.contains("openweather  credentials from [openweather] key in \(file)"), "\(status.stdout)")
        let list = try await space.run("plugins", "list", environment: environment)
        #expect(list.stdout.contains("  present ([openweather] key in \(file))  "), "\(list.stdout)")
        for output in [status.stdout, list.stdout] {
            #expect(!output.contains("ghp_fromConfig0000") && !output.contains("ow-from-config-1"))
        }
        // The environment wins over the file, and is named as such.
        let overridden = try await space.run(
            "auth", "status", environment: environment.merging(["APIMACRO_GITHUB_TOKEN": "ghp_fromEnv0000"]) { $1 })
        #expect(
            overridden.stdout.split(separator: "\n").contains(
                "github       credentials from env APIMACRO_GITHUB_TOKEN"),
            "\(overridden.stdout)")
    }

    @Test("a plugin's table takes the keys of the variables the plugin reads, and only those")
    func pluginTableKeys() async throws {
        let (good, goodEnvironment) = try Self.workspace(
            config: "[openweather]\nurl = \"https://weather.example.com\"\nkey = \"ow-key-0000\"\n\n"
                + "[foursquare]\ntoken = \"fsq-0000\"\nclient_id = \"app\"\nredirect_uri = \"http://127.0.0.1:9/cb\"\n")
        defer { good.remove() }
        let accepted = try await good.run("plugins", "show", "openweather", environment: goodEnvironment)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stdout.contains("  base URL:     https://weather.example.com "), "\(accepted.stdout)")
        let (bad, badEnvironment) = try Self.workspace(config: "[openweather]\nkye = \"ow-key-0000\"\n")
        defer { bad.remove() }
        let refused = try await bad.run("auth", "status", environment: badEnvironment)
        #expect(refused.status == 2)
        #expect(
            refused.stderr
                == "apimacro: \(bad.url.path)/home/config.toml: unknown key 'kye' in [openweather]; did you mean 'key'? "
                + "(known keys: url, key, limits.rate, limits.concurrency)\n")
        #expect(!refused.stderr.contains("ow-key-0000"))
    }

    @Test("a credential of the wrong type is refused, with the line to write")
    func credentialOfWrongType() async throws {
        let (space, environment) = try Self.workspace(config: "[github]\ntoken = 5\n")
        defer { space.remove() }
        let result = try await space.run("auth", "status", environment: environment)
        #expect(result.status == 2)
        #expect(
            result.stderr
                == "apimacro: \(space.url.path)/home/config.toml: [github] token is an integer; it takes a string, "
                + "such as: token = \"5\"\n")
    }

    @Test("text without quotes: the message quotes a format, never a token or a plugin's key")
    func unquotedTextIsShownOnlyWhenNoSecret() async throws {
        for (config, shown) in [
            ("format = csv\n", true), ("[github]\ntoken = ghp_unquoted0000\n", false),
            ("[openweather]\nkey = owunquoted0000\n", false), ("https_proxy = http://u:pw0000@proxy:3128\n", false),
        ] {
            let (space, environment) = try Self.workspace(config: config)
            defer { space.remove() }
            let result = try await space.run("auth", "status", environment: environment)
            #expect(result.status == 2, "\(config)")
            #expect(result.stderr.contains("text goes in quotes"), "\(result.stderr)")
            let value = String(config.split(separator: "=")[1].dropFirst().dropLast())
            #expect(result.stderr.contains(value) == shown, "\(config): \(result.stderr)")
        }
    }

    @Test("a plugin that did not load: its table is not checked (its own error says what is wrong)")
    func failedPluginTableIsNotChecked() async throws {
        let (space, environment) = try Self.workspace(
            config: "[broken]\nanything = \"x\"\n",
            files: ["plugins/broken/plugin.toml": "name = \"broken\"\nbase_url = \"https://example.com\"\n"])
        defer { space.remove() }
        let result = try await space.run(
            "auth", "status",
            environment: environment.merging(["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]) {
                $1
            })
        #expect(result.status == 0, "\(result.stderr)")
    }
}
