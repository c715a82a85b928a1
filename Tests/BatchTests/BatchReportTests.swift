import Batch
import Foundation
import Testing

@Suite("batch names, summary and JUnit report")
struct BatchReportTests {
    static func result(
        _ name: String, _ status: BatchResult.Status, exit: Int32?, stats: MacroStats?, stderr: String = ""
    )
        -> BatchResult
    {
        BatchResult(
            name: name, macro: "macros/\(name).py", status: status, exitCode: exit, seconds: 1.5, stats: stats,
            stdout: "", stderr: stderr)
    }

    @Test("names come from the file name, made unique; --record gives one HAR per macro")
    func names() {
        #expect(
            BatchRunner.names(for: ["a.py", "dir/a.py", "b", "we ird.py", "a"]) == ["a", "a-2", "b", "we_ird", "a-3"])
        #expect(BatchRunner.recordFile(URL(fileURLWithPath: "/tmp/x/run.har"), name: "a").path == "/tmp/x/run.a.har")
        #expect(BatchRunner.recordFile(URL(fileURLWithPath: "/tmp/x/run"), name: "b").path == "/tmp/x/run.b.har")
    }

    @Test("the summary: one aligned row per macro, '-' where unknown, then the tally")
    func summary() {
        let text = BatchConsole.summary(
            [
                Self.result("first", .ok, exit: 0, stats: MacroStats(requests: 12, cacheHits: 3)),
                Self.result("crashy", .crashed(signal: SIGSEGV), exit: nil, stats: nil),
                Self.result("skipped", .notRun, exit: nil, stats: nil),
            ], seconds: 2.25)
        #expect(
            text == """
                MACRO    STATUS             EXIT  SECONDS  REQUESTS  CACHE HITS
                first    ok                    0     1.50        12           3
                crashy   crashed (SIGSEGV)     -     1.50         -           -
                skipped  not run               -        -         -           -
                3 macros: 1 ok, 1 crashed (SIGSEGV), 1 not run in 2.2 s

                """)
    }

    @Test("JUnit: counts by kind, escaped text, no terminal escapes, secrets redacted")
    func junit() {
        let secret = "ghp_batchSecret12345"
        let report = JUnitReport(
            results: [
                Self.result("good", .ok, exit: 0, stats: MacroStats(requests: 1, cacheHits: 0)),
                Self.result("bad", .failed, exit: 1, stats: nil, stderr: "token \(secret) <&> \u{1B}[31mred\n"),
                Self.result("slow", .timeout, exit: 1, stats: nil),
                Self.result("never", .notRun, exit: nil, stats: nil),
            ], seconds: 3, timestamp: Date(timeIntervalSince1970: 0), secrets: [secret]
        ).xml
        #expect(report.contains(#"tests="4" failures="1" errors="1" skipped="1" time="3.000""#))
        #expect(report.contains(#"<failure type="failed" message="exit code 1">token REDACTED &lt;&amp;&gt; "#))
        #expect(report.contains(#"<error type="timeout" message="timeout">"#))
        #expect(report.contains(#"<skipped message="not run: the batch stopped first"/>"#))
        #expect(report.contains(#"<property name="good.requests" value="1"/>"#))
        #expect(report.contains(#"<property name="bad.macro" value="macros/bad.py"/>"#))
        #expect(
            !report.contains("file=")
                && !report.contains(
                    "<testsuites name=\"apimacro batch\" tests=\"4\" failures=\"1\" errors=\"1\" skipped")
        )
        #expect(!report.contains(secret))
        #expect(!report.contains("\u{1B}"))
        #expect(report.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
    }
}
