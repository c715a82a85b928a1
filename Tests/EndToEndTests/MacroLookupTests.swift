import Foundation
import Testing

/// How `apimacro run NAME` finds a macro when the working directory, a plugin that did not
/// load or an overridden plugin is in the way (issue 27, frictions 2, 5, 8 and 14).
@Suite("finding a macro by name")
struct MacroLookupTests {
    /// The workspace's `macros/` folder, and a file and a folder in the working directory named
    /// after two of its macros.
    static let files = [
        "macros/out.py": "print('the macro out')\n",
        "macros/pages.py": "print('the macro pages')\n",
        "macros/stars.py": "print('the macro stars')\n",
        "out/result.json": "{}\n",
        "pages": "just notes\n",
    ]

    @Test("a name is a macro's first: a folder or a file of that name in the working directory does not hide it")
    func macroBeforeWorkingDirectory() async throws {
        let space = try Workspace(files: Self.files)
        defer { space.remove() }
        let out = try await space.run("run", "out")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "the macro out\n")
        let pages = try await space.run("run", "pages")
        #expect(pages.status == 0, "\(pages.stderr)")
        #expect(pages.stdout == "the macro pages\n")
        // A path is a path: ./pages is the notes file, run as Python.
        let file = try await space.run("run", "./pages")
        #expect(file.status == 1)
        #expect(file.stderr.contains("SyntaxError"), "\(file.stderr)")
    }

    @Test("a file with no .py and no macro of its name still runs; a folder and no macro says both")
    func workingDirectoryWhenNoMacro() async throws {
        let space = try Workspace(files: ["script": "print('the script')\n", "data/x.json": "{}\n"])
        defer { space.remove() }
        let script = try await space.run("run", "script")
        #expect(script.status == 0, "\(script.stderr)")
        #expect(script.stdout == "the script\n")
        let folder = try await space.run("run", "data")
        #expect(folder.status == 2)
        #expect(
            folder.stderr.hasPrefix(
                "apimacro: data is a folder, not a macro file, and no macro is named 'data' (looked in \(space.url.path)/macros, "
            ), "\(folder.stderr)")
        #expect(folder.stderr.filter { $0 == "\n" }.count == 1, "one line: \(folder.stderr)")
    }

    @Test("run stars.py with no such file but a macro stars: the message says to run it by name")
    func pySuffixSuggestsName() async throws {
        let space = try Workspace(files: Self.files)
        defer { space.remove() }
        let result = try await space.run("run", "stars.py")
        #expect(result.status == 2)
        #expect(
            result.stderr
                == "apimacro: no such macro file: stars.py; the macro 'stars' is \(space.url.path)/macros/stars.py: "
                + "run it by name, apimacro run stars\n")
        let unknown = try await space.run("run", "nothing.py")
        #expect(unknown.stderr == "apimacro: no such macro file: nothing.py\n")
    }

    @Test("a macro of a plugin that did not load: the message names the plugin and why it failed")
    func macroOfFailedPlugin() async throws {
        let space = try Workspace(files: [
            "plugins/broken/plugin.toml": "name = \"broken\"\nbase_url = \"https://example.com\"\n",
            "plugins/broken/macros/brokenmacro.py": "print('never')\n",
        ])
        defer { space.remove() }
        let plugins = space.url.appendingPathComponent("plugins")
        let result = try await space.run("run", "brokenmacro", environment: ["APIMACRO_PLUGINS": plugins.path])
        #expect(result.status == 2)
        #expect(
            result.stderr
                == "apimacro: the macro 'brokenmacro' is in the plugin 'broken' (\(plugins.path)/broken), which did not "
                + "load: \(plugins.path)/broken/plugin.toml: 2 problems:\n"
                + "    description: missing; write description = \"What this API gives\"\n"
                + "    endpoints: missing; declare at least one endpoint: [endpoints.NAME] with path = \"/things\"\n",
            "every problem of the manifest at once (issue 36): \(result.stderr)"
        )
    }

    @Test("a macro of an overridden plugin: the message names the plugin used instead and what to do")
    func macroOfOverriddenPlugin() async throws {
        let manifest = try String(
            contentsOf: ExampleReplayTests.repository.appendingPathComponent("plugins/openweather/plugin.toml"),
            encoding: .utf8)
        // The user's openweather, without the shipped one's macros/.
        let space = try Workspace(files: ["plugins/openweather/plugin.toml": manifest])
        defer { space.remove() }
        let plugins = space.url.appendingPathComponent("plugins")
        let result = try await space.run("run", "openweather-now", environment: ["APIMACRO_PLUGINS": plugins.path])
        let shipped = ExampleReplayTests.repository.appendingPathComponent("plugins/openweather").standardizedFileURL
        #expect(result.status == 2)
        #expect(
            result.stderr
                == "apimacro: the macro 'openweather-now' is in the plugin 'openweather' at \(shipped.path), which is not "
                + "used: the plugin of the same name at \(plugins.path)/openweather overrides it (run the macro by its "
                + "path, or copy it into \(plugins.path)/openweather/macros)\n")
    }
}
