import ArgumentParser
import Batch
import Foundation
import MacroRuntime

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
            name=NAME names the job in the summary, the JUnit report and --output-dir. Every line is \
            checked before anything runs.

            --shard K/N runs shard K of N: the jobs numbered K, K+N, K+2N, ... counting from 1 in the order \
            given (macros, then the jobs file's lines), the same split on every machine; names are given over \
            the whole batch. --shard auto takes K and N from a Kubernetes Indexed Job: K-1 from \
            JOB_COMPLETION_INDEX, N from JOB_COMPLETIONS (set it to the Job's completions). With --shard, \
            --junit FILE writes FILE.shard-K-of-N.xml (its testsuite named "apimacro batch shard K/N").

            Exit code: 0 if every macro succeeded, else 1 (130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP, 141 when stdout's reader went away, as with | head); 2 for a usage error.
            """)

    @OptionGroup var options: MacroOptions

    @Option(
        name: [.customShort("j"), .long],
        help: ArgumentHelp("How many macros run at once (default: the number of CPUs).", valueName: "n"))
    var jobs: Int?

    @Option(help: ArgumentHelp("Write a JUnit XML report (for CI) to this file.", valueName: "file"))
    var junit: String?

    @Flag(help: "Stop after the first macro that does not succeed (running ones are interrupted).")
    var failFast = false

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

    @Argument(
        help: "The macros: paths to .py files or names on the macro path.", completion: .custom(Completions.macroNames))
    var macros: [String] = []

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("-j needs at least 1, not \(jobs)") }
        if macros.isEmpty && jobsFile == nil { throw ValidationError("give at least one macro, or --file jobs.txt") }
    }

    /// The macros given as arguments, then the jobs file's lines; each must exist before any runs.
    func batchJobs(_ settings: Settings) throws -> [BatchJob] {
        var all = BatchJob.jobs(for: macros)
        if let jobsFile { all += try BatchJobsFile.read(jobsFile).jobs(after: all) }
        if all.isEmpty {
            throw BatchError("\(jobsFile ?? "the jobs file") holds no jobs; write one 'MACRO ARGS...' per line")
        }
        let locator = MacroLocator(settings: settings)
        for job in all {
            do {
                _ = try locator.locate(job.macro, relativeTo: settings.workingDirectory)
            } catch let error as MacroError {
                if let origin = job.origin { throw MacroError("\(origin): \(error.description)") }
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

    func run() throws {
        let settings = try options.settings()
        let shard = try shard.map { try Shard.parse($0, environment: settings.environment) }
        // Every macro must exist before any runs: a typo is a usage error, not one failed row.
        let allJobs = try batchJobs(settings)
        let batchJobs = shard?.select(allJobs) ?? allJobs
        if let shard {
            FileHandle.standardError.write(
                Data("apimacro: shard \(shard): \(batchJobs.count) of the batch's \(allJobs.count) jobs\n".utf8))
        }
        // Environment secrets and every token `apimacro login` stored: redacted from outputs and the report.
        let secrets = settings.secrets + Logins(settings: settings).storedSecrets
        var forwarded = options
        forwarded.record = nil
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let runner = BatchRunner(
            configuration: .init(
                executable: executable, childFailureCode: ExitReport.failure().exitCode,
                runOptions: forwarded.forwardedArguments,
                jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, timeout: options.timeout,
                failFast: failFast, record: settings.record,
                outputDirectory: outputDir.map { URL(fileURLWithPath: $0) },
                secrets: secrets))
        let console = BatchConsole(printOutputs: outputDir == nil)
        let started = Date()
        let results = try runner.run(jobs: batchJobs) { console.show($0) }
        let seconds = Date().timeIntervalSince(started)
        console.summarize(results, seconds: seconds)
        if let junit {
            try JUnitReport(results: results, seconds: seconds, timestamp: started, secrets: secrets, shard: shard)
                .write(to: URL(fileURLWithPath: shard?.fileName(junit) ?? junit))
        }
        throw ExitCode(ExitReport(BatchOutcome(results)).exitCode)
    }
}
