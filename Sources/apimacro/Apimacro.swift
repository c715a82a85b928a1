import ArgumentParser
import MacroRuntime
import Platform

/// The `apimacro` command: argument parsing and wiring only.
@main
struct Apimacro: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apimacro",
        abstract:
            "Script web APIs in Python: run macros against GitHub and other APIs with native HTTP, auth and errors.",
        discussion: """
            A macro is a Python file that uses the module `apimacro` (import apimacro).
            Exit codes: 0 success, 1 the macro raised or timed out, n for sys.exit(n),
            2 usage or configuration error, 130 interrupted (Ctrl-C),
            141 stdout closed by its reader (| head).
            Settings: apimacro help environment lists every variable, its config.toml key and default.
            Guide: README.md and docs/guide/ (installed in PREFIX/share/doc/apimacro/).
            """,
        version: VersionText.text,
        subcommands: [
            Run.self, Batch.self, Repl.self, Api.self, Macros.self, Login.self, Logout.self, Auth.self, Plugins.self,
            Cache.self, Stubs.self, State.self, ReportCommand.self, Mcp.self, Kernel.self,
        ]
    )

    /// Parses, runs, and turns every error into one message and an exit code.
    ///
    /// `run` stays on the main thread (Python delivers Ctrl-C and deadlines
    /// there); commands that wait on the network run as async commands.
    static func main() async {
        // `apimacro api --jq`'s filter runs in this binary started again: nothing else of it.
        if CommandLine.arguments.count > 1, CommandLine.arguments[1] == JQChild.argument {
            JQChild.main(Array(CommandLine.arguments.dropFirst(2)))
        }
        // The man page's ENVIRONMENT, FILES and EXAMPLES, for scripts/install.
        if CommandLine.arguments.dropFirst().first == ManualSections.argument {
            print(ManualSections.mdoc, terminator: "")
            terminate(0)
        }
        ProcessEnvironment.prepare()  // before any thread starts: it edits the environment
        let code: Int32
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            // `apimacro help environment`, as `gh help environment`: every setting, its key and default.
            if arguments == ["help", "environment"] {
                print(SettingsTable.helpText, terminator: "")
                terminate(0)
            }
            if let script = try Run.scriptArguments(arguments) {
                try Run.run(
                    settings: MacroOptions.parse(script.options).settings(), statsFile: script.statsFile,
                    source: script.source, name: script.name, arguments: script.arguments)
            } else if let plain = Run.plainArguments(arguments) {
                try Run.run(
                    settings: MacroOptions.settings(flags: plain.flags), forwarded: plain.flags.sorted(),
                    statsFile: plain.statsFile, macro: plain.macro, arguments: plain.arguments)
            } else {
                try checkCommandName(arguments)
                var command = try parseAsRoot(joiningNegativeValues(arguments))
                if var asyncCommand = command as? AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
            code = 0
        } catch {
            code = ErrorReport.exitCode(for: error, command: self)
        }
        terminate(code)
    }
}

extension Apimacro {
    /// The commands, as typed.
    static var commandNames: [String] {
        configuration.subcommands.map { $0._commandName } + ["help"]
    }

    /// A first word that is no command is a usage error naming the command meant
    /// (`apimacro rnu x.py`: "did you mean 'run'?"), or listing the commands.
    static func checkCommandName(_ arguments: [String]) throws {
        guard let first = arguments.first, !first.hasPrefix("-"), !commandNames.contains(first) else {
            try checkSubcommandName(arguments)
            return
        }
        if let guess = NearMiss.suggestion(for: first, among: commandNames) {
            throw ValidationError("unknown command '\(first)'; did you mean '\(guess)'?")
        }
        throw ValidationError("unknown command '\(first)'; the commands are \(commandNames.joined(separator: ", "))")
    }
}

extension Apimacro {
    /// A second word that is none of its command's subcommands (`cache clearr`, `plugins shw`,
    /// `macros lst`) is a usage error naming the one meant, and that command's help.
    static func checkSubcommandName(_ arguments: [String]) throws {
        guard arguments.count >= 2, !arguments[1].hasPrefix("-"),
            let command = configuration.subcommands.first(where: { $0._commandName == arguments[0] })
        else { return }
        let words = command.configuration.subcommands.map { $0._commandName }
        // Only commands with subcommands are checked: none takes an argument of its own there.
        guard !words.isEmpty, !words.contains(arguments[1]) else { return }
        let typed = "\(arguments[0]) \(arguments[1])"
        let help = "(see 'apimacro \(arguments[0]) --help')"
        if let guess = NearMiss.suggestion(for: arguments[1], among: words) {
            throw ExitReport.usage("unknown command '\(typed)'; did you mean '\(arguments[0]) \(guess)'? \(help)")
        }
        throw ExitReport.usage(
            "unknown command '\(typed)'; the commands of \(arguments[0]) are \(words.joined(separator: ", ")) \(help)")
    }
}

extension Apimacro {
    /// The options that take a number, which may be negative.
    static let numericOptions: Set<String> = ["--timeout", "--request-timeout", "-j", "--jobs", "--listen"]

    /// `--timeout -1` as `--timeout=-1` (before a `--`): swift-argument-parser reads a `-1` after an
    /// option as another option and reports a missing value, where the user gave a bad one, which
    /// the settings' checks then name ("--timeout: -1 is not a number of seconds; …").
    static func joiningNegativeValues(_ arguments: [String]) -> [String] {
        var joined: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                joined += arguments[index...]
                break
            }
            if numericOptions.contains(argument), index + 1 < arguments.count,
                arguments[index + 1].hasPrefix("-"), Double(arguments[index + 1]) != nil
            {
                joined.append("\(argument)=\(arguments[index + 1])")
                index += 2
                continue
            }
            joined.append(argument)
            index += 1
        }
        return joined
    }
}

/// `apimacro --version`: apimacro's version and the Python it embeds (read
/// from the linked libpython without starting it: every command builds this).
enum VersionText {
    static var text: String {
        "apimacro \(MacroHostInfo.version)\nembedded \(MacroHostInfo.python)"
    }
}

/// Ends the process with `code` (the C library's `exit`, which `ParsableCommand.exit` hides
/// inside the command's type).
private func terminate(_ code: Int32) -> Never {
    exit(code)
}
