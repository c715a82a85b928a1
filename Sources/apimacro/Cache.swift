import ArgumentParser
import MacroRuntime
import Platform

/// `apimacro cache info | clear` (`apimacro cache` alone is `cache info`, as `plugins` is `plugins list`).
struct Cache: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "The HTTP cache under $XDG_CACHE_HOME/apimacro: what it holds, or empty it.",
        subcommands: [Info.self, Clear.self], defaultSubcommand: Info.self)

    /// `apimacro cache info`.
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Where the cache is, how many responses and bytes it holds, and how old they are.")

        func run() throws {
            let report = try CacheReport(settings: try Settings.load())
            for line in try report.info() { print(line) }
        }
    }

    /// `apimacro cache clear`.
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Remove every stored response.")

        func run() throws {
            print(try CacheReport(settings: try Settings.load()).clear())
        }
    }
}
