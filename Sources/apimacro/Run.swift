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

    @Option(name: .long, help: ArgumentHelp("Write every HTTP exchange to a HAR 1.2 file, secrets redacted.", valueName: "file.har"), completion: .file(extensions: ["har"]))
    var record: String?

    @Option(name: .long, help: ArgumentHelp("Answer HTTP requests from a HAR file, with no network.", valueName: "file.har"), completion: .file(extensions: ["har"]))
    var replay: String?

    @Flag(name: .long, help: "No network: answer only from the HTTP cache or the replay file.")
    var offline = false

    @Flag(name: .long, help: "Neither read nor write the HTTP cache.")
    var noCache = false

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            throw ValidationError("--timeout needs a positive number of seconds, not \(timeout)")
        }
    }

    /// Flags over the environment over `config.toml`.
    func settings() throws -> Settings {
        Settings(
            format: format, timeout: timeout, verbose: verbose,
            record: record.map { URL(fileURLWithPath: $0) }, replay: replay.map { URL(fileURLWithPath: $0) },
            offline: offline, useCache: !noCache, environment: try Settings.environment())
    }

    /// These options as command-line arguments again, for child processes (`batch`).
    var forwardedArguments: [String] {
        var arguments: [String] = []
        if let format { arguments += ["--format", format.rawValue] }
        if let timeout { arguments += ["--timeout", String(timeout)] }
        if verbose { arguments.append("--verbose") }
        if let record { arguments += ["--record", record] }
        if let replay { arguments += ["--replay", replay] }
        if offline { arguments.append("--offline") }
        if noCache { arguments.append("--no-cache") }
        return arguments
    }
}

extension OutputFormat: ExpressibleByArgument {}

/// `apimacro run MACRO [ARGS...]`.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one macro: a path to a .py file, or a name looked up in ./macros/, $APIMACRO_HOME/macros/, then each plugin's macros/.",
        discussion: """
            Everything after MACRO goes to the macro (sys.argv[1:], apimacro.args).
            A macro that defines main(...) is called with arguments parsed from its
            signature; `apimacro run MACRO --help` shows them.
            """
    )

    @OptionGroup var options: MacroOptions

    /// Internal to `batch`: where this child writes its request counts when it ends.
    @Option(name: .customLong("stats-file"), help: .private)
    var statsFile: String?

    @Argument(help: "The macro, then its arguments.", completion: .file(extensions: ["py"]))
    var macro: String

    @Argument(parsing: .captureForPassthrough, help: "Arguments passed to the macro.")
    var arguments: [String] = []

    func run() throws {
        var settings = try options.settings()
        settings.statsFile = statsFile.map { URL(fileURLWithPath: $0) }
        var host: MacroHost?
        defer { MacroStats(host: host).write(to: settings.statsFile) }
        let file = try MacroLocator(settings: settings).locate(macro, relativeTo: settings.workingDirectory)
        let started = try MacroHost(settings: settings)
        host = started
        let code = try MacroRunner(host: started).run(file: file, arguments: arguments, name: macro)
        throw ExitCode(code)
    }
}
