import ArgumentParser
import Batch
import MacroRuntime
import Platform

/// The options of every command that makes HTTP requests (`run`, `batch`, `repl`, `api`): the
/// request timeout, `-v`, recording and replaying, offline, the cache.
struct ExchangeOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Give up on an HTTP request after this many seconds (default 30).", valueName: "seconds"))
    var requestTimeout: Double?

    @Flag(
        name: [.customShort("v"), .customLong("verbose")],
        help:
            "One line per HTTP exchange on stderr: method, redacted URL, status, ms; -vv adds each request and response in full (headers, body up to 4 KiB), redacted."
    )
    var verbosity: Int

    /// `-v` (or more).
    var verbose: Bool {
        get { verbosity > 0 }
        set { verbosity = newValue ? max(verbosity, 1) : 0 }
    }

    /// `-vv`: exchanges in full.
    var full: Bool { verbosity > 1 }

    @Option(
        name: .long,
        help: ArgumentHelp("Write every HTTP exchange to a HAR 1.2 file, secrets redacted.", valueName: "file.har"),
        completion: .file(extensions: ["har"]))
    var record: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Answer HTTP requests from a HAR file, with no network.", valueName: "file.har"),
        completion: .file(extensions: ["har"]))
    var replay: String?

    @Flag(name: .long, help: "No network: answer only from the HTTP cache or the replay file.")
    var offline = false

    @Flag(name: .long, help: "Neither read nor write the HTTP cache.")
    var noCache = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Use the stored account LABEL of the client NAME instead of its active one (repeatable; "
                + "also APIMACRO_<NAME>_ACCOUNT).",
            valueName: "name=label"))
    var account: [String] = []

    @Flag(
        name: .customLong("no-stale"),
        help: "Fail when the network does, never answer from an old cached copy (the cache still revalidates).")
    var noStale = false

    /// `--record`'s file.
    var recordFile: URL? { record.map { URL(fileURLWithPath: $0) } }

    /// `--replay`'s file.
    var replayFile: URL? { replay.map { URL(fileURLWithPath: $0) } }

    /// These options over the environment over `config.toml`, every value checked
    /// (`Settings.load`), with the command's own `--format`, `--timeout` and `--color`.
    func settings(
        format: String? = nil, timeout: Double?, color: String?,
        process: [String: String] = ProcessEnvironment.variables
    ) throws -> Settings {
        var settings = try Settings.load(
            format: format, timeout: timeout, requestTimeout: requestTimeout, verbose: verbose, record: recordFile,
            replay: replayFile, offline: offline, useCache: !noCache, color: color, process: process)
        settings.fullExchanges = full
        if noStale { settings.staleIfError = false }
        try settings.choose(accounts: account)
        return settings
    }

    /// These options as command-line arguments again, for child processes (`batch`).
    var forwardedArguments: [String] {
        var arguments: [String] = []
        if let requestTimeout { arguments += ["--request-timeout", String(requestTimeout)] }
        if verbose { arguments.append(full ? "-vv" : "--verbose") }
        if let record { arguments += ["--record", record] }
        if let replay { arguments += ["--replay", replay] }
        if offline { arguments.append("--offline") }
        if noCache { arguments.append("--no-cache") }
        if noStale { arguments.append("--no-stale") }
        for choice in account { arguments += ["--account", choice] }
        return arguments
    }
}

/// Options shared by the commands that run macros.
struct MacroOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "How apimacro.output prints rows: table, json, csv or ndjson. (default: table on a terminal, else json)",
            valueName: "format"))
    var format: String?

    @Option(name: .long, help: ArgumentHelp("Stop the macro after this many seconds (exit 1).", valueName: "seconds"))
    var timeout: Double?

    @OptionGroup var exchange: ExchangeOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Colour tables, JSON, errors and warnings: auto (on a terminal, unless NO_COLOR is set), always or never. (default: [ui] color in config.toml, else auto)",
            valueName: "when"))
    var color: String?

    @Flag(name: .long, help: "Tables keep long cells whole instead of fitting the terminal's width.")
    var wide = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The name of the state apimacro.state keeps (a macro file's is its name; -c, - and the REPL need one).",
            valueName: "name"))
    var stateKey: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write what apimacro.output gives to FILE instead of stdout: .csv, .jsonl, .json (replaced) or .db (upserted into a table named after the macro).",
            valueName: "file"),
        completion: .file(extensions: ["db", "sqlite", "csv", "jsonl", "json"]))
    var output: String?

    @Option(
        name: .long,
        help: ArgumentHelp("The key field of the rows --output upserts into a .db file.", valueName: "field"))
    var key: String?

    /// The settings when only `flags` are given (spelled as `forwardedArguments` spells them):
    /// the flags over the environment over `config.toml`.
    static func settings(flags: Set<String>) throws -> Settings {
        var settings = try Settings.load(
            format: nil, timeout: nil, requestTimeout: nil, verbose: flags.contains("--verbose"), record: nil,
            replay: nil, offline: flags.contains("--offline"), useCache: !flags.contains("--no-cache"))
        if flags.contains("--no-stale") { settings.staleIfError = false }
        return settings
    }

    /// Flags over the environment over `config.toml`, every value checked (`Settings.load`).
    func settings() throws -> Settings {
        var settings = try exchange.settings(format: format, timeout: timeout, color: color)
        settings.wide = wide
        settings.stateKey = stateKey
        settings.output = output
        settings.outputKey = key
        return settings
    }

    /// The run options as they may follow the macro's name (`apimacro run stars octocat --format table`):
    /// each spelling, and whether it takes a value.
    static let runOptions: [(spelling: String, takesValue: Bool)] = [
        ("--format", true), ("--timeout", true), ("--request-timeout", true), ("--record", true), ("--replay", true),
        ("-v", false), ("--verbose", false), ("--offline", false), ("--no-cache", false), ("--no-stale", false),
        ("--color", true), ("--wide", false), ("--state-key", true), ("--output", true), ("--key", true),
        ("--account", true),
    ]

    /// Splits what follows the macro's name into apimacro's run options and the macro's
    /// arguments: a run option is apimacro's unless the macro's `main()` takes an option of
    /// that spelling (`macroFlags`); `--` and everything after it are the macro's.
    ///
    /// Whether any argument before a `--` is spelled like one of apimacro's run options.
    static func mentionsRunOption(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            let spelling = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            if runOptions.contains(where: { $0.spelling == spelling }) { return true }
        }
        return false
    }

    static func split(_ arguments: [String], macroFlags: Set<String>) -> (own: [String], macro: [String]) {
        var own: [String] = []
        var macro: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                // Kept: the macro's own parser (or sys.argv) sees the `--` too, as it would under python.
                macro += arguments[(index - 1)...]
                break
            }
            let spelling = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            guard let option = runOptions.first(where: { $0.spelling == spelling }), !macroFlags.contains(spelling)
            else {
                macro.append(argument)
                continue
            }
            own.append(argument)
            if option.takesValue, !argument.contains("="), index < arguments.count {
                own.append(arguments[index])
                index += 1
            }
        }
        return (own, macro)
    }

    /// These options as command-line arguments again, for child processes (`batch`).
    var forwardedArguments: [String] {
        var arguments: [String] = []
        if let format { arguments += ["--format", format] }
        if let timeout { arguments += ["--timeout", String(timeout)] }
        arguments += exchange.forwardedArguments
        if let color { arguments += ["--color", color] }
        if wide { arguments.append("--wide") }
        if let stateKey { arguments += ["--state-key", stateKey] }
        if let output { arguments += ["--output", output] }
        if let key { arguments += ["--key", key] }
        return arguments
    }
}

/// `apimacro run MACRO [ARGS...]`.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract:
            "Run one macro: a path to a .py file, or a name looked up in ./macros/, $APIMACRO_HOME/macros/, then each plugin's macros/.",
        discussion: """
            What follows MACRO goes to the macro (sys.argv[1:], apimacro.args), except apimacro's own \
            options above, which may also come after it (apimacro run stars octocat --format table). \
            An option is the macro's instead when its main() has a parameter of that name (a parameter \
            format takes --format; cache or no_cache takes --no-cache); everything after -- is the macro's.

            A macro that defines main(...) is called with arguments parsed from its signature; \
            `apimacro run MACRO --help` shows them.

            As python3 does: -m MODULE runs a module as __main__ (apimacro run -m pytest tests/ runs \
            pytest from the active virtualenv against the real apimacro module), -c CODE runs CODE, and \
            - reads the macro from standard input; everything after MODULE, CODE or - is theirs \
            (sys.argv[1:]), apimacro's options go before.

            breakpoint() stops the macro in pdb on a terminal (PYTHONBREAKPOINT=0 skips it; \
            where stdin is not a terminal it is an error); --pdb, --debugpy and --watch below. \
            See docs/guide/debugging.md.
            """
    )

    @OptionGroup var options: MacroOptions

    /// Internal to `batch`: where this child writes its request counts when it ends.
    @Option(name: .customLong("stats-file"), help: .private)
    var statsFile: String?

    @Option(
        name: .customShort("m"),
        help: ArgumentHelp("Run a Python module as __main__, as python3 -m does.", valueName: "module"))
    var module: String?

    @Option(
        name: .customShort("c"), help: ArgumentHelp("Run CODE as the macro, as python3 -c does.", valueName: "code"))
    var code: String?

    @Option(
        help: ArgumentHelp(
            "Run the macro again and again in this process, start to start, this often (10m, 30s, 1h; at least 1s).",
            valueName: "span"))
    var every: String?

    @Flag(name: [.short, .long], help: "With --every or --watch: print only what the macro prints, no cycle lines.")
    var quiet = false

    @OptionGroup(title: "Debugging") var debugging: DebugOptions
    @Option(
        name: .customLong("report"),
        help: ArgumentHelp(
            "Write a report of the run, by extension: .html (a page with a request waterfall), .tap, .json or .xml (JUnit); repeatable. The macro then runs in a child process (stdin from /dev/null), its output printed when it ends.",
            valueName: "file"))
    var reports: [String] = []

    @Argument(
        help: "The macro (a .py file, a name, or - for standard input), then its arguments.",
        completion: .custom(Completions.macroNames))
    var macro: String?

    @Argument(parsing: .captureForPassthrough, help: "Arguments passed to the macro.")
    var arguments: [String] = []

    func validate() throws {
        guard macro != nil || module != nil || code != nil else {
            throw ValidationError(
                "missing the macro: a .py file, a macro name, -m MODULE, -c CODE or - (standard input)")
        }
        try debugging.validate(every: every, file: macro != nil && module == nil && code == nil && macro != "-")
        if !reports.isEmpty, every != nil {
            throw ValidationError("--report and --every cannot go together: a report is of one run")
        }
        if !reports.isEmpty, debugging.pdb || debugging.debugpy != nil || debugging.watch {
            throw ValidationError(
                "--report runs the macro in a child process without a terminal: it cannot go with "
                    + "--pdb, --debugpy or --watch; debug the macro first, then run it with --report")
        }
        if !reports.isEmpty, macro == "-", module == nil, code == nil {
            throw ValidationError(
                "--report runs the macro in a child process, which cannot read it from standard input; "
                    + "save it to a file and run that")
        }
        if let every, Watch.span(every) == nil {
            throw ValidationError(
                "--every takes a span of at least one second: 10m, 30s, 1h, 2d or seconds; not '\(every)'")
        }
    }

    func run() throws {
        let given = macro.map { [$0] } ?? []
        if !reports.isEmpty { return try runReported() }
        if let module {
            try Self.run(
                settings: options.settings(), statsFile: statsFile, source: .module(module), name: "-m \(module)",
                arguments: given + arguments, watch: watch, debug: debugging.choices(quiet: quiet))
        } else if let code {
            try Self.run(
                settings: options.settings(), statsFile: statsFile, source: .code(code), name: "-c",
                arguments: given + arguments, watch: watch, debug: debugging.choices(quiet: quiet))
        } else if let macro {
            try Self.run(
                settings: options.settings(), forwarded: options.forwardedArguments, statsFile: statsFile,
                macro: macro, arguments: arguments, watch: watch, debug: debugging.choices(quiet: quiet))
        }
    }

    /// `--every` and `-q`, when given.
    var watch: (every: Double, quiet: Bool)? {
        every.flatMap(Watch.span).map { ($0, quiet) }
    }

    /// `apimacro run [OPTIONS] -m MODULE | -c CODE | - [ARGS...]`, split as python3 splits its
    /// command line: apimacro's run options before, everything after MODULE, CODE or `-` the
    /// script's own (`apimacro run -m pytest -x tests/`); nil when there is none of them before
    /// the macro (or `--help` asks for the help).
    ///
    /// - Throws: `ValidationError` for `-m` or `-c` without its value.
    static func scriptArguments(_ arguments: [String]) throws -> ScriptRun? {
        guard arguments.first == "run" else { return nil }
        var options: [String] = []
        var statsFile: String?
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            let spelling = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            if argument == "-" {
                return ScriptRun(
                    options: options, statsFile: statsFile, source: .standardInput, name: "-",
                    arguments: Array(arguments[(index + 1)...]))
            }
            if argument.hasPrefix("-m") || argument.hasPrefix("-c"), !argument.hasPrefix("--") {
                var value = String(argument.dropFirst(2))
                var next = index + 1
                if value.isEmpty {
                    guard next < arguments.count, !arguments[next].isEmpty else {
                        throw ValidationError(
                            argument == "-m"
                                ? "-m needs a module name (apimacro run -m pytest tests/)"
                                : "-c needs the code to run (apimacro run -c 'print(1)')")
                    }
                    value = arguments[next]
                    next += 1
                }
                let module = argument.hasPrefix("-m")
                return ScriptRun(
                    options: options, statsFile: statsFile, source: module ? .module(value) : .code(value),
                    name: module ? "-m \(value)" : "-c", arguments: Array(arguments[next...]))
            }
            if spelling == "--stats-file", index + 1 < arguments.count, !argument.contains("=") {
                statsFile = arguments[index + 1]
                index += 2
            } else if let option = MacroOptions.runOptions.first(where: { $0.spelling == spelling }) {
                let takesNext = option.takesValue && !argument.contains("=") && index + 1 < arguments.count
                options += takesNext ? [argument, arguments[index + 1]] : [argument]
                index += takesNext ? 2 : 1
            } else {
                return nil
            }
        }
        return nil
    }

    /// What `scriptArguments` read.
    struct ScriptRun {
        /// apimacro's run options before the script, as typed.
        var options: [String]
        var statsFile: String?
        var source: MacroSource
        /// How the run names itself in messages (`-m pytest`, `-c`, `-`).
        var name: String
        var arguments: [String]
    }

    /// `apimacro run [FLAGS] MACRO [ARGS...]`, read without ArgumentParser (a sixth of an
    /// empty macro's start-up went to building its parser by reflection): the flags before
    /// MACRO (`--no-cache`, `--offline`, `--verbose`, and `batch`'s `--stats-file PATH`, each
    /// once), MACRO and what follows it, exactly as the parser passes them through; nil when
    /// the parser must decide (another option or anything else before MACRO, a completion
    /// request, `---` syntax).
    static func plainArguments(_ arguments: [String]) -> PlainRun? {
        guard arguments.first == "run" else { return nil }
        var plain = PlainRun(flags: [], statsFile: nil, macro: "", arguments: [])
        var index = 1
        while index < arguments.count {
            if let flag = plainFlags[arguments[index]] {
                guard plain.flags.insert(flag).inserted else { return nil }
                index += 1
            } else if arguments[index] == "--stats-file", plain.statsFile == nil, index + 1 < arguments.count,
                !arguments[index + 1].isEmpty, !arguments[index + 1].hasPrefix("-")
            {
                plain.statsFile = arguments[index + 1]
                index += 2
            } else {
                break
            }
        }
        guard index < arguments.count, !arguments[index].isEmpty, !arguments[index].hasPrefix("-") else { return nil }
        plain.macro = arguments[index]
        plain.arguments = Array(arguments[(index + 1)...])
        guard !plain.arguments.contains(where: { $0.hasPrefix("---") || $0.contains("generate-completion-script") })
        else { return nil }
        return plain
    }

    /// What `plainArguments` read.
    struct PlainRun {
        /// Spelled as `MacroOptions.forwardedArguments` spells them.
        var flags: Set<String>
        var statsFile: String?
        var macro: String
        var arguments: [String]
    }

    /// The flags `plainArguments` reads, by spelling, as `MacroOptions.forwardedArguments` spells them.
    static let plainFlags = [
        "--no-cache": "--no-cache", "--no-stale": "--no-stale", "--offline": "--offline", "-v": "--verbose",
        "--verbose": "--verbose",
    ]

    /// Runs `macro` with `arguments` (apimacro's options among them are split off here).
    ///
    /// `forwarded` are the options given before MACRO, as arguments again.
    static func run(
        settings: Settings, forwarded: [String], statsFile: String?, macro: String, arguments: [String],
        watch: (every: Double, quiet: Bool)? = nil, debug: DebugChoices = DebugChoices()
    ) throws {
        var settings = settings
        let file = try MacroLocator(settings: settings).locate(macro, relativeTo: settings.workingDirectory)
        // apimacro's options after the macro's name: the macro's main() decides which are its own.
        // Reading main()'s signature loads argparse, ast and typing: only when an argument could be ours.
        let macroFlags = MacroOptions.mentionsRunOption(arguments) ? try MacroSignature.optionFlags(of: file) : []
        let (own, macroArguments) = MacroOptions.split(arguments, macroFlags: macroFlags)
        if !own.isEmpty {
            settings = try MacroOptions.parse(Apimacro.joiningNegativeValues(forwarded + own)).settings()
        }
        try run(
            settings: settings, statsFile: statsFile, source: .file(file), name: macro, arguments: macroArguments,
            watch: watch, debug: debug)
    }

    /// Runs `source` with `arguments` as they are (no option of apimacro's among them).
    ///
    /// With `watch`, the macro runs again and again (`Watch`); the file is read afresh each cycle.
    static func run(
        settings: Settings, statsFile: String?, source: MacroSource, name: String, arguments: [String],
        watch: (every: Double, quiet: Bool)? = nil, debug: DebugChoices = DebugChoices()
    ) throws {
        let statsFile = statsFile.map { URL(fileURLWithPath: $0) }
        // Where the counts go must be writable before the macro runs, not found unwritable after.
        if let statsFile {
            do {
                try ReportFile.prepare(file: statsFile)
            } catch {
                throw BatchError("--stats-file: \(error); name a file in a folder you can write to")
            }
        }
        var settings = settings
        // Started by `batch`: tell it every secret learned, for it to redact this run's output.
        if let statsFile { settings.reportLearnedSecrets(besideStats: statsFile) }
        // A failure before Python started made no request: zeros.
        var host: MacroHost?
        defer { Self.stats(of: host).write(to: statsFile) }
        let started = try MacroHost(settings: settings)
        host = started
        var runner = MacroRunner(host: started, beforeHardExit: { Self.stats(of: started).write(to: statsFile) })
        runner.postMortem = debug.pdb
        if let address = debug.address { try Debugging.listen(host: started, at: address, wait: debug.wait) }
        if debug.watch, case .file(let file) = source {
            throw ExitCode(
                try FileWatch.run(file: file, quiet: debug.quiet) {
                    try runner.run(source, arguments: arguments, name: name)
                })
        }
        if let watch {
            throw ExitCode(
                try Watch.run(every: watch.every, quiet: watch.quiet) {
                    try runner.run(source, arguments: arguments, name: name)
                })
        }
        throw ExitCode(try runner.run(source, arguments: arguments, name: name))
    }

    /// What `host` did on the network, for the `batch` parent: a request the replay file
    /// answered counts as a request (the macro made it; `--replay` stood in for the network).
    static func stats(of host: MacroHost?) -> MacroStats {
        let counts = host?.exchangeCounts ?? (requests: 0, cacheHits: 0, replayed: 0)
        let checks = host?.checks.map { MacroStats.Check(name: $0.name, passed: $0.passed, seen: $0.seen) } ?? []
        return MacroStats(
            requests: counts.requests + counts.replayed, cacheHits: counts.cacheHits,
            checks: checks.isEmpty ? nil : checks)
    }
}

extension Run {
    /// `run --report FILE ...`: the macro run as a job of `batch`, then the reports written.
    ///
    /// The child process's output, checks and exchanges (its HAR) are collected. The
    /// output is printed as it came when the child ends; the exit code is the child's.
    func runReported() throws {
        let settings = try options.settings()
        let files = try Batch.prepareReports(reports)
        let job: BatchJob
        if let module {
            job = BatchJob(name: module, macro: "-m", arguments: [module] + (macro.map { [$0] } ?? []) + arguments)
        } else if let code {
            job = BatchJob(name: "-c", macro: "-c", arguments: [code] + (macro.map { [$0] } ?? []) + arguments)
        } else {
            let given = macro ?? "-"
            _ = try MacroLocator(settings: settings).locate(given, relativeTo: settings.workingDirectory)
            job = BatchJob(name: BatchRunner.names(for: [given])[0], macro: given, arguments: arguments)
        }
        var configuration = options.children(settings: settings, jobs: 1, reports: files)
        configuration.recordAsNamed = true
        let secrets = configuration.secrets
        let started = Date()
        let results = try BatchRunner(configuration: configuration).run(jobs: [job]) { event in
            guard case .finished(let result) = event else { return }
            for warning in result.warnings { StandardStreams.error("apimacro: \(warning)\n") }
            StandardStreams.output(result.stdout)
            StandardStreams.error(result.stderr)
        }
        let seconds = Date().timeIntervalSince(started)
        var code: Int32
        switch results.first?.status {
        case .ok: code = 0
        case .crashed(let signal): code = 128 + signal
        case .interrupted, .notRun: code = BatchRunner.terminationSignal.map { 128 + $0 } ?? 130
        default: code = results.first?.exitCode ?? ExitReport.failure().exitCode
        }
        if let problem = Batch.writeReports(
            files, results: results, title: "apimacro run \(job.name)", started: started, seconds: seconds,
            secrets: secrets)
        {
            StandardStreams.error("apimacro: \(problem)\n")
            if code == 0 { code = ExitReport.failure().exitCode }
        }
        throw ExitCode(code)
    }
}
