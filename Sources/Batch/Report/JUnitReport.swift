public import Platform
import WebAPI

/// A batch as a JUnit XML report, the format CI systems (Jenkins, GitLab,
/// GitHub Actions reporters) read: one `<testcase>` per macro.
///
/// A non-zero exit is a `<failure>`; a timeout, a crash or an interruption is
/// an `<error>`; a macro that never ran is `<skipped>`. Each case keeps the
/// macro's output in `<system-out>` / `<system-err>`, secrets redacted.
///
/// The document validates against `junit-10.xsd`, the schema of Jenkins' xUnit
/// plugin that pytest's xunit2 output follows: `<testsuites>` carries only
/// tests, failures, errors and time; `<testcase>` only name, classname and
/// time, with no `<properties>`. Each macro's path, exit code and request
/// counts are therefore `<property name="NAME.macro">` (`.exit_code`,
/// `.requests`, `.cache_hits`) in the suite's `<properties>`.
public struct JUnitReport {
    let results: [BatchResult]
    let seconds: Double
    let timestamp: Date
    let redactor: Redactor
    /// `apimacro batch`, or `apimacro batch shard 2/3` for one shard's report.
    let suiteName: String

    /// A report of `results`, which took `seconds` and started at `timestamp`; `shard`
    /// names the share of the batch they are (`--shard`), if any.
    public init(results: [BatchResult], seconds: Double, timestamp: Date, secrets: [String], shard: Shard? = nil) {
        self.results = results
        self.seconds = seconds
        self.timestamp = timestamp
        self.redactor = Redactor(secrets: secrets)
        self.suiteName = shard.map { "apimacro batch shard \($0)" } ?? "apimacro batch"
    }

    /// The XML document.
    public var xml: String {
        let failures = results.filter { $0.status == .failed }.count
        let skipped = results.filter { $0.status == .notRun }.count
        let errors = results.count - failures - skipped - results.filter { $0.status == .ok }.count
        let time = Self.seconds(seconds)
        let counts = #"tests="\#(results.count)" failures="\#(failures)" errors="\#(errors)""#
        let stamp = UTCDateText.iso8601(timestamp, milliseconds: false)
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="\#(escape(suiteName))" \#(counts) time="\#(time)">"#,
            #"  <testsuite name="\#(escape(suiteName))" \#(counts) skipped="\#(skipped)" time="\#(time)" timestamp="\#(stamp)">"#,
        ]
        lines.append(contentsOf: properties())
        for result in results {
            lines.append(contentsOf: testcase(result))
        }
        lines += ["  </testsuite>", "</testsuites>", ""]
        return lines.joined(separator: "\n")
    }

    /// Writes the report to `file`, whole or not at all.
    ///
    /// - Throws: `ReportFile.Failure` naming the file and the system's reason.
    public func write(to file: URL) throws {
        try ReportFile.write(xml, to: file)
    }

    /// Writes the report to `file`, or when that fails somewhere else (`ReportFile.writeOrRescue`).
    ///
    /// - Returns: nil when `file` was written, else the line that says why not and where the report went.
    public func writeOrRescue(to file: URL) -> String? {
        ReportFile.writeOrRescue(xml, to: file, what: "the JUnit report")
    }

    /// The suite's `<properties>`: each macro's path, exit code and request counts, keyed by its name.
    private func properties() -> [String] {
        var lines = ["    <properties>"]
        for result in results {
            var properties = [("macro", result.macro)]
            if let code = result.exitCode { properties.append(("exit_code", String(code))) }
            if let stats = result.stats {
                properties += [("requests", String(stats.requests)), ("cache_hits", String(stats.cacheHits))]
            }
            for (key, value) in properties {
                lines.append(#"      <property name="\#(escape(result.name)).\#(key)" value="\#(escape(value))"/>"#)
            }
        }
        lines.append("    </properties>")
        return lines
    }

    private func testcase(_ result: BatchResult) -> [String] {
        let name = escape(result.name)
        var lines = [
            #"    <testcase name="\#(name)" classname="apimacro.batch" time="\#(Self.seconds(result.seconds))">"#
        ]
        let lastLines = result.stderr.split(separator: "\n").suffix(20).joined(separator: "\n")
        switch result.status {
        case .ok:
            break
        case .failed:
            let message = "exit code \(result.exitCode.map(String.init) ?? "-")"
            lines.append(#"      <failure type="failed" message="\#(escape(message))">\#(escape(lastLines))</failure>"#)
        case .timeout, .crashed, .interrupted:
            let type = result.status == .timeout ? "timeout" : result.status == .interrupted ? "interrupted" : "crashed"
            lines.append(
                #"      <error type="\#(type)" message="\#(escape(result.status.label))">\#(escape(lastLines))</error>"#
            )
        case .notRun:
            lines.append(#"      <skipped message="not run: the batch stopped first"/>"#)
        }
        if !result.stdout.isEmpty { lines.append("      <system-out>\(escape(result.stdout))</system-out>") }
        if !result.stderr.isEmpty { lines.append("      <system-err>\(escape(result.stderr))</system-err>") }
        lines.append("    </testcase>")
        return lines
    }

    /// Redacted, XML-escaped text; characters XML 1.0 forbids (terminal escapes,
    /// other control characters) become U+FFFD.
    private func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in redactor.redact(text).unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value):
                escaped += "\u{FFFD}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func seconds(_ value: Double) -> String {
        PrintfText.format("%.3f", value)
    }
}
