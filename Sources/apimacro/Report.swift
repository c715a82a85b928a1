import ArgumentParser
import Batch
import Clients
import MacroRuntime
import Platform
import WebAPI

/// `apimacro report FILE.har [-o out.html]`: the request waterfall page of any HAR file.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Draw the request waterfall page of a HAR file (apimacro's --record, or a browser's export).",
        discussion: """
            The page is the one run --report out.html and batch --report out.html write: one \
            self-contained HTML file (no network), a bar per exchange made of its phases (queueing, \
            rate-limit or pace wait, retries, DNS, connect, TLS, waiting for the first byte, download); \
            a row opens the exchange's method, URL, status and headers. Headers that carry credentials \
            show only their scheme, as in -v and the HAR apimacro records. -o out.json or out.tap \
            writes the same data as JSON or TAP.
            """)

    @Argument(help: "The HAR file.", completion: .file(extensions: ["har"]))
    var har: String

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp("Where the page goes (default: the HAR's name with .html).", valueName: "file"))
    var output: String?

    /// Each entry's `_fromCache` (a browser's export marks its cache's answers so), nil where absent.
    static func browserCache(_ file: URL) -> [String?] {
        guard let data = try? Data(contentsOf: file),
            let root = JSONValue.parse(data)?.object?.mapValues(\.native),
            let log = root["log"] as? [String: Any], let entries = log["entries"] as? [[String: Any]]
        else { return [] }
        return entries.map { $0["_fromCache"] as? String }
    }

    func run() throws {
        let source = URL(fileURLWithPath: har)
        let target = output ?? source.deletingPathExtension().appendingPathExtension("html").path
        let format = try Report.Format.of(target)
        guard format != .junit else {
            throw ValidationError("-o \(target): a HAR holds exchanges, not test results; write .html, .json or .tap")
        }
        let file = URL(fileURLWithPath: target)
        do {
            try ReportFile.prepare(file: file)
        } catch {
            throw BatchError("-o: \(error); name a file in a folder you can write to")
        }
        let archive = try HAR.read(source)
        let exchanges = Report.exchanges(of: archive, browserCache: Self.browserCache(source))
        let span = exchanges.map { $0.start + $0.time }.max() ?? 0
        let parser = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let started =
            archive.log.entries.compactMap { $0.startedDateTime.flatMap { try? Date($0, strategy: parser) } }.min()
            ?? Date()
        let job = Report.Job(
            name: source.lastPathComponent, macro: source.path, status: "recorded", passed: true, exitCode: nil,
            seconds: span / 1000, requests: exchanges.count, cacheHits: nil, checks: [], stdout: "", stderr: "",
            exchanges: exchanges)
        let report = Report(
            title: "apimacro report \(source.lastPathComponent)", started: started, seconds: span / 1000, jobs: [job],
            secrets: [])
        try ReportFile.write(report.text(format), to: file)
        StandardStreams.error(
            "apimacro: wrote \(file.path) (\(exchanges.count) exchange\(exchanges.count == 1 ? "" : "s"))\n")
    }
}
