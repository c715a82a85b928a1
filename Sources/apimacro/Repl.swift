import ArgumentParser
import Foundation
import MacroRuntime

/// `apimacro repl`.
struct Repl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract:
            "Interactive Python with apimacro, \(MacroHostInfo.clients.joined(separator: ", ")) and the plugins' clients imported.",
        discussion: """
            Line editing, history in $APIMACRO_HOME/history and tab completion on a terminal. \
            Commands: :run MACRO [ARGS], :macros, :plugins, :login NAME, \
            :format table|json|csv|ndjson, :verbose on|off, :help, :quit. \
            Ctrl-C cancels the running call; Ctrl-D leaves.

            With stdin not a terminal, lines are read from it with no prompt \
            (apimacro repl < session.txt); the exit code is then 1 if any line raised.
            """)

    @OptionGroup var options: MacroOptions

    func run() throws {
        var settings = try options.settings()
        settings.switchableVerbose = true
        let host = try MacroHost(settings: settings)
        throw ExitCode(try MacroRepl(host: host).run())
    }
}
