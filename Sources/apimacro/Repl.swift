import ArgumentParser
import MacroRuntime
import Platform

/// `apimacro repl`.
struct Repl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract:
            "Interactive Python with apimacro, \(MacroHostInfo.clients.joined(separator: ", ")) and the plugins' clients imported.",
        discussion: """
            Line editing, history in $APIMACRO_HOME/history and tab completion on a terminal. \
            Commands: :run [OPTIONS] MACRO [ARGS] (with run's options, in a process of its own), \
            :macros, :plugins, :login NAME, \
            :format table|json|csv|ndjson, :verbose on|off, :reload (re-imports changed modules), :help, :quit. \
            Ctrl-C cancels the running call; Ctrl-D leaves.

            With stdin not a terminal, lines are read from it with no prompt \
            (apimacro repl < session.txt); the exit code is then 1 if any line raised.
            """)

    @OptionGroup var options: MacroOptions

    func run() throws {
        if options.output != nil || options.key != nil {
            throw ValidationError("--output and --key are run's; in the REPL, use apimacro.output(rows, to=...)")
        }
        var settings = try options.settings()
        settings.switchableVerbose = true
        let host = try MacroHost(settings: settings)
        // What a `:run` with run's options hands its child: the session's options, but the
        // session's --record file (its own), and --format and -v (:format and :verbose say those).
        var session = options
        session.exchange.record = nil
        session.format = nil
        session.exchange.verbose = false
        let repl = MacroRepl(host: host, childOptions: session.forwardedArguments) { [settings] words in
            Self.childMacro(words, settings: settings)
        }
        throw ExitCode(try repl.run())
    }

    /// The macro of a `:run` line that takes `run`'s options (before the macro's name, or after
    /// it where its `main()` takes no option of that spelling), which then runs in a child
    /// process as `apimacro run` would; nil for a line the session runs itself.
    static func childMacro(_ words: [String], settings: Settings) -> String? {
        guard let first = words.first else { return nil }
        if first.hasPrefix("-") {
            // run's options first (an unknown one is refused by `apimacro run` itself).
            return MacroOptions.split(words, macroFlags: []).macro.first { !$0.hasPrefix("-") } ?? first
        }
        let rest = Array(words.dropFirst())
        let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        guard MacroOptions.mentionsRunOption(rest),
            let file = try? MacroLocator(settings: settings).locate(first, relativeTo: directory),
            let flags = try? MacroSignature.optionFlags(of: file),
            !MacroOptions.split(rest, macroFlags: flags).own.isEmpty
        else { return nil }
        return first
    }
}
