import Dispatch
public import Platform
import Spawning
import Synchronization
import WebAPI

/// Set by the SIGINT handler `BatchRunner` installs while it runs.
private let batchInterrupted = Atomic<Bool>(false)

/// Set by the SIGTERM / SIGHUP handler `BatchRunner` installs while it runs: the signal, 0 for none.
private let batchTerminatedBy = Atomic<Int32>(0)

/// Runs many macros, each in its own process of the apimacro binary
/// (`apimacro run`), up to `jobs` at once: a crash, `os._exit` or a hung macro
/// affects nothing else.
///
/// Single-threaded: one loop starts children, polls them every few
/// milliseconds, kills the ones past their time and reports.
public struct BatchRunner {
    /// What a batch needs besides the list of macros.
    public struct Configuration: Sendable {
        /// The apimacro binary the children run (`/proc/self/exe`).
        public var executable: String
        /// What a child (`apimacro run`) exits with when its macro raised or ran past its
        /// `--timeout` (the command line's `ExitReport.failure`, 1).
        public var childFailureCode: Int32
        /// Options passed to every child's `run` (`--format`, `--timeout`, `-v`, `--replay`, ...),
        /// without `--record`.
        public var runOptions: [String]
        /// How many macros run at once (at least 1).
        public var jobs: Int
        /// `--timeout` per macro; a child still alive `killGrace` seconds after
        /// it is killed with SIGKILL.
        ///
        /// Nil: no limit.
        public var timeout: Double?
        /// Stop starting macros after the first one that does not succeed, and interrupt the running ones.
        public var failFast: Bool
        /// `--record FILE.har`: each macro records to its own `FILE.NAME.har` next to it.
        public var record: URL?
        /// Where each macro's stdout and stderr go as `NAME.out` and `NAME.err` (mode 0600, secrets
        /// redacted, written when it ends); nil: only the temporary folder.
        public var outputDirectory: URL?
        /// The secrets to redact from each macro's output (printed, in `--output-dir` files, in results).
        public var secrets: [String]
        /// Read each job's exchanges into its result (`--report`): from its `record` file, else
        /// from a HAR it records in the work folder.
        public var collectExchanges = false
        /// `record` is the one file the only job records to, as named (`run --report`), not `FILE.NAME.har`.
        public var recordAsNamed = false

        /// Seconds past `timeout` before SIGKILL: the child's own deadline, its one-second
        /// hard stop, and slack for a loaded machine.
        public static let killGrace = 3.0

        /// A configuration; `jobs` defaults to 1.
        public init(
            executable: String, childFailureCode: Int32, runOptions: [String] = [], jobs: Int = 1,
            timeout: Double? = nil, failFast: Bool = false,
            record: URL? = nil, outputDirectory: URL? = nil, secrets: [String] = [], collectExchanges: Bool = false
        ) {
            self.collectExchanges = collectExchanges
            self.executable = executable
            self.childFailureCode = childFailureCode
            self.runOptions = runOptions
            self.jobs = max(1, jobs)
            self.timeout = timeout
            self.failFast = failFast
            self.record = record
            self.outputDirectory = outputDirectory
            self.secrets = secrets
        }
    }

    /// What the batch reports while it runs.
    public enum Event {
        /// Counts so far (sent every 200 ms or so).
        case progress(done: Int, running: Int, failed: Int, seconds: Double)
        /// One macro ended (or was skipped).
        case finished(BatchResult)
    }

    /// A started child and what the loop knows about it.
    private struct Running {
        let index: Int
        let child: ChildProcess
        let started: UInt64
        let files: Files
        var killAt: Double?
        var killedForTimeout = false
        var interrupted = false
    }

    /// The files of one macro.
    private struct Files {
        let stdout: URL
        let stderr: URL
        let stats: URL
        /// `--output-dir`'s `NAME.out` and `NAME.err`, written redacted when the macro ends.
        var kept: (stdout: URL, stderr: URL)?
    }

    let configuration: Configuration

    /// A runner for `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The summary names of `macros`: the file name without `.py`, made unique with `-2`, `-3`, ...
    public static func names(for macros: [String]) -> [String] {
        var seen: [String: Int] = [:]
        return macros.map { macro in
            var base = URL(fileURLWithPath: macro).lastPathComponent
            if base.hasSuffix(".py") { base.removeLast(3) }
            let safe = String(base.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
            let count = (seen[safe] ?? 0) + 1
            seen[safe] = count
            return count == 1 ? safe : "\(safe)-\(count)"
        }
    }

    /// Runs `macros` (with no arguments) and returns one result per macro, in the order given.
    ///
    /// `events` is called on this thread as macros end, and for progress.
    public func run(_ macros: [String], events: (Event) -> Void) throws -> [BatchResult] {
        try run(jobs: BatchJob.jobs(for: macros), events: events)
    }

    /// Runs `jobs` and returns one result per job, in the order given.
    ///
    /// `events` is called on this thread as jobs end, and for progress.
    public func run(jobs: [BatchJob], events: (Event) -> Void) throws -> [BatchResult] {
        let names = jobs.map(\.name)
        let macros = jobs.map(\.macro)
        // Each job's HAR file must be writable before any job runs, not found unwritable at its end.
        if let record = configuration.record {
            for name in names {
                try HARRecorder.checkWritable(
                    configuration.recordAsNamed ? record : Self.recordFile(record, name: name))
            }
        }
        // The children's output is unredacted until they end: an owner-only folder, which a
        // killed batch leaves behind for the next batch to remove.
        BatchWorkFolder.removeAbandoned()
        let workFolder = try BatchWorkFolder.create()
        defer { workFolder.remove() }
        let work = workFolder.url
        if let folder = configuration.outputDirectory {
            do {
                try ReportFile.prepare(folder: folder)
            } catch {
                throw BatchError("--output-dir: \(error); name a folder you can write to")
            }
        }

        var previous = Self.catchInterrupts()
        defer { sigaction(SIGINT, &previous, nil) }
        let previousTermination = Self.catchTermination()
        defer { Self.restoreTermination(previousTermination) }

        var environment = ProcessInfo.processInfo.environment
        // A macro that segfaults is reported as "crashed (SIGSEGV)"; the Swift runtime's
        // multi-second backtrace of the host would only bury its output (unless asked for).
        environment["SWIFT_BACKTRACE"] = environment["SWIFT_BACKTRACE"] ?? "enable=no"
        let begin = DispatchTime.now().uptimeNanoseconds
        func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
        var results = [BatchResult?](repeating: nil, count: macros.count)
        var pending = Array(macros.indices.reversed())
        var running: [Running] = []
        var stopping = false
        var failed = 0
        var lastProgress = 0.0
        // Signalled when a child ends: the loop sleeps until then, the next kill or the next
        // progress line, whichever comes first (never a polling interval).
        let wake = DispatchSemaphore(value: 0)

        func stop() {
            guard !stopping else { return }
            stopping = true
            for position in running.indices {
                running[position].interrupted = true
                running[position].killAt = seconds(since: begin) + Configuration.killGrace
                running[position].child.send(SIGINT)
            }
        }

        while !running.isEmpty || (!stopping && !pending.isEmpty) {
            if batchInterrupted.load(ordering: .relaxed) || batchTerminatedBy.load(ordering: .relaxed) != 0 { stop() }
            while !stopping, running.count < configuration.jobs, let index = pending.popLast() {
                let files = self.files(name: names[index], index: index, work: work)
                do {
                    let out = try workFolder.createOwnerOnly(files.stdout.lastPathComponent)
                    defer { close(out) }
                    let err = try workFolder.createOwnerOnly(files.stderr.lastPathComponent)
                    defer { close(err) }
                    // Where the child tells what it learned (`LearnedSecrets`), owner-only like its output.
                    close(
                        try workFolder.createOwnerOnly(LearnedSecrets(besideStats: files.stats).file.lastPathComponent))
                    let child = try ChildProcess.spawn(
                        executable: configuration.executable, arguments: arguments(jobs[index], files: files),
                        // The job's name, for a breakpoint() in it to say which job it stopped (a
                        // job has no terminal for pdb).
                        environment: environment.merging(["APIMACRO_BATCH_JOB": names[index]]) { $1 },
                        stdout: out, stderr: err, wake: wake)
                    let now = seconds(since: begin)
                    running.append(
                        Running(
                            index: index, child: child, started: DispatchTime.now().uptimeNanoseconds, files: files,
                            killAt: configuration.timeout.map { now + $0 + Configuration.killGrace }))
                } catch {
                    let result = BatchResult(
                        name: names[index], macro: macros[index], status: .failed, exitCode: nil, seconds: 0,
                        stats: nil,
                        stdout: "", stderr: "apimacro: \(error)\n")
                    results[index] = result
                    failed += 1
                    events(.finished(result))
                    if configuration.failFast { stop() }
                }
            }
            var position = 0
            while position < running.count {
                let item = running[position]
                if let termination = item.child.poll() {
                    running.remove(at: position)
                    let result = finish(item, termination, name: names[item.index], macro: macros[item.index])
                    results[item.index] = result
                    if result.status != .ok { failed += 1 }
                    events(.finished(result))
                    if result.status != .ok, configuration.failFast { stop() }
                    continue
                }
                if let killAt = item.killAt, seconds(since: begin) >= killAt {
                    item.child.send(SIGKILL)
                    running[position].killAt = nil
                    running[position].killedForTimeout = !item.interrupted
                }
                position += 1
            }
            let now = seconds(since: begin)
            if now - lastProgress >= 0.2 {
                lastProgress = now
                let done = results.lazy.compactMap { $0 }.count
                events(.progress(done: done, running: running.count, failed: failed, seconds: now))
            }
            // Ctrl-C and SIGTERM set flags this loop reads: it looks at least every 200 ms.
            var sleep = max(0, 0.2 - (seconds(since: begin) - lastProgress))
            for item in running { if let killAt = item.killAt { sleep = min(sleep, max(0, killAt - now)) } }
            if !running.isEmpty { _ = wake.wait(timeout: .now() + sleep) }
        }
        for index in pending.reversed() {
            let result = BatchResult(
                name: names[index], macro: macros[index], status: .notRun, exitCode: nil, seconds: 0, stats: nil,
                stdout: "", stderr: "")
            results[index] = result
            events(.finished(result))
        }
        return results.compactMap { $0 }
    }

    /// Whether Ctrl-C stopped the last batch.
    public static var wasInterrupted: Bool { batchInterrupted.load(ordering: .relaxed) }

    /// The signal (SIGTERM or SIGHUP) that stopped the last batch, if one did: exit 128 + it
    /// (SIGPIPE when stdout's reader went away, `stopForClosedOutput`).
    public static var terminationSignal: Int32? {
        let signal = batchTerminatedBy.load(ordering: .relaxed)
        return signal == 0 ? nil : signal
    }

    /// Stops the running batch as SIGTERM does (children interrupted, the rest not run, the
    /// work folder removed) because nobody reads its stdout anymore: it exits 141.
    public static func stopForClosedOutput() {
        batchTerminatedBy.store(SIGPIPE, ordering: .relaxed)
    }

    /// Whether stdout's reader went away during the last batch (`stopForClosedOutput`).
    public static var outputClosed: Bool { batchTerminatedBy.load(ordering: .relaxed) == SIGPIPE }

    private func files(name: String, index: Int, work: URL) -> Files {
        let stats = work.appendingPathComponent("\(index).stats.json")
        // The child writes into the private work folder; `--output-dir` gets redacted copies.
        var files = Files(
            stdout: work.appendingPathComponent("\(index).out"), stderr: work.appendingPathComponent("\(index).err"),
            stats: stats)
        if let folder = configuration.outputDirectory {
            files.kept = (folder.appendingPathComponent("\(name).out"), folder.appendingPathComponent("\(name).err"))
        }
        return files
    }

    /// The secrets taken out of `text`, and the redacted text written to the `--output-dir` file,
    /// if any (mode 0600); a file that cannot be written there is written elsewhere, and
    /// `warnings` gets the line that says where.
    private func keep(_ text: String, in file: URL?, redactor: Redactor, warnings: inout [String]) -> String {
        let redacted = redactor.redact(text)
        guard let file else { return redacted }
        if let warning = ReportFile.writeOrRescue(redacted, to: file, what: "the output", mode: 0o600) {
            warnings.append(warning)
        }
        return redacted
    }

    /// `run [options] --stats-file PATH [--record FILE.NAME.har] MACRO [ARGS...]`.
    private func arguments(_ job: BatchJob, files: Files) -> [String] {
        var arguments = ["run"] + configuration.runOptions + ["--stats-file", files.stats.path]
        if let record = recordFile(job.name, files: files) { arguments += ["--record", record.path] }
        return arguments + [job.macro] + job.arguments
    }

    /// Where the job named `name` records its exchanges: `--record`'s file for it, else with
    /// `collectExchanges` a file in the work folder; nil when it records none.
    private func recordFile(_ name: String, files: Files) -> URL? {
        if let record = configuration.record {
            return configuration.recordAsNamed ? record : Self.recordFile(record, name: name)
        }
        guard configuration.collectExchanges else { return nil }
        return files.stats.deletingPathExtension().deletingPathExtension().appendingPathExtension("har")
    }

    /// `out.har` → `out.NAME.har` in the same folder: children never share a HAR file.
    public static func recordFile(_ record: URL, name: String) -> URL {
        let folder = record.deletingLastPathComponent()
        let stem = record.deletingPathExtension().lastPathComponent
        let ext = record.pathExtension.isEmpty ? "har" : record.pathExtension
        return folder.appendingPathComponent("\(stem).\(name).\(ext)")
    }

    private func finish(_ item: Running, _ termination: ChildProcess.Termination, name: String, macro: String)
        -> BatchResult
    {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - item.started) / 1e9
        // What the batch knows, and what the child learned (a token resolved during its run).
        let learned = LearnedSecrets(besideStats: item.files.stats).read()
        let redactor = Redactor(secrets: configuration.secrets + learned)
        var warnings: [String] = []
        let stdout = keep(
            String(decoding: (try? Data(contentsOf: item.files.stdout)) ?? Data(), as: UTF8.self),
            in: item.files.kept?.stdout, redactor: redactor, warnings: &warnings)
        let stderr = keep(
            String(decoding: (try? Data(contentsOf: item.files.stderr)) ?? Data(), as: UTF8.self),
            in: item.files.kept?.stderr, redactor: redactor, warnings: &warnings)
        let stats = MacroStats.read(from: item.files.stats)
        let status: BatchResult.Status
        var exitCode: Int32?
        switch termination {
        case .exited(let code):
            exitCode = code
            if code == 0 {
                status = .ok
            } else if item.interrupted {
                status = .interrupted
            } else if let timeout = configuration.timeout, code == configuration.childFailureCode, elapsed >= timeout,
                stderr.contains("ran longer than its --timeout")
            {
                status = .timeout
            } else {
                status = .failed
            }
        case .signaled(let signal):
            if item.killedForTimeout {
                status = .timeout
            } else if item.interrupted {
                status = .interrupted
            } else {
                status = .crashed(signal: signal)
            }
        }
        var result = BatchResult(
            name: name, macro: macro, status: status, exitCode: exitCode, seconds: elapsed, stats: stats,
            stdout: stdout, stderr: stderr)
        result.warnings = warnings
        if configuration.collectExchanges, let file = recordFile(name, files: item.files),
            let har = try? HAR.read(file)
        {
            result.exchanges = Report.exchanges(of: har, secrets: configuration.secrets + learned)
        }
        return result
    }

    /// SIGTERM and SIGHUP stop the batch as Ctrl-C does (children interrupted, then killed after
    /// `killGrace`; the temporary folder removed; the summary printed).
    ///
    /// Only signals with the default disposition are caught: one ignored when apimacro started
    /// (`nohup`) stays ignored. Returns the old actions to put back.
    private static func catchTermination() -> [(Int32, sigaction)] {
        batchTerminatedBy.store(0, ordering: .relaxed)
        var saved: [(Int32, sigaction)] = []
        for signal in [SIGTERM, SIGHUP] {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0, current.sa_flags & SA_SIGINFO == 0 else { continue }
            #if canImport(Glibc)
                guard current.__sigaction_handler.sa_handler == nil else { continue }
            #endif
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = { signal in batchTerminatedBy.store(signal, ordering: .relaxed)
                }
            #endif
            sigemptyset(&action.sa_mask)
            var previous = sigaction()
            if sigaction(signal, &action, &previous) == 0 { saved.append((signal, previous)) }
        }
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for (signal, _) in saved { sigaddset(&unblock, signal) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        return saved
    }

    private static func restoreTermination(_ saved: [(Int32, sigaction)]) {
        for (signal, action) in saved {
            var action = action
            sigaction(signal, &action, nil)
        }
    }

    /// Ctrl-C sets a flag the loop reads (it then interrupts the children); returns the old action.
    private static func catchInterrupts() -> sigaction {
        batchInterrupted.store(false, ordering: .relaxed)
        var previous = sigaction()
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { _ in batchInterrupted.store(true, ordering: .relaxed) }
        #endif
        sigemptyset(&action.sa_mask)
        sigaction(SIGINT, &action, &previous)
        return previous
    }
}
