import ArgumentParser
import Batch
import MacroRuntime
import Platform
import WebAPI

/// `apimacro batch [MACRO...] [--file JOBS] [-j N] [--junit FILE] [--fail-fast] [--output-dir DIR] [--shard K/N]`.
struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Run many macros, each in its own process, up to N at once, and summarize.",
        discussion: """
            Each macro runs as `apimacro run MACRO` in a process of its own: a crash, os._exit or a hung \
            macro affects nothing else. --timeout applies to each macro (a child still alive 3 s later is \
            killed). Each macro's stdout and stderr are printed whole under a header when it ends, or \
            written to --output-dir DIR as NAME.out and NAME.err (mode 0600), secrets redacted either way. A summary table always follows (status, \
            exit code, seconds, HTTP requests, cache hits). --record FILE.har writes one HAR per macro, \
            FILE.NAME.har.

            To pass arguments, list the jobs in a file (--file jobs.txt, or --file - for stdin): one job \
            per line, quoted as in a shell (stars octocat --limit 5), # for comments; a first word \
            name=NAME names the job in the summary, the JUnit report and --output-dir; a first word \
            tags=smoke,nightly tags it, for --tags and --exclude-tags (a tag no job has is an error). \
            Every line is checked before anything runs.

            --each rows.csv MACRO runs MACRO once per row of a CSV file with a header row: each column \
            goes to main()'s parameter of that name (jobs MACRO.row1, MACRO.row2, ...).

            --report FILE writes, when the jobs have run, FILE.html (one page, no network: each job's \
            outcome, checks, output and request waterfall), FILE.tap (TAP 13), FILE.json \
            (docs/report.schema.json) or FILE.xml (JUnit, as --junit). --bail is --fail-fast.

            --shard K/N runs shard K of N: the jobs numbered K, K+N, K+2N, ... counting from 1 in the order \
            given (macros, then the jobs file's lines), the same split on every machine; names are given over \
            the whole batch. --shard auto takes K and N from a Kubernetes Indexed Job: K-1 from \
            JOB_COMPLETION_INDEX, N from JOB_COMPLETIONS (set it to the Job's completions). With --shard, \
            --junit FILE writes FILE.shard-K-of-N.xml (its testsuite named "apimacro batch shard K/N"), and \
            --report FILE.html FILE.shard-K-of-N.html.

            The folders of --junit FILE, --report FILE and --output-dir DIR are made when missing and must be writable \
            before any macro runs (else exit 2). A report that cannot be written when the macros have run \
            is written to the working directory (else the temporary folder) instead, and the message says \
            where (exit 1).

            Exit code: 0 if every macro succeeded, else 1 (130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP, 141 when stdout's reader went away, as with | head); 2 for a usage error.
            """)

    @OptionGroup var options: MacroOptions

    @Option(
        name: [.customShort("j"), .long],
        help: ArgumentHelp("How many macros run at once (default: the number of CPUs).", valueName: "n"))
    var jobs: Int?

    @Option(help: ArgumentHelp("Write a JUnit XML report (for CI) to this file.", valueName: "file"))
    var junit: String?

    @Flag(
        name: [.customLong("fail-fast"), .customLong("bail")],
        help: "Stop after the first macro that does not succeed (running ones are interrupted).")
    var failFast = false

    @Option(
        name: .customLong("report"),
        help: ArgumentHelp(
            "Write a report when the jobs have run, by extension: .html (a page with a request waterfall), .tap, .json or .xml (JUnit); repeatable.",
            valueName: "file"))
    var reports: [String] = []

    @Option(
        help: ArgumentHelp(
            "Run only the jobs with one of these tags (tags=a,b in the jobs file); comma-separated, repeatable.",
            valueName: "tags"))
    var tags: [String] = []

    @Option(
        help: ArgumentHelp("Skip the jobs with one of these tags; comma-separated, repeatable.", valueName: "tags"))
    var excludeTags: [String] = []

    @Option(
        help: ArgumentHelp(
            "Run each macro given once per row of this CSV file, each column passed to main()'s parameter of that name.",
            valueName: "rows.csv"),
        completion: .file(extensions: ["csv"]))
    var each: String?

    @Option(
        help: ArgumentHelp(
            "Write each macro's output to DIR/NAME.out and DIR/NAME.err instead of printing it.", valueName: "dir"))
    var outputDir: String?

    @Option(
        name: .customLong("file"),
        help: ArgumentHelp(
            "Read jobs from this file ('-': standard input), one 'MACRO ARGS...' per line.", valueName: "jobs.txt"),
        completion: .file())
    var jobsFile: String?

    @Option(
        help: ArgumentHelp(
            "Run only shard K of N of the jobs (K/N, or auto in a Kubernetes Indexed Job).", valueName: "K/N|auto"))
    var shard: String?

    /// Unknown options are kept here too (`.allUnrecognized`), for `validate` to explain: an
    /// option after a macro is most likely meant as the macro's argument.
    @Argument(
        parsing: .allUnrecognized,
        help: "The macros: paths to .py files or names on the macro path.", completion: .custom(Completions.macroNames))
    var macros: [String] = []

    func validate() throws {
        if let option = macros.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw ValidationError(Self.notAnOption(option, macros: macros))
        }
        if let jobs, jobs < 1 { throw ValidationError("-j needs at least 1, not \(jobs)") }
        if options.output != nil || options.key != nil {
            throw ValidationError(
                "--output and --key are run's: each job would replace the others' file; write with "
                    + "apimacro.output(rows, to=...) in the macro, or keep each job's output with --output-dir")
        }
        if macros.isEmpty && jobsFile == nil { throw ValidationError("give at least one macro, or --file jobs.txt") }
    }

    /// Why `option` is refused: batch has no such option, and a macro's arguments go in a jobs
    /// file, with the line to write for the macro before it.
    static func notAnOption(_ option: String, macros: [String]) -> String {
        guard let index = macros.firstIndex(of: option), index > 0, !macros[index - 1].hasPrefix("-") else {
            // Batch's own spellings, read from its help, so the list never drifts from the options.
            let help = Batch.helpMessage(columns: 10_000)
            let spellings = help.split(whereSeparator: { $0.isWhitespace || "([`',|".contains($0) }).compactMap {
                $0.prefixMatch(of: /--?[a-z][a-z-]*/).map { String($0.output) }
            }
            let hint = NearMiss.suggestion(for: option, among: Array(Set(spellings))).map { "; did you mean '\($0)'?" }
            return "unknown option '\(option)' for batch\(hint ?? "")"
        }
        return "'\(option)' is not an option of batch; " + jobsFileHint(macro: index - 1, in: macros)
    }

    /// For a word after a macro that is no macro (`batch hello.py octocat`), most likely meant as
    /// the macro's argument: arguments go in a jobs file, with the line to write; nil when no
    /// earlier word is a macro, or the word names a `.py` file.
    static func argumentHint(_ word: String, macros: [String], isMacro: (String) -> Bool) -> String? {
        guard !word.hasSuffix(".py"), let index = macros.firstIndex(of: word), index > 0,
            let macro = macros[..<index].lastIndex(where: { !$0.hasPrefix("-") && isMacro($0) })
        else { return nil }
        return "if '\(word)' is meant for \(macros[macro]): " + jobsFileHint(macro: macro, in: macros)
    }

    /// "a macro takes its arguments in a jobs file, …: echo "MACRO ARGS..." | apimacro batch --file -",
    /// for the macro at `macro` in `macros` and the words after it up to the next `.py`.
    static func jobsFileHint(macro: Int, in macros: [String]) -> String {
        let rest = macros[(macro + 1)...].prefix { !$0.hasSuffix(".py") || $0.hasPrefix("-") }
        let job = ([macros[macro]] + rest).map(Self.shellWord).joined(separator: " ")
        let escaped = job.reduce(into: "") { text, character in
            if "\"$`\\".contains(character) { text.append("\\") }
            text.append(character)
        }
        return "a macro takes its arguments in a jobs file, one 'MACRO ARGS...' per line: echo \"\(escaped)\" "
            + "| apimacro batch --file -"
    }

    /// `word` as a line of a jobs file reads it back (in single quotes when needed; every `'`
    /// byte replaced, also one a combining mark follows).
    static func shellWord(_ word: String) -> String {
        let plain = !word.isEmpty && word.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,@%+".contains($0) }
        return plain ? word : "'" + word.replacingLiteral("'", with: "'\\''") + "'"
    }

    /// The macros given as arguments (with `--each`, once per row), then the jobs file's lines,
    /// less those `--tags` and `--exclude-tags` leave out; each must exist before any runs.
    func batchJobs(_ settings: Settings) throws -> [BatchJob] {
        var all = try each.map { try eachJobs($0, settings) } ?? BatchJob.jobs(for: macros)
        if let jobsFile { all += try BatchJobsFile.read(jobsFile).jobs(after: all) }
        let split = { (list: [String]) in list.flatMap { $0.split(separator: ",").map(String.init) } }
        if !tags.isEmpty || !excludeTags.isEmpty {
            all = try BatchJob.select(all, tags: split(tags), excluding: split(excludeTags))
            if all.isEmpty {
                throw BatchError("no job is left once --tags and --exclude-tags have chosen; nothing to run")
            }
        }
        if all.isEmpty {
            throw BatchError("\(jobsFile ?? "the jobs file") holds no jobs; write one 'MACRO ARGS...' per line")
        }
        let locator = MacroLocator(settings: settings)
        for job in all {
            do {
                _ = try locator.locate(job.macro, relativeTo: settings.workingDirectory)
            } catch let error as MacroError {
                if let origin = job.origin {
                    throw MacroError("\(origin): \(error.description)\(besideJobsFile(job.macro, settings))")
                }
                let found = { (name: String) in
                    (try? locator.locate(name, relativeTo: settings.workingDirectory)) != nil
                }
                if let hint = Self.argumentHint(job.macro, macros: macros, isMacro: found) {
                    throw MacroError("\(error.description); \(hint)")
                }
                if job.macro.contains(where: \.isWhitespace) {
                    throw MacroError(
                        "no macro named '\(job.macro)'; to pass arguments to a macro, write the job in a file "
                            + "and run apimacro batch --file jobs.txt (one 'MACRO ARGS...' per line)")
                }
                throw error
            }
        }
        return all
    }

    /// `--each rows.csv MACRO...`: each macro once per row, the columns passed by name.
    func eachJobs(_ path: String, _ settings: Settings) throws -> [BatchJob] {
        guard !macros.isEmpty else { throw BatchError("--each \(path) needs a macro to run once per row") }
        let rows = try EachRows.read(path)
        let locator = MacroLocator(settings: settings)
        var jobs: [BatchJob] = []
        for macro in macros {
            let file = try locator.locate(macro, relativeTo: settings.workingDirectory)
            guard let parameters = try MacroSignature.parameters(of: file) else {
                throw BatchError(
                    "--each: \(macro) has no main() with parameters to pass the columns of \(path) to; "
                        + "write def main(NAME, ...) with a parameter per column")
            }
            jobs += try rows.jobs(
                macro: macro,
                parameters: parameters.map {
                    EachRows.Parameter(name: $0.name, passing: $0.passing, required: $0.required, flag: $0.flag)
                }, taken: jobs)
        }
        return jobs
    }

    /// For a path in the jobs file that is found beside the file but not in the working
    /// directory: that paths are read from the working directory, and what to write instead.
    func besideJobsFile(_ macro: String, _ settings: Settings) -> String {
        guard let jobsFile, jobsFile != "-", !macro.hasPrefix("/") else { return "" }
        let folder = URL(fileURLWithPath: jobsFile, relativeTo: settings.workingDirectory).deletingLastPathComponent()
        let beside = folder.appendingPathComponent(macro).standardizedFileURL
        guard FileManager.default.fileExists(atPath: beside.path) else { return "" }
        return "; paths in a jobs file are relative to the working directory (\(settings.workingDirectory.path)), "
            + "not to the file: write \(beside.path) or run apimacro batch from \(folder.standardizedFileURL.path)"
    }

    func run() throws {
        let settings = try options.settings()
        let shard = try shard.map { try Shard.parse($0, environment: settings.environment) }
        // Every macro must exist before any runs: a typo is a usage error, not one failed row.
        let allJobs = try batchJobs(settings)
        let batchJobs = shard?.select(allJobs) ?? allJobs
        // Where the report goes must be writable before any job runs, not found unwritable at the end.
        let junitFile = junit.map { URL(fileURLWithPath: shard?.fileName($0) ?? $0) }
        if let junitFile {
            do {
                try ReportFile.prepare(file: junitFile)
            } catch {
                throw BatchError("--junit: \(error); name a file in a folder you can write to")
            }
        }
        let reportFiles = try Self.prepareReports(reports.map { shard?.fileName($0) ?? $0 })
        if let shard {
            StandardStreams.error("apimacro: shard \(shard): \(batchJobs.count) of the batch's \(allJobs.count) jobs\n")
        }
        var configuration = options.children(
            settings: settings, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, reports: reportFiles)
        configuration.failFast = failFast
        configuration.outputDirectory = outputDir.map { URL(fileURLWithPath: $0) }
        let secrets = configuration.secrets
        let runner = BatchRunner(configuration: configuration)
        let console = BatchConsole(printOutputs: outputDir == nil)
        let started = Date()
        let results = try runner.run(jobs: batchJobs) { console.show($0) }
        let seconds = Date().timeIntervalSince(started)
        console.summarize(results, seconds: seconds)
        let ending = ExitReport(BatchOutcome(results))
        if let junitFile,
            let problem = JUnitReport(
                results: results, seconds: seconds, timestamp: started, secrets: secrets, shard: shard
            ).writeOrRescue(to: junitFile)
        {
            // The jobs ran, but the report is not where CI looks: the batch fails, saying where it is.
            if ending == .success { throw ExitReport.failure(problem) }
            StandardStreams.error("apimacro: \(problem)\n")
        }
        let title = shard.map { "apimacro batch shard \($0)" } ?? "apimacro batch"
        if let problem = Self.writeReports(
            reportFiles, results: results, title: title, started: started, seconds: seconds, secrets: secrets,
            shard: shard)
        {
            if ending == .success { throw ExitReport.failure(problem) }
            StandardStreams.error("apimacro: \(problem)\n")
        }
        throw ExitCode(ending.exitCode)
    }
}

extension MacroOptions {
    /// How `batch` and `run --report` start their children: `apimacro run` with these options
    /// but `--record` (the runner names each child's file), `jobs` at once, the secrets of the
    /// environment and every token `apimacro login` stored redacted from what they print and
    /// from the reports; each job's exchanges collected when a report other than JUnit wants them.
    func children(
        settings: Settings, jobs: Int, reports: [(file: URL, format: Report.Format)]
    ) -> BatchRunner.Configuration {
        var forwarded = self
        forwarded.exchange.record = nil
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return BatchRunner.Configuration(
            executable: executable, childFailureCode: ExitReport.failure().exitCode,
            runOptions: forwarded.forwardedArguments, jobs: jobs, timeout: timeout, record: settings.record,
            secrets: settings.secrets + Logins(settings: settings).storedSecrets,
            collectExchanges: reports.contains { $0.format != .junit })
    }
}

extension Batch {
    /// Each `--report` path with its format, its folder made and checked writable before any
    /// job runs.
    ///
    /// - Throws: `BatchError` (exit 2) for an extension that names no format or a file that cannot be written.
    static func prepareReports(_ paths: [String]) throws -> [(file: URL, format: Report.Format)] {
        try paths.map { path in
            let format = try Report.Format.of(path)
            let file = URL(fileURLWithPath: path)
            do {
                try ReportFile.prepare(file: file)
            } catch {
                throw BatchError("--report: \(error); name a file in a folder you can write to")
            }
            return (file, format)
        }
    }

    /// Writes each report; nil when all were written where asked, else the lines saying where they went.
    static func writeReports(
        _ files: [(file: URL, format: Report.Format)], results: [BatchResult], title: String, started: Date,
        seconds: Double, secrets: [String], shard: Shard? = nil
    ) -> String? {
        guard !files.isEmpty else { return nil }
        let report = Report(title: title, started: started, seconds: seconds, results: results, secrets: secrets)
        let problems = files.compactMap { file, format in
            format == .junit
                ? JUnitReport(results: results, seconds: seconds, timestamp: started, secrets: secrets, shard: shard)
                    .writeOrRescue(to: file)
                : report.writeOrRescue(format, to: file)
        }
        return problems.isEmpty ? nil : problems.joined(separator: "\napimacro: ")
    }
}
