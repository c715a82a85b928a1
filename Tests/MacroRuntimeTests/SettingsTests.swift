import Clients
import Foundation
import MacroRuntime
import Testing
import WebAPI

@Suite("settings, macro lookup and redaction")
struct SettingsTests {
    @Test("APIMACRO_HOME, else XDG_CONFIG_HOME/apimacro, else ~/.config/apimacro")
    func home() throws {
        #expect(
            try Settings(environment: ["APIMACRO_HOME": "/a", "XDG_CONFIG_HOME": "/b", "HOME": "/c"]).home.path == "/a")
        #expect(try Settings(environment: ["XDG_CONFIG_HOME": "/b", "HOME": "/c"]).home.path == "/b/apimacro")
        #expect(try Settings(environment: ["HOME": "/c"]).home.path == "/c/.config/apimacro")
    }

    @Test("the --format flag beats APIMACRO_FORMAT, which beats the default")
    func formatPrecedence() throws {
        #expect(try Settings(format: "csv", environment: ["APIMACRO_FORMAT": "json"]).format == .csv)
        #expect(try Settings(environment: ["APIMACRO_FORMAT": "json"]).format == .json)
        #expect(try Settings(environment: [:]).format == nil)
    }

    @Test("credentials in the environment are redacted, longest first; a short one as a word of its own")
    func redaction() throws {
        let settings = try Settings(environment: [
            "APIMACRO_GITHUB_TOKEN": "ghp_abcdef123456", "GITHUB_TOKEN": "ghp_abc",
            "APIMACRO_SHORTENER_KEY": "AIzaKEY99",
            "PATH": "/usr/bin", "SHORT_KEY": "ab",
        ])
        let redactor = Redactor(secrets: settings.secrets)
        #expect(
            redactor.redact("token ghp_abcdef123456 and ghp_abc and AIzaKEY99 in /usr/bin ab, about")
                == "token REDACTED and REDACTED and REDACTED in /usr/bin REDACTED, about")
    }

    @Test("a macro name is looked up in ./macros, then $APIMACRO_HOME/macros; paths are used as given")
    func lookup() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-lookup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let work = root.appendingPathComponent("work")
        let home = root.appendingPathComponent("home")
        for folder in [work.appendingPathComponent("macros"), home.appendingPathComponent("macros")] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try Data().write(to: work.appendingPathComponent("macros/both.py"))
        try Data().write(to: home.appendingPathComponent("macros/both.py"))
        try Data().write(to: home.appendingPathComponent("macros/homeonly.py"))
        try Data().write(to: work.appendingPathComponent("direct.py"))
        let settings = try Settings(environment: ["APIMACRO_HOME": home.path], workingDirectory: work)
        let locator = MacroLocator(settings: settings)
        #expect(try locator.locate("both", relativeTo: work).path == work.appendingPathComponent("macros/both.py").path)
        #expect(
            try locator.locate("homeonly", relativeTo: work).path
                == home.appendingPathComponent("macros/homeonly.py").path)
        #expect(try locator.locate("direct.py", relativeTo: work).path == work.appendingPathComponent("direct.py").path)
        #expect(throws: MacroError.self) { try locator.locate("missing", relativeTo: work) }
        #expect(throws: MacroError.self) { try locator.locate("missing.py", relativeTo: work) }
        #expect(throws: MacroError.self) { try locator.locate("macros", relativeTo: work) }
    }
}

@Suite("shared-state settings")
struct SharedStateSettingsTests {
    @Test("APIMACRO_SHARED_STATE, APIMACRO_MAX_RATE and APIMACRO_MAX_CONCURRENCY; absent: nothing")
    func values() throws {
        let none = try Settings(environment: [:])
        #expect(none.sharedState == nil && none.governorLimits == GovernorLimits())
        let set = try Settings(environment: [
            "APIMACRO_SHARED_STATE": "redis://ci:pa55-word-1@127.0.0.1:6390/2", "APIMACRO_MAX_RATE": "2.5",
            "APIMACRO_MAX_CONCURRENCY": "4",
        ])
        #expect(set.sharedState?.port == 6390 && set.sharedState?.database == 2 && set.sharedState?.user == "ci")
        #expect(set.governorLimits == GovernorLimits(maxRate: 2.5, maxConcurrency: 4))
        // The password is a secret: redacted wherever apimacro prints.
        #expect(Redactor(secrets: set.secrets).redact("pw pa55-word-1") == "pw REDACTED")
    }

    @Test("the Redis timeout: 1 s by default, APIMACRO_SHARED_STATE_TIMEOUT, or [shared] timeout in config.toml")
    func timeout() throws {
        #expect(try Settings(environment: [:]).sharedStateTimeout == 1)
        #expect(try Settings(environment: ["APIMACRO_SHARED_STATE_TIMEOUT": "2.5"]).sharedStateTimeout == 2.5)
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-shared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try "[shared]\ntimeout = 7\n".write(
            to: home.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        #expect(try Settings.load(process: ["APIMACRO_HOME": home.path]).sharedStateTimeout == 7)
        // The variable wins over the file.
        let both = try Settings.load(process: ["APIMACRO_HOME": home.path, "APIMACRO_SHARED_STATE_TIMEOUT": "3"])
        #expect(both.sharedStateTimeout == 3)
        try "[shared]\ntimeout = -1\n".write(
            to: home.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        #expect {
            _ = try Settings.load(process: ["APIMACRO_HOME": home.path])
        } throws: { error in "\(error)".contains("config.toml: shared.timeout") }
    }

    @Test(
        "a bad value names its variable and what is accepted, never the password",
        arguments: [
            ("APIMACRO_SHARED_STATE", "http://u:pa55-word-1@h/0", "is not a redis:// URL"),
            ("APIMACRO_SHARED_STATE", "redis://:pa55-word-1@h/x", "names a database that is not a number"),
            ("APIMACRO_MAX_RATE", "0", "is not a number of requests per second"),
            ("APIMACRO_MAX_CONCURRENCY", "2.5", "is not a count"),
            ("APIMACRO_MAX_CONCURRENCY", "0", "is not a count"),
            ("APIMACRO_SHARED_STATE_TIMEOUT", "0", "is not a number of seconds"),
            ("APIMACRO_SHARED_STATE_TIMEOUT", "soon", "is not a number of seconds"),
            // Issue 24: accepted, then a trap where each became an integer.
            ("APIMACRO_SHARED_STATE_TIMEOUT", "1e300", "is not a number of seconds"),
            ("APIMACRO_SHARED_STATE_TIMEOUT", "1000000001", "at most 1000000000"),
            ("APIMACRO_MAX_RATE", "1e-300", "is not a number of requests per second"),
            ("APIMACRO_MAX_RATE", "inf", "is not a number of requests per second"),
            ("APIMACRO_MAX_WAIT", "1e300", "is not a number of seconds"),
            ("APIMACRO_REQUEST_TIMEOUT", "1e300", "is not a number of seconds"),
        ])
    func bad(variable: String, value: String, message: String) {
        do {
            _ = try Settings(environment: [variable: value])
            Issue.record("\(variable)=\(value) was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.hasPrefix("\(variable): ") && text.contains(message), "\(text)")
            #expect(!text.contains("pa55-word-1"), "\(text)")
        }
    }
}
