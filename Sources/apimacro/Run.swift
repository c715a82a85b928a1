import ArgumentParser
import Foundation
import MacroRuntime

/// Options shared by the commands that run macros.
struct MacroOptions: ParsableArguments {
    @Option(name: .long, help: "How apimacro.output prints rows: table, json, csv or ndjson. (default: table on a terminal, else json)")
    var format: OutputFormat?

    @Option(name: .long, help: ArgumentHelp("Stop the macro after this many seconds (exit 1).", valueName: "seconds"))
    var timeout: Double?

    @Flag(name: [.short, .long], help: "One line per HTTP exchange on stderr: method, redacted URL, status, ms.")
    var verbose = false

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            throw ValidationError("--timeout needs a positive number of seconds, not \(timeout)")
        }
    }

    func settings() -> Settings {
        Settings(format: format, timeout: timeout, verbose: verbose)
    }
}

extension OutputFormat: ExpressibleByArgument {}

/// `apimacro run MACRO [ARGS...]`.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one macro: a path to a .py file, or a name looked up in ./macros/ and $APIMACRO_HOME/macros/.",
        discussion: """
            Everything after MACRO goes to the macro (sys.argv[1:], apimacro.args).
            A macro that defines main(...) is called with arguments parsed from its
            signature; `apimacro run MACRO --help` shows them.
            """
    )

    @OptionGroup var options: MacroOptions

    @Argument(help: "The macro, then its arguments.", completion: .file(extensions: ["py"]))
    var macro: String

    @Argument(parsing: .captureForPassthrough, help: "Arguments passed to the macro.")
    var arguments: [String] = []

    func run() throws {
        let settings = options.settings()
        let file = try MacroLocator(settings: settings).locate(macro, relativeTo: settings.workingDirectory)
        let host = try MacroHost(settings: settings)
        let code = try MacroRunner(host: host).run(file: file, arguments: arguments, name: macro)
        throw ExitCode(code)
    }
}
