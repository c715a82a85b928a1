import ArgumentParser
import MacroRuntime
import Platform

/// `apimacro state show | reset | export`: the state macros keep between runs.
struct State: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "The state macros keep between runs (apimacro.state, in $APIMACRO_HOME/state.db).",
        discussion: """
            MACRO is a macro's state name: a macro file's name without .py (or its path), \
            plugin/macro for a plugin's macro, or what --state-key named.
            """,
        subcommands: [Show.self, Reset.self, Export.self], defaultSubcommand: Show.self)

    /// `apimacro state show [MACRO [KEY]]`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract:
                "Each key of MACRO's state, its value and when it was committed; without MACRO, every macro with state."
        )

        @Argument(help: "The macro's state name.") var macro: String?
        @Argument(help: "Only this key.") var key: String?

        func run() throws {
            for line in try StateReport(settings: try Settings.load()).show(macro, key: key) {
                print(StateReport.shown(line))
            }
        }
    }

    /// `apimacro state export MACRO [KEY]`.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export", abstract: "MACRO's state as one JSON object (KEY's value alone with KEY).")

        @Argument(help: "The macro's state name.") var macro: String
        @Argument(help: "Only this key's value.") var key: String?

        func run() throws {
            print(try StateReport(settings: try Settings.load()).export(macro, key: key))
        }
    }

    /// `apimacro state reset MACRO [KEY]`.
    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset",
            abstract: "Forget MACRO's state (only KEY with KEY), waiting for a run of it to finish first.")

        @Argument(help: "The macro's state name.") var macro: String
        @Argument(help: "Only this key.") var key: String?

        func run() async throws {
            print(try await StateReport(settings: try Settings.load()).reset(macro, key: key))
        }
    }
}
