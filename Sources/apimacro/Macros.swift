import ArgumentParser
import MacroRuntime
import Platform
import WebAPI

/// `apimacro macros list`.
struct Macros: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "macros",
        abstract: "Macros found on the macro path (./macros/, $APIMACRO_HOME/macros/, then each plugin's macros/).",
        subcommands: [List.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the macros with their one-line help (they are not run).")

        func run() throws {
            let settings = try Settings.load()
            let entries = try MacroCatalog(settings: settings).entries()
            guard !entries.isEmpty else {
                let folders = MacroLocator(settings: settings).searchPath.map(\.path).joined(separator: ", ")
                print("No macros found in \(folders).")
                return
            }
            let width = entries.map(\.name.count).max() ?? 0
            for entry in entries {
                let name = entry.name.padded(toLength: width)
                let help = entry.shadowed ? "(shadowed by an earlier folder) \(entry.help)" : entry.help
                print(MacroCatalog.shown("\(name)  \(help)".trimmingWhitespace() + "  [\(entry.path)]"))
            }
        }
    }
}
