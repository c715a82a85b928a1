public import Platform
public import WebAPI

/// What `run --report FILE` and `batch --report FILE` write, and `apimacro report FILE.har`
/// draws: each job's outcome, checks, output and exchanges, as HTML (a page with a request
/// waterfall), TAP, JSON (`docs/report.schema.json`) or JUnit XML, chosen by the file's extension.
///
/// Everything in it is redacted once, when it is made (`init`): the secrets given, and the
/// headers the credential rule names (`Redactor.redactHeader`), as `-v` and the HAR show them.
public struct Report: Codable, Sendable {
    /// The version of this document's shape (`docs/report.schema.json`).
    public var schemaVersion = 1
    /// `apimacro run`, `apimacro batch` or `apimacro report FILE.har`.
    public var title: String
    /// When it started (ISO 8601).
    public var started: String
    /// Wall-clock seconds, start to end.
    public var seconds: Double
    public var jobs: [Job]

    /// One job: a macro run, or the exchanges of a HAR file.
    public struct Job: Codable, Sendable {
        public var name: String
        public var macro: String
        /// "ok", "failed", "timeout", "crashed (SIGSEGV)", "interrupted", "not run".
        public var status: String
        /// Whether it succeeded (exit 0).
        public var passed: Bool
        public var exitCode: Int32?
        public var seconds: Double
        public var requests: Int?
        public var cacheHits: Int?
        public var checks: [MacroStats.Check]
        public var stdout: String
        public var stderr: String
        public var exchanges: [Exchange]

        public init(
            name: String, macro: String, status: String, passed: Bool, exitCode: Int32?, seconds: Double,
            requests: Int?, cacheHits: Int?, checks: [MacroStats.Check], stdout: String, stderr: String,
            exchanges: [Exchange]
        ) {
            self.name = name
            self.macro = macro
            self.status = status
            self.passed = passed
            self.exitCode = exitCode
            self.seconds = seconds
            self.requests = requests
            self.cacheHits = cacheHits
            self.checks = checks
            self.stdout = stdout
            self.stderr = stderr
            self.exchanges = exchanges
        }
    }

    /// One exchange, from a HAR entry.
    public struct Exchange: Codable, Sendable {
        public var method: String
        public var url: String
        public var status: Int
        /// Where the answer came from: "network", "cache hit", "revalidated (304)", "replay", ...
        public var source: String
        /// When it started, in milliseconds after the job's first exchange started.
        public var start: Double
        /// Milliseconds from start to end.
        public var time: Double
        public var timings: Timings
        public var requestHeaders: [Header]
        public var responseHeaders: [Header]
    }

    /// The phases of an exchange in milliseconds, in the order a browser's devtools draws them.
    ///
    /// -1 where a phase did not happen. `queued`, `throttled` and `retried` are parts of
    /// `blocked`; `ssl` is part of `connect` (as HAR 1.2 counts them).
    public struct Timings: Codable, Sendable {
        public var blocked: Double
        public var queued: Double
        public var throttled: Double
        public var retried: Double
        public var retries: Int
        public var dns: Double
        public var connect: Double
        public var ssl: Double
        public var send: Double
        public var wait: Double
        public var receive: Double
    }

    /// A header, redacted.
    public struct Header: Codable, Sendable {
        public var name: String
        public var value: String
    }

    /// The file formats, by extension.
    public enum Format: String, Sendable, CaseIterable {
        case html, tap, json, junit

        /// The format a file's extension asks for (`.html`/`.htm`, `.tap`, `.json`, `.xml`).
        ///
        /// - Throws: `BatchError` naming the path and the extensions there are.
        public static func of(_ path: String) throws -> Format {
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "html", "htm": return .html
            case "tap": return .tap
            case "json": return .json
            case "xml": return .junit
            default:
                throw BatchError(
                    "--report \(path): the extension says which report it is: .html (a page with a request "
                        + "waterfall), .tap, .json or .xml (JUnit)")
            }
        }
    }

    /// A report of `jobs`, every string redacted of `secrets`.
    public init(title: String, started: Date, seconds: Double, jobs: [Job], secrets: [String]) {
        let redactor = Redactor(secrets: secrets)
        self.title = redactor.redact(title)
        self.started = Self.timestamp(started)
        self.seconds = seconds
        self.jobs = jobs.map { Self.redacted($0, redactor) }
    }

    /// The report of a batch's (or a run's) results.
    public init(title: String, started: Date, seconds: Double, results: [BatchResult], secrets: [String]) {
        let jobs = results.map { result in
            Job(
                name: result.name, macro: result.macro, status: result.status.label, passed: result.status == .ok,
                exitCode: result.exitCode, seconds: result.seconds, requests: result.stats?.requests,
                cacheHits: result.stats?.cacheHits, checks: result.stats?.checks ?? [], stdout: result.stdout,
                stderr: result.stderr, exchanges: result.exchanges)
        }
        self.init(title: title, started: started, seconds: seconds, jobs: jobs, secrets: secrets)
    }

    /// The exchanges of `har`, redacted as the HAR apimacro records is (headers the credential
    /// rule names keep only their scheme; `secrets` anywhere).
    ///
    /// `browserCache` holds each entry's `_fromCache` ("disk", "memory"), which a browser's
    /// export writes for an answer from its cache.
    public static func exchanges(of har: HAR, secrets: [String] = [], browserCache: [String?] = []) -> [Exchange] {
        let starts = har.log.entries.map { entry in entry.startedDateTime.flatMap(UTCDateText.parseISO8601) }
        let first = starts.compactMap { $0 }.min()
        let redactor = Redactor(secrets: secrets)
        var previousEnd = 0.0
        return zip(har.log.entries, starts).enumerated().map { index, pair in
            let (entry, started) = pair
            let t = entry.timings
            func phase(_ value: Double?) -> Double { value.map { $0 < 0 ? -1 : $0 } ?? -1 }
            let phases = [t?.blocked, t?.dns, t?.connect, t?.send, t?.wait, t?.receive].map { max(0, phase($0)) }
            let time = max(entry.time ?? 0, 0) > 0 ? entry.time ?? 0 : phases.reduce(0, +)
            // An entry without a start time follows the one before it.
            var start = previousEnd
            if let started, let first { start = started.timeIntervalSince(first) * 1000 }
            previousEnd = start + time
            var source = entry.comment.flatMap { Self.sources.contains($0) ? $0 : nil } ?? "network"
            if entry.response.status == 304, source == "network" { source = "revalidated (304)" }
            if index < browserCache.count, browserCache[index] != nil, source == "network" { source = "cache hit" }
            let headers = { (list: [HAR.NameValue]?) in
                (list ?? []).map {
                    Header(name: $0.name, value: redactor.redactHeader(name: $0.name, value: $0.value))
                }
            }
            return Exchange(
                method: entry.request.method, url: redactor.redactURL(entry.request.url),
                status: entry.response.status, source: source, start: (start * 1000).rounded() / 1000,
                time: time,
                timings: Timings(
                    blocked: phase(t?.blocked), queued: t?.queued ?? 0, throttled: t?.throttled ?? 0,
                    retried: t?.retried ?? 0, retries: t?.retries ?? 0, dns: phase(t?.dns),
                    connect: phase(t?.connect), ssl: phase(t?.ssl), send: phase(t?.send), wait: phase(t?.wait),
                    receive: phase(t?.receive)),
                requestHeaders: headers(entry.request.headers), responseHeaders: headers(entry.response.headers))
        }
    }

    /// What apimacro writes in an entry's `comment` (`Response.Source`).
    static let sources: Set<String> = ["cache hit", "shared cache hit", "revalidated (304)", "stale", "replay"]

    /// The document in `format` (JUnit is `JUnitReport`'s, from the results).
    public func text(_ format: Format) -> String {
        switch format {
        case .html: ReportPage.html(self)
        case .tap: tap
        case .json, .junit: json
        }
    }

    /// The report as JSON (`docs/report.schema.json`).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self) + "\n"
    }

    /// The report as TAP 13: one test point per job, its checks, status, exit code and the end
    /// of its stderr in the point's YAML diagnostics; a job that never ran is `# SKIP`.
    public var tap: String {
        var lines = ["TAP version 13", "1..\(jobs.count)"]
        for (index, job) in jobs.enumerated() {
            let description = job.name.replacingLiteral("\\", with: "\\\\")
                .replacingLiteral("#", with: "\\#")
            if job.status == BatchResult.Status.notRun.label {
                lines.append("ok \(index + 1) - \(description) # SKIP not run: the batch stopped first")
                continue
            }
            lines.append("\(job.passed ? "ok" : "not ok") \(index + 1) - \(description)")
            lines.append("  ---")
            lines.append("  status: \(Self.yaml(job.status))")
            if let code = job.exitCode { lines.append("  exit_code: \(code)") }
            lines.append("  seconds: \(PrintfText.format("%.3f", job.seconds))")
            if let requests = job.requests { lines.append("  requests: \(requests)") }
            if !job.checks.isEmpty {
                lines.append("  checks:")
                for check in job.checks {
                    lines.append("    - name: \(Self.yaml(check.name))")
                    lines.append("      passed: \(check.passed)")
                    if let seen = check.seen { lines.append("      seen: \(Self.yaml(seen))") }
                }
            }
            let tail = job.stderr.split(separator: "\n").suffix(20).joined(separator: "\n")
            if !job.passed, !tail.isEmpty { lines.append("  stderr: \(Self.yaml(tail))") }
            lines.append("  ...")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A YAML scalar: a JSON string (a YAML flow scalar), with the characters YAML forbids escaped.
    static func yaml(_ text: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    (0x7F...0x9F).contains(scalar.value) || (0xFFFE...0xFFFF).contains(scalar.value)
                        || (0xD800...0xDFFF).contains(scalar.value) ? "\u{FFFD}" : scalar
                }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(cleaned)) ?? Data("\"\"".utf8), as: UTF8.self)
    }

    /// Writes the report in `format` to `file`, or when that fails somewhere else (`ReportFile.writeOrRescue`).
    ///
    /// - Returns: nil when `file` was written, else the line that says why not and where it went.
    public func writeOrRescue(_ format: Format, to file: URL) -> String? {
        ReportFile.writeOrRescue(text(format), to: file, what: "the \(format.rawValue.uppercased()) report")
    }

    static func timestamp(_ date: Date) -> String {
        UTCDateText.iso8601(date)
    }

    private static func redacted(_ job: Job, _ redactor: Redactor) -> Job {
        var job = job
        job.stdout = redactor.redact(job.stdout)
        job.stderr = redactor.redact(job.stderr)
        job.checks = job.checks.map {
            MacroStats.Check(name: redactor.redact($0.name), passed: $0.passed, seen: $0.seen.map(redactor.redact))
        }
        job.exchanges = job.exchanges.map { exchange in
            var exchange = exchange
            exchange.url = redactor.redactURL(exchange.url)
            let header = { (header: Header) in
                Header(
                    name: header.name,
                    value: redactor.redact(redactor.redactHeader(name: header.name, value: header.value)))
            }
            exchange.requestHeaders = exchange.requestHeaders.map(header)
            exchange.responseHeaders = exchange.responseHeaders.map(header)
            return exchange
        }
        return job
    }
}
