import Batch
import Foundation
import Testing

/// The pieces of issue 40's reports and batch options below the command line: CSV rows for
/// `--each`, `tags=` in a jobs file, the TAP text and the HTML page's escaping.
@Suite("reports: CSV rows, tags, TAP, the page")
struct ReportModelTests {
    @Test("CSV: quoted commas, doubled quotes, a newline inside quotes, CRLF, a BOM, a last line without one")
    func csv() throws {
        let rows = try EachRows.parse(
            "\u{FEFF}user,note\r\nada,\"a, \"\"b\"\"\"\r\nbob,\"two\nlines\"\ncy,", label: "r.csv")
        #expect(rows.columns == ["user", "note"])
        #expect(rows.rows.map(\.fields) == [["ada", "a, \"b\""], ["bob", "two\nlines"], ["cy", ""]])
        #expect(rows.rows.map(\.line) == [2, 3, 5])
    }

    @Test("CSV that is not: a stray quote, an unclosed one, a short row, a blank or repeated column, no rows")
    func notCSV() {
        let cases = [
            ("a,b\nx\"y,z\n", "r.csv:2 is not CSV: a quote inside an unquoted field"),
            ("a,b\n\"x,z\n", "a quoted field is never closed"),
            ("a,b\nx\n", "r.csv:2 is not CSV as its header says: 1 field, the header has 2"),
            ("a,,b\n1,2,3\n", "column 2 has no name"),
            ("a,a\n1,2\n", "the column 'a' is named twice"),
            ("a,b\n", "has a header but no rows"),
            ("", "is empty"),
        ]
        for (text, message) in cases {
            #expect(throws: BatchError.self) { try EachRows.parse(text, label: "r.csv") }
            do {
                _ = try EachRows.parse(text, label: "r.csv")
            } catch {
                #expect("\(error)".contains(message), "\(text.debugDescription): \(error)")
            }
        }
    }

    @Test("rows to jobs: options as --name=VALUE, flags by their default, positionals after --")
    func rowsToJobs() throws {
        let rows = try EachRows.parse("user,loud,quiet,limit\n-ada,yes,no,5\n", label: "r.csv")
        let parameters = [
            EachRows.Parameter(name: "user", passing: "positional", required: true, flag: ""),
            EachRows.Parameter(name: "loud", passing: "--loud", required: false, flag: "false"),
            EachRows.Parameter(name: "quiet", passing: "--quiet", required: false, flag: "true"),
            EachRows.Parameter(name: "limit", passing: "--limit", required: false, flag: ""),
        ]
        let jobs = try rows.jobs(macro: "m.py", parameters: parameters, taken: [])
        #expect(jobs.map(\.name) == ["m.row1"])
        #expect(jobs.first?.arguments == ["--loud", "--no-quiet", "--limit=5", "--", "-ada"])
    }

    @Test("tags= before or after name=; --tags and --exclude-tags choose; an unknown tag is named")
    func tags() throws {
        let file = BatchJobsFile(label: "jobs.txt", text: "tags=a,b name=one x.py\nname=two tags=b y.py 1\nz.py\n")
        let jobs = try file.jobs()
        #expect(jobs.map(\.tags) == [["a", "b"], ["b"], []])
        #expect(jobs.map(\.name) == ["one", "two", "z"])
        #expect(try BatchJob.select(jobs, tags: ["b"], excluding: ["a"]).map(\.name) == ["two"])
        #expect(try BatchJob.select(jobs, tags: [], excluding: ["b"]).map(\.name) == ["z"])
        #expect(throws: BatchError.self) { try BatchJob.select(jobs, tags: ["c"], excluding: []) }
        #expect(throws: BatchError.self) { try BatchJobsFile(label: "j", text: "tags=a tags=b x.py\n").jobs() }
    }

    @Test("TAP: a point per job, a SKIP for one not run, '#' escaped, diagnostics as YAML-safe strings")
    func tap() {
        var ok = BatchResult(
            name: "a#1", macro: "a.py", status: .ok, exitCode: 0, seconds: 0.5,
            stats: MacroStats(
                requests: 2, cacheHits: 0, checks: [.init(name: "x: y", passed: true, seen: "'a/b\u{7}'")]),
            stdout: "", stderr: "")
        ok.exchanges = []
        let skipped = BatchResult(
            name: "b", macro: "b.py", status: .notRun, exitCode: nil, seconds: 0, stats: nil, stdout: "", stderr: "")
        let text = Report(title: "t", started: Date(), seconds: 1, results: [ok, skipped], secrets: []).tap
        #expect(text.hasPrefix("TAP version 13\n1..2\nok 1 - a\\#1\n  ---\n"), "\(text)")
        #expect(text.contains(#"    - name: "x: y""#), "\(text)")
        #expect(text.contains(#"      seen: "'a/b\u0007'""#), "\(text)")
        #expect(text.contains("ok 2 - b # SKIP not run"), "\(text)")
    }

    @Test("the page: data never ends its script block, the title escaped, secrets redacted everywhere")
    func page() {
        let result = BatchResult(
            name: "j", macro: "</script><b>", status: .failed, exitCode: 1, seconds: 0,
            stats: MacroStats(
                requests: 0, cacheHits: 0, checks: [.init(name: "c", passed: false, seen: "s3cr3t-value")]),
            stdout: "</script><script>alert(1)</script>", stderr: "")
        let html = Report(title: "<t>", started: Date(), seconds: 1, results: [result], secrets: ["s3cr3t-value"])
            .text(.html)
        #expect(html.components(separatedBy: "</script>").count == 3, "only the two script blocks end")
        #expect(html.contains("<title>&lt;t&gt; report</title>"))
        #expect(!html.contains("s3cr3t-value"))
        #expect(html.contains("Content-Security-Policy") && html.contains("default-src 'none'"))
    }
}
