import ArgumentParser
import Foundation
import MacroRuntime

/// `apimacro plugins list | show NAME`.
struct Plugins: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Plugins (APIs added with a plugin.toml): list them, show their endpoints.",
        subcommands: [List.self, Show.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the plugins: name, endpoints, credentials present or not, description; and load errors.")

        func run() throws {
            print(PluginCatalog(settings: Settings(environment: try Settings.environment())).list())
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a plugin's settings and its endpoints with their parameters.")

        @Argument(help: "The plugin's name.")
        var name: String

        func run() throws {
            print(try PluginCatalog(settings: Settings(environment: try Settings.environment())).show(name))
        }
    }
}
