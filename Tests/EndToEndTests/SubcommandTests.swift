import Foundation
import Testing

/// Subcommands a new user meets (issue 27, frictions 7 and 14): an error points to the help of
/// the command that failed, a negative number is a bad value and not a missing one, and a
/// command group given alone does what `plugins` and `macros` do: its everyday subcommand.
@Suite("subcommands: errors point to their own help, groups run their everyday subcommand")
struct SubcommandTests {
    @Test(
        "a usage error names the failing command's --help",
        arguments: [
            (["run", "--bogus", "x.py"], "unknown option '--bogus' (see 'apimacro run --help')"),
            (["login"], "missing expected argument '<name>' (see 'apimacro login --help')"),
            (["batch", "-j", "0", "x.py"], "-j needs at least 1, not 0 (see 'apimacro batch --help')"),
            (["cache", "clear", "extra"], "unexpected argument 'extra' (see 'apimacro cache clear --help')"),
            (["rnu"], "unknown command 'rnu'; did you mean 'run'? (see 'apimacro --help')"),
        ])
    func errorPointsToItsHelp(arguments: [String], line: String) async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Binary.run(arguments, in: space.url)
        #expect(result.status == 2)
        #expect(result.stderr == "apimacro: \(line)\n")
    }

    @Test(
        "a negative number is a bad value, named as such, wherever the option stands",
        arguments: [
            (["run", "--timeout", "-1", "x.py"], "--timeout: -1 is not a number of seconds"),
            (["run", "x.py", "--timeout", "-1"], "--timeout: -1 is not a number of seconds"),
            (["run", "--request-timeout", "-2.5", "x.py"], "--request-timeout: -2.5 is not a number of seconds"),
            (["batch", "-j", "-2", "x.py"], "-j needs at least 1, not -2"),
            (["login", "github", "--listen", "-1"], "--listen needs a port from 0 to 65535"),
        ])
    func negativeValue(arguments: [String], message: String) async throws {
        let space = try Workspace(files: ["x.py": pythonTouch("ran")])
        defer { space.remove() }
        let result = try await Binary.run(arguments, in: space.url)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("apimacro: \(message)"), "\(result.stderr)")
        #expect(!result.stderr.lowercased().contains("missing value"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran").path))
    }

    @Test("a macro's own option keeps its negative value")
    func macroNegativeValue() async throws {
        let space = try Workspace(files: ["m.py": "def main(*, offset: int = 0):\n    print(offset)\n"])
        defer { space.remove() }
        let result = try await space.run("run", "m.py", "--offset", "-3")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "-3\n")
    }

    @Test("`auth` alone is `auth status` and `cache` alone is `cache info`, as `plugins` is `plugins list`")
    func groupsRunTheirEverydaySubcommand() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let environment = ["XDG_CACHE_HOME": space.url.appendingPathComponent("cache").path]
        for (group, everyday) in [("auth", "status"), ("cache", "info"), ("plugins", "list"), ("macros", "list")] {
            let alone = try await Binary.run([group], in: space.url, environment: environment)
            let spelled = try await Binary.run([group, everyday], in: space.url, environment: environment)
            #expect(alone.status == spelled.status, "\(group): \(alone.stderr)")
            #expect(alone.stdout == spelled.stdout, "\(group)")
            #expect(!alone.stdout.contains("USAGE:"), "\(group): \(alone.stdout)")
            // The group's help is still there, naming its default.
            let help = try await Binary.run([group, "--help"], in: space.url, environment: environment)
            #expect(help.status == 0)
            #expect(help.stdout.contains("\(everyday) (default)"), "\(group): \(help.stdout)")
        }
    }

    @Test("the REPL's :plugins lines its descriptions up, as `plugins list` does")
    func replPluginsAligned() async throws {
        let space = try Workspace(files: [
            "plugins/a/plugin.toml": Self.manifest("a", "short name"),
            "plugins/longer_name/plugin.toml": Self.manifest("longer_name", "long name"),
        ])
        defer { space.remove() }
        let result = try await space.run(
            "repl", environment: ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path],
            stdin: ":plugins\n")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let a = try #require(lines.first { $0.hasPrefix("a ") })
        let long = try #require(lines.first { $0.hasPrefix("longer_name ") })
        #expect(a.range(of: "short name")?.lowerBound.utf16Offset(in: a) == 13, "\(result.stdout)")
        #expect(long.range(of: "long name")?.lowerBound.utf16Offset(in: long) == 13, "\(result.stdout)")
    }

    /// A plugin manifest with one endpoint.
    static func manifest(_ name: String, _ description: String) -> String {
        """
        name = "\(name)"
        description = "\(description)"
        base_url = "https://\(name).example"

        [endpoints.thing]
        path = "/thing"
        """
    }
}
