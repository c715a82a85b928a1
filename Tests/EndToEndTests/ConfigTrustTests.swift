import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 24, item 11: `config.toml` and `APIMACRO_HOME` were trusted blindly.
///
/// A config.toml holding a secret is now held to the rule of credentials.json (owner-only,
/// else refused with the `chmod` to run); one another user could change, and a home another
/// user could write to, are refused whatever they hold. Real files, real modes and owners (the
/// tests run as root, which may give a file to `nobody`).
@Suite("config.toml and APIMACRO_HOME: owner and mode", .serialized)
struct ConfigTrustTests {
    static let token = "ghp_configtoml_secret_2401"
    static let nobody: uid_t = 65_534

    func chmod(_ url: URL, _ mode: mode_t) { #expect(Glibc.chmod(url.path, mode) == 0) }

    func chown(_ url: URL, _ user: uid_t) { #expect(Glibc.chown(url.path, user, gid_t(user)) == 0) }

    /// A refusal: exit 2, one line on stderr holding `parts`, nothing run, no secret shown.
    func expectRefused(_ result: RunResult, _ parts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 2, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "nothing ran: \(result.stdout)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.filter { $0 == "\n" }.count == 1, "one line: \(result.stderr)", sourceLocation: sourceLocation
        )
        for part in parts {
            #expect(result.stderr.contains(part), "\(part) in \(result.stderr)", sourceLocation: sourceLocation)
        }
        #expect(
            !result.stderr.contains(Self.token) && !result.stderr.contains("pw-2401"), sourceLocation: sourceLocation)
    }

    @Test("a config.toml holding a secret that others can read is refused with the chmod to run; at 0600 it is used")
    func secretReadableByOthers() async throws {
        let space = try Workspace(files: [
            "hello.py": "print('hi')\n",
            "home/config.toml": "[github]\ntoken = \"\(Self.token)\"\nurl = \"http://127.0.0.1:9\"\n",
        ])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let config = home.appendingPathComponent("config.toml")
        let environment = ["APIMACRO_HOME": home.path]
        for mode: mode_t in [0o644, 0o640, 0o604] {
            chmod(config, mode)
            let result = try await space.run("run", "hello.py", environment: environment)
            expectRefused(
                result,
                ["refusing to read \(config.path): it holds a secret (github.token)", "run: chmod 600 \(config.path)"])
        }
        chmod(config, 0o600)
        let used = try await space.run("run", "hello.py", environment: environment)
        #expect(used.status == 0 && used.stdout == "hi\n", "\(used.stderr)")

        // Every kind of secret a config.toml can hold, and a file holding none, at 0644.
        for (text, key) in [
            ("[shared]\nredis = \"redis://:pw-2401@127.0.0.1:9/0\"\n", "shared.redis"),
            ("https_proxy = \"http://user:pw-2401@127.0.0.1:9\"\n", "https_proxy"),
            ("[shortener]\nkey = \"pw-2401\"\n", "shortener.key"),
            ("[openweather]\nappid = \"pw-2401\"\n", "openweather.appid"),
        ] {
            try space.write("home/config.toml", text)
            chmod(config, 0o644)
            expectRefused(try await space.run("run", "hello.py", environment: environment), ["(\(key))", "chmod 600"])
        }
        try space.write("home/config.toml", "format = \"json\"\n[github]\nurl = \"http://127.0.0.1:9\"\n")
        chmod(config, 0o644)
        let plain = try await space.run("run", "hello.py", environment: environment)
        #expect(plain.status == 0 && plain.stdout == "hi\n", "a file without secrets may be readable: \(plain.stderr)")
    }

    @Test("a config.toml others can write, or another user's, is refused even without a secret")
    func changeableByOthers() async throws {
        let space = try Workspace(files: ["hello.py": "print('hi')\n", "home/config.toml": "format = \"json\"\n"])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        let config = home.appendingPathComponent("config.toml")
        let environment = ["APIMACRO_HOME": home.path]
        chmod(config, 0o666)
        expectRefused(
            try await space.run("run", "hello.py", environment: environment),
            ["refusing to read \(config.path): others can write to it (mode 0666); run: chmod go-w \(config.path)"])
        chmod(config, 0o644)
        chown(config, Self.nobody)
        expectRefused(
            try await space.run("run", "hello.py", environment: environment),
            ["refusing to read \(config.path): it belongs to another user (uid 65534)"])
    }

    @Test("an APIMACRO_HOME another user owns or may write to is refused, so are the folders above it")
    func home() async throws {
        let space = try Workspace(files: ["hello.py": "print('hi')\n"])
        defer { space.remove() }
        let home = space.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let environment = ["APIMACRO_HOME": home.path]
        let start = "refusing to use APIMACRO_HOME \(home.path), where another user could put a config.toml"

        chmod(home, 0o777)
        expectRefused(
            try await space.run("run", "hello.py", environment: environment),
            [start, "others can write to it (mode 0777); run: chmod go-w \(home.path)"])
        chmod(home, 0o1777)  // the sticky bit does not help the home itself: others may still add files
        expectRefused(try await space.run("run", "hello.py", environment: environment), [start])
        chmod(home, 0o755)
        chown(home, Self.nobody)
        expectRefused(
            try await space.run("auth", "status", environment: environment),
            [start, "it belongs to another user (uid 65534)"])
        chown(home, 0)

        // A folder above that others may write to (without the sticky bit) could swap the home.
        let shared = space.url.appendingPathComponent("shared")
        let inner = shared.appendingPathComponent("apimacro")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        chmod(shared, 0o777)
        expectRefused(
            try await space.run("run", "hello.py", environment: ["APIMACRO_HOME": inner.path]),
            ["the folder above it, \(shared.path): others can write to it (mode 0777)"])
        // With the sticky bit (as /tmp) it cannot: accepted, and so is a home not made yet.
        chmod(shared, 0o1777)
        for folder in [inner, shared.appendingPathComponent("not-yet")] {
            let result = try await space.run("run", "hello.py", environment: ["APIMACRO_HOME": folder.path])
            #expect(result.status == 0 && result.stdout == "hi\n", "\(folder.path): \(result.stderr)")
        }

        // The default home ($HOME/.config/apimacro) is held to the same rule.
        let defaultHome = space.url.appendingPathComponent(".config/apimacro")
        try FileManager.default.createDirectory(at: defaultHome, withIntermediateDirectories: true)
        chmod(defaultHome, 0o775)
        expectRefused(
            try await space.run("run", "hello.py"),
            ["refusing to use APIMACRO_HOME \(defaultHome.path)", "(mode 0775)"])
        chmod(defaultHome, 0o700)
        let fine = try await space.run("run", "hello.py")
        #expect(fine.status == 0 && fine.stdout == "hi\n", "\(fine.stderr)")
    }
}
