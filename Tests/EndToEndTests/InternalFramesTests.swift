import Foundation
import TestSupport
import Testing

/// Issue 27, friction 9: tracebacks of client and plugin calls showed apimacro's own
/// `<_apimacro>` frames (in chained exceptions, the REPL, pytest), and `plugins list/show` did
/// not check that a plugin's plugin.py compiles.
@Suite("no apimacro frames in tracebacks; plugin.py is compiled by plugins list and show")
struct InternalFramesTests {
    /// A plugin `demo` on the test server whose endpoint answers 404, with a plugin.py helper.
    static func workspace(server: TestServer, pluginPython: String) throws -> Workspace {
        try Workspace(files: [
            "plugins/demo/plugin.toml": """
            name = "demo"
            description = "A plugin for the traceback tests"
            base_url = "\(server.baseURL)"

            [endpoints.missing]
            path = "/status/404"
            """,
            "plugins/demo/plugin.py": pluginPython,
            "chained.py": """
            import apimacro

            def main():
                demo = apimacro.client("demo")
                try:
                    demo.lookup()
                except apimacro.NotFound as error:
                    raise RuntimeError("wrapped") from error
            """,
            "tests/test_demo.py": """
            import apimacro

            def test_demo():
                apimacro.client("demo").missing()
            """,
        ])
    }

    static let helper = "def lookup(client):\n    return client.missing()\n"

    @Test("apimacro run, the REPL and pytest show the macro's and plugin.py's frames, not apimacro's")
    func noInternalFrames() async throws {
        let server = try await TestServer.start()
        let space = try Self.workspace(server: server, pluginPython: Self.helper)
        defer { space.remove() }
        let environment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]

        let run = try await space.run("run", "chained.py", environment: environment)
        #expect(run.status == 1)
        #expect(run.stderr.contains("plugins/demo/plugin.py\", line 2, in lookup"), "\(run.stderr)")
        #expect(run.stderr.contains("The above exception was the direct cause"), "\(run.stderr)")
        #expect(run.stderr.hasSuffix("RuntimeError: wrapped\n"), "\(run.stderr)")
        #expect(!run.stderr.contains("<_apimacro>"), "\(run.stderr)")

        let repl = try await space.run(
            "repl", environment: environment, stdin: "demo = apimacro.client('demo')\ndemo.missing()\n")
        #expect(repl.status == 1)
        #expect(repl.stderr.contains("apimacro.NotFound"), "\(repl.stderr)")
        #expect(!repl.stderr.contains("<_apimacro>"), "\(repl.stderr)")

        let venv = try await PythonTools.virtualEnvironment()
        var pytestEnvironment = environment
        pytestEnvironment["VIRTUAL_ENV"] = venv.path
        let pytest = try await space.run(
            "run", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/", environment: pytestEnvironment)
        #expect(pytest.status == 1, "\(pytest.stdout)\(pytest.stderr)")
        #expect(pytest.stdout.contains("apimacro.NotFound"), "\(pytest.stdout)")
        #expect(!pytest.stdout.contains("<_apimacro>"), "\(pytest.stdout)")
        try await server.shutdown()
    }

    @Test("plugins list and show say when plugin.py does not compile (without running it)")
    func pluginPythonCompiles() async throws {
        let server = try await TestServer.start()
        let space = try Self.workspace(
            server: server, pluginPython: "open('ran', 'w').close()\ndef lookup(client:\n    return 1\n")
        defer { space.remove() }
        let environment = ["APIMACRO_PLUGINS": space.url.appendingPathComponent("plugins").path]
        let list = try await space.run("plugins", "list", environment: environment)
        #expect(list.status == 1)
        #expect(list.stdout.contains("plugin.py that does not compile"), "\(list.stdout)")
        #expect(
            list.stdout.contains("demo: \(space.url.path)/plugins/demo/plugin.py does not compile: SyntaxError:"),
            "\(list.stdout)")
        let show = try await space.run("plugins", "show", "demo", environment: environment)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("(its public functions are methods too) -- "), "\(show.stdout)")
        #expect(show.stdout.contains("does not compile: SyntaxError:"), "\(show.stdout)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran").path))

        try space.write("plugins/demo/plugin.py", Self.helper)
        let fixed = try await space.run("plugins", "list", environment: environment)
        #expect(!fixed.stdout.contains("does not compile"), "\(fixed.stdout)")
        try await server.shutdown()
    }
}
