import ArgumentParser
import MacroRuntime
import Platform
import PluginHost

/// `apimacro plugins list | show NAME | new NAME --from-openapi FILE_OR_URL`.
struct Plugins: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "Plugins (APIs added with a plugin.toml): list, show, make, install, upgrade and remove them.",
        subcommands: [List.self, Show.self, New.self, Install.self, Upgrade.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the plugins: name, endpoints, credentials present or not, description; and load errors.",
            discussion:
                "Exit code 1 when a plugin failed to load or its plugin.py does not compile (the others are still listed and usable)."
        )

        func run() throws {
            let settings = try Settings.load()
            let catalog = PluginCatalog(settings: settings)
            print(catalog.list())
            if let installed = PluginInstaller(settings: settings).listingText() {
                print("\nInstalled with plugins install:\n" + installed)
            }
            let python = catalog.pythonProblems()
            if !python.isEmpty {
                print("\nplugin.py that does not compile (its endpoints work; its functions fail when used):")
                print(python.joined(separator: "\n"))
            }
            // The others are listed and work; the exit code tells a script that one did not load.
            if !catalog.registry.failures.isEmpty || !python.isEmpty { throw ExitCode(ExitReport.failure().exitCode) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a plugin's settings and its endpoints with their parameters.")

        @OptionGroup var plugin: PluginName

        func run() throws {
            print(try PluginCatalog(settings: try Settings.load()).show(plugin.name))
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install",
            abstract: "Install a plugin from a git repository (OWNER/REPO on GitHub, or a git URL).",
            discussion: """
                The repository holds a plugin folder at its root (plugin.toml, and plugin.py, macros/ if any). \
                It is cloned into $APIMACRO_HOME/plugins/NAME, its manifest checked, and its self-test replayed \
                when it ships one (selftest.py with cassettes/selftest.har); a failed install leaves nothing \
                behind. A plugin's plugin.py and macros run with your rights when you use them: install only \
                what you would run.
                """)

        @Argument(help: "OWNER/REPO (on GitHub, or --host), or a git URL (https://, git://, ssh://, a path).")
        var source: String

        @Option(help: "Check out this tag, branch or commit, and keep it there (upgrade leaves it).")
        var pin: String?

        @Option(help: "The host of OWNER/REPO (default github.com).")
        var host: String?

        func run() throws {
            print(try PluginInstaller(settings: try Settings.load()).install(source, pin: pin, host: host))
        }
    }

    struct Upgrade: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "upgrade",
            abstract: "Upgrade an installed plugin (or --all) to its repository's latest commit; pinned ones stay.")

        @Argument(help: "The plugin's name.", completion: .custom(Completions.pluginNames))
        var name: String?

        @Flag(help: "Every plugin installed with plugins install.")
        var all = false

        func run() throws {
            let lines = try PluginInstaller(settings: try Settings.load()).upgrade(name, all: all)
            print(lines.joined(separator: "\n"))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a plugin from $APIMACRO_HOME/plugins.")

        @OptionGroup var plugin: PluginName

        func run() throws {
            print(try PluginInstaller(settings: try Settings.load()).remove(plugin.name))
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Make a plugin from an OpenAPI 3.0 or 3.1 document (JSON or YAML, a file or an http(s) URL).",
            discussion: """
                Writes $APIMACRO_HOME/plugins/NAME/ (or --dir DIR): plugin.toml with the base URL from \
                servers, an endpoint per operation (its operationId in snake_case), path and query \
                parameters with their types, the auth its securitySchemes name, the paging most list \
                operations use and each list's items path; NAME.pyi, a type stub of the client; and \
                macros/NAME-smoke.py. What plugin.toml cannot express (multipart uploads, callbacks, \
                cookie and header parameters, nested bodies, a second auth) is listed and left out. \
                The manifest is loaded before the folder is kept.

                Example: apimacro plugins new petstore --from-openapi openapi.yaml --base-url https://petstore3.swagger.io/api/v3
                """)

        @Argument(help: "The plugin's name: lowercase letters, digits and _, starting with a letter.")
        var name: String

        @Option(
            name: .customLong("from-openapi"),
            help: ArgumentHelp(
                "The OpenAPI document: a file, or an http(s) URL fetched with apimacro's transport.",
                valueName: "FILE_OR_URL"),
            completion: .file(extensions: ["yaml", "yml", "json"]))
        var source: String

        @Option(
            help: ArgumentHelp("The plugin's folder (default: $APIMACRO_HOME/plugins/NAME).", valueName: "DIR"),
            completion: .directory)
        var dir: String?

        @Option(
            name: .customLong("base-url"),
            help: ArgumentHelp(
                "The API's base URL, when the document's server URL is relative or not the one to use.",
                valueName: "URL"))
        var baseURL: String?

        @Flag(help: "Replace the plugin's folder when it exists.")
        var force = false

        func run() throws {
            let settings = try Settings.load()
            let folder = dir.map { URL(fileURLWithPath: $0, relativeTo: settings.workingDirectory) }
            print(
                try PluginScaffold(settings: settings).make(
                    name: name, source: source, folder: folder, baseURL: baseURL, force: force))
        }
    }
}

/// The plugin `plugins show` and `plugins remove` act on, completed from the loaded plugins.
struct PluginName: ParsableArguments {
    @Argument(help: "The plugin's name.", completion: .custom(Completions.pluginNames))
    var name: String
}
