import ArgumentParser
import Foundation
import MacroRuntime

/// `apimacro plugins list | show NAME`.
struct Plugins: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "Plugins (APIs added with a plugin.toml): list them, show their endpoints.",
        subcommands: [List.self, Show.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the plugins: name, endpoints, credentials present or not, description; and load errors.",
            discussion:
                "Exit code 1 when a plugin failed to load or its plugin.py does not compile (the others are still listed and usable)."
        )

        func run() throws {
            let catalog = PluginCatalog(settings: try Settings.load())
            print(catalog.list())
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

        @Argument(help: "The plugin's name.", completion: .custom(Completions.pluginNames))
        var name: String

        func run() throws {
            print(try PluginCatalog(settings: try Settings.load()).show(name))
        }
    }
}
