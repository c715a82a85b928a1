import Foundation
import TestSupport
import Testing

/// The REPL's `:run` with `run`'s options and its `:login` with `login`'s clients (issue 27,
/// friction 6).
@Suite("the REPL's :run options and :login names", .serialized)
struct ReplRunTests {
    /// github-profile's cassette and what it printed, in csv.
    static var profile: (macro: String, cassette: String, output: String) {
        get throws {
            let cassette = ExampleTests.examples.appendingPathComponent("cassettes/github-profile.har").path
            let output = try String(contentsOfFile: cassette.dropLast(4) + ".out", encoding: .utf8)
            return (ExampleTests.examples.appendingPathComponent("github-profile.py").path, cassette, output)
        }
    }

    @Test(":run takes run's options, before the macro or after it, on top of the session's :format")
    func runWithOptions() async throws {
        let (macro, cassette, output) = try Self.profile
        let space = try Workspace(files: ["macros/fails.py": "raise SystemExit(4)\n"])
        defer { space.remove() }
        let session = """
            :run --format csv --replay \(cassette) \(macro) --login octocat
            :run \(macro) --login octocat --replay \(cassette) --format csv
            :format csv
            :run --replay \(cassette) \(macro) --login octocat
            :run --offline fails
            print('the session goes on')
            """
        let result = try await space.run("repl", stdin: session + "\n")
        // The last :run failed (exit 4), so the session's status is 1.
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stdout
                == output + output + "apimacro.output prints csv from now on.\n" + output + "the session goes on\n",
            "\(result.stdout)")
        #expect(result.stderr == "[fails exited 4]\n", "\(result.stderr)")
        #expect(!result.stderr.contains("no macro named '--"), "\(result.stderr)")
    }

    @Test(":login takes the names apimacro login takes, plugins included; a wrong one reads no line")
    func loginNames() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let outside = try await space.run("login", "nosuch")
        let names = try #require(
            outside.stderr.components(separatedBy: "apimacro can log in to ").last?.prefix { $0 != ";" && $0 != "\n" },
            "\(outside.stderr)")
        #expect(names.contains("foursquare") && names.contains("openweather"), "\(names)")
        let result = try await space.run(
            "repl", stdin: ":login nosuch\nprint('next line ran')\n:login openweather\now-test-key\n")
        #expect(
            result.stderr.contains("apimacro: no login for 'nosuch': :login takes \(names), as apimacro login does"),
            "\(result.stderr)")
        #expect(result.stdout.hasPrefix("next line ran\n"), "\(result.stdout)")
        let status = try await space.run("auth", "status")
        #expect(
            status.stdout.split(separator: "\n").contains {
                $0.hasPrefix("openweather ") && $0.contains("stored login")
            },
            "\(status.stdout)")
        #expect(!status.stdout.contains("ow-test-key"))
    }

    @Test(":login of a plugin's OAuth login on a terminal: the URL, the pasted address, the stored token")
    func pluginOAuthLogin() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let terminal = try await ReplTests.start(space, environment: ["APIMACRO_FOURSQUARE_CLIENT_ID": "fsq-app"])
        defer { terminal.close() }
        let start = terminal.count
        terminal.type(":login foursquare\r")
        _ = try await terminal.expect("sent to: ", after: start)
        let shown = String(decoding: Array(terminal.output.utf8)[start...], as: UTF8.self)
        #expect(shown.contains("https://foursquare.com/oauth2/authenticate?client_id=fsq-app&"), "\(shown)")
        let state = try #require(
            shown.components(separatedBy: "state=").dropFirst().first?.prefix {
                $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_"
            }, "\(shown)")
        let done = try await ReplTests.enter(
            "http://127.0.0.1:8765/callback#access_token=fsq-token-1&state=\(state)", on: terminal)
        #expect(done.contains("foursquare: logged in; the token is stored in "), "\(done)")
        terminal.type(":quit\r")
        #expect(try await terminal.waitForExit() == 0)
        let status = try await space.run("auth", "status")
        #expect(status.stdout.contains("foursquare   credentials from stored login"), "\(status.stdout)")
        let history = try String(
            contentsOf: space.url.appendingPathComponent(".config/apimacro/history"), encoding: .utf8)
        #expect(!history.contains("fsq-token-1"), "the pasted address stays out of the history: \(history)")
    }
}
