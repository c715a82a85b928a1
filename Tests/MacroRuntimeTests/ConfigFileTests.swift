import Clients
import Foundation
import Testing

@testable import MacroRuntime

@Suite("config.toml: flags > environment > config.toml > defaults")
struct ConfigFileTests {
    /// A fresh `$APIMACRO_HOME` holding `config.toml` with `text`.
    private func home(with text: String?) throws -> URL {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        if let text {
            try text.write(to: home.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        }
        return home
    }

    @Test("keys and one level of tables become APIMACRO_ variables")
    func mapping() throws {
        let home = try home(
            with: """
                format = "csv"
                max_wait = 5
                plugins = ["/a", "/b"]
                [github]
                url = "http://127.0.0.1:9/api"
                api-version = "2022-11-28"
                [instagram]
                client_id = "abc"
                """)
        defer { try? FileManager.default.removeItem(at: home) }
        let variables = try ConfigFile(home: home).variables()
        #expect(
            variables == [
                "APIMACRO_FORMAT": "csv", "APIMACRO_MAX_WAIT": "5", "APIMACRO_PLUGINS": "/a:/b",
                "APIMACRO_GITHUB_URL": "http://127.0.0.1:9/api", "APIMACRO_GITHUB_API_VERSION": "2022-11-28",
                "APIMACRO_INSTAGRAM_CLIENT_ID": "abc",
            ])
    }

    @Test("the environment wins over the file, and the flag over both")
    func precedence() throws {
        let home = try home(with: "format = \"csv\"\nmax_wait = 5\n[github]\nurl = \"http://127.0.0.1:9\"\n")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = try Settings.environment(["APIMACRO_HOME": home.path, "APIMACRO_FORMAT": "json"])
        let settings = try Settings(environment: environment)
        #expect(settings.format == .json)
        #expect(settings.maxWait == 5)
        #expect(GitHubConfiguration(settings.view()).baseURL == "http://127.0.0.1:9")
        #expect(try Settings(format: "ndjson", environment: environment).format == .ndjson)
        #expect(try Settings(environment: try Settings.environment(["APIMACRO_HOME": home.path])).format == .csv)
    }

    @Test("[github] graphql_url is APIMACRO_GITHUB_GRAPHQL_URL: the GraphQL endpoint, checked like the variable")
    func graphQLURLKey() throws {
        let home = try home(with: "[github]\ngraphql_url = \"http://127.0.0.1:9/gql\"\n")
        defer { try? FileManager.default.removeItem(at: home) }
        let settings = try Settings.load(process: ["APIMACRO_HOME": home.path])
        #expect(GitHubConfiguration(settings.view()).graphQLEndpoint == "http://127.0.0.1:9/gql")
        let bad = try self.home(with: "[github]\ngraphql_url = \"ftp://127.0.0.1/gql\"\n")
        defer { try? FileManager.default.removeItem(at: bad) }
        let error = #expect(throws: MacroError.self) { try Settings.load(process: ["APIMACRO_HOME": bad.path]) }
        #expect(
            error?.description
                == "\(bad.appendingPathComponent("config.toml").path): github.graphql_url: 'ftp://127.0.0.1/gql' "
                + "is not an http:// or https:// URL; accepted: a URL such as https://api.example.com/v1")
    }

    @Test("every setting a built-in client declares is a key of its table in config.toml, for its variable")
    func everyClientSettingIsAKey() throws {
        var text = ""
        var expected: [String: String] = [:]
        for client in BuiltInClients.descriptors where !client.settings.isEmpty {
            text += "[\(client.name)]\n"
            for setting in client.settings {
                // A value the setting accepts: a URL, else a date (GitHub's API version).
                let value =
                    ["https://\(client.name).example.com/\(setting.key)", "2022-11-28"].first {
                        setting.problem?($0) == nil
                    } ?? ""
                text += "\(setting.key) = \"\(value)\"\n"
                expected[setting.variable] = value
            }
        }
        #expect(expected["APIMACRO_GITHUB_GRAPHQL_URL"] != nil && expected.count >= 11, "\(expected.keys.sorted())")
        let home = try home(with: text)
        defer { try? FileManager.default.removeItem(at: home) }
        // It holds tokens and keys: only a private file is read.
        #expect(chmod(home.appendingPathComponent("config.toml").path, 0o600) == 0)
        let settings = try Settings.load(process: ["APIMACRO_HOME": home.path])
        for (variable, value) in expected {
            #expect(settings.environment[variable] == value, "\(variable)")
        }
    }

    @Test("the settings table: a key, a variable, or both; none is no default; an indented line goes on")
    func settingsTableRows() {
        let entries = SettingsTable.entries(
            """
            ui.color | auto | colour
            APIMACRO_STATE | none
                | where state
                  lives
            APIMACRO_SHARED_STATE shared.redis | none | a redis:// URL | with a bar
            """)
        #expect(
            entries == [
                .init(variable: "APIMACRO_UI_COLOR", key: "ui.color", defaultText: "auto", summary: "colour"),
                .init(variable: "APIMACRO_STATE", key: nil, defaultText: nil, summary: "where state lives"),
                .init(
                    variable: "APIMACRO_SHARED_STATE", key: "shared.redis", defaultText: nil,
                    summary: "a redis:// URL | with a bar"),
            ])
        // Every row of the real tables has its three columns.
        #expect(SettingsTable.all.allSatisfy { !$0.summary.isEmpty && $0.variable.hasPrefix("APIMACRO_") })
    }

    @Test("no file: nothing changes")
    func missing() throws {
        let home = try home(with: nil)
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(try ConfigFile(home: home).variables().isEmpty)
        #expect(try Settings.environment(["APIMACRO_HOME": home.path]) == ["APIMACRO_HOME": home.path])
    }

    @Test(
        "a file that cannot be used is one message naming the file and the problem",
        arguments: [
            ("format = ", "is not valid TOML: "),
            ("[a.b]\nc = 1\n", "'a.b' is a table; write a string, number, boolean or list of strings"),
            ("plugins = [1]\n", "'plugins' must be a list of strings, found an integer in it"),
            ("when = 1979-05-27\n", "'when' is a date or time; write a string, number, boolean or list of strings"),
        ])
    func broken(text: String, message: String) throws {
        let home = try home(with: text)
        defer { try? FileManager.default.removeItem(at: home) }
        let error = #expect(throws: MacroError.self) { try ConfigFile(home: home).variables() }
        let description = error?.description ?? ""
        #expect(description.hasPrefix(home.appendingPathComponent("config.toml").path))
        #expect(description.contains(message), "\(description)")
    }
}
