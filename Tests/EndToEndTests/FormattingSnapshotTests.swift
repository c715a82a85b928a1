import Foundation
import Testing

/// Numbers, dates and URLs as the binary writes them, kept as snapshots.
///
/// Recorded from the binary before the formatting code left Foundation's `String(format:)`
/// (issue 43): every `--format` on stdout and the `.csv` and `.jsonl` files of `output(to=)`
/// (Store's own number text). Whole numbers, halves, a third, minus zero, the 1e16 edge where
/// `1.0` style ends, exponents, integers. Dates and URLs: a recorded run's report as JSON (its
/// start as ISO 8601 with milliseconds, its times in milliseconds) and `api --dry-run`'s request
/// lines (a query percent-encoded, a path and an absolute URL kept as given).
/// `APIMACRO_RECORD_SNAPSHOTS=1 swift test` re-records them. `InstallTests` compares the
/// `.deb`'s stripped binary with the same snapshots.
@Suite("formatting snapshots")
struct FormattingSnapshotTests {
    static let rows = """
        import apimacro
        rows = [{"label": label, "value": value} for label, value in [
            ("one", 1.0), ("minus three", -3.0), ("half", 2.5), ("tenth", 0.1), ("third", 1 / 3),
            ("minus zero", -0.0), ("big round", 123456789.0), ("1e15", 1e15),
            ("below 1e16", 9999999999999998.0),
            ("1e16", 1e16), ("1e20", 1e20), ("tiny", 2.5e-07), ("integer", 7), ("huge integer", 10**18),
        ]]

        """

    /// The snapshot file `name`: compared with `text`, or first written when recording.
    static func expectSnapshot(_ text: String, named name: String, record: Bool = true) throws {
        let snapshot = HelpTests.snapshots.appendingPathComponent(name)
        if record, ProcessInfo.processInfo.environment["APIMACRO_RECORD_SNAPSHOTS"] == "1" {
            try Data(text.utf8).write(to: snapshot)
        }
        let expected = try String(contentsOf: snapshot, encoding: .utf8)
        #expect(text == expected, "\(name) differs")
    }

    /// What `executable` (the built binary unless given) writes for the numbers in `rows`.
    static func numbersText(in space: Workspace, executable: URL? = nil) async throws -> String {
        try space.write("numbers.py", rows + "apimacro.output(rows)\n")
        try space.write(
            "files.py", rows + "apimacro.output(rows, to=\"rows.csv\")\n" + "apimacro.output(rows, to=\"rows.jsonl\")\n"
        )
        var text = ""
        for format in ["csv", "ndjson", "json", "table"] {
            let result = try await Binary.run(
                ["run", "--format", format, "numbers.py"], in: space.url, executable: executable)
            #expect(result.status == 0, "\(result.stderr)")
            text += "== --format \(format)\n" + result.stdout
        }
        let written = try await Binary.run(["run", "files.py"], in: space.url, executable: executable)
        #expect(written.status == 0, "\(written.stderr)")
        for file in ["rows.csv", "rows.jsonl"] {
            text += "== \(file)\n" + (try String(contentsOf: space.url.appendingPathComponent(file), encoding: .utf8))
        }
        return text
    }

    /// What `executable` writes for dates and URLs: the report of `cassette` (a recorded HAR)
    /// as JSON, and `api --dry-run`'s first line for requests whose URLs need encoding.
    static func datesAndURLsText(cassette: URL, in space: Workspace, executable: URL? = nil) async throws -> String {
        // A copy in the workspace, named relatively: the report names its file.
        try FileManager.default.copyItem(at: cassette, to: space.url.appendingPathComponent("recorded.har"))
        var text = "== report recorded.har -o report.json (\(cassette.lastPathComponent))\n"
        let report = try await Binary.run(
            ["report", "recorded.har", "-o", "report.json"], in: space.url, executable: executable)
        #expect(report.status == 0, "\(report.stderr)")
        // The report names the HAR by its absolute path: the workspace's, different each run.
        text +=
            try String(contentsOf: space.url.appendingPathComponent("report.json"), encoding: .utf8)
            .replacingOccurrences(of: space.url.path, with: "WORKSPACE") + "\n"
        let requests: [[String]] = [
            ["repos/cli/cli/issues", "-X", "GET", "-f", "q=naïve café & 100%", "-f", "since=2020-01-31T23:59:59Z"],
            [
                "search/issues", "-X", "GET", "-f", "q=label:\"good first issue\" created:>=2026-01-01", "-F",
                "per_page=5",
            ],
            ["repos/a b/c:d[1]/contents/ä ö.txt"],
            ["https://example.com/ä/x?y=1&z=a+b#frag"],
        ]
        for arguments in requests {
            let result = try await Binary.run(
                ["api", "--dry-run"] + arguments, in: space.url,
                environment: ["APIMACRO_GITHUB_TOKEN": "ghp_formatting"],
                executable: executable)
            #expect(result.status == 0, "\(result.stderr)")
            let request = result.stdout.split(separator: "\n").first { !$0.hasPrefix("#") } ?? ""
            text += "== api --dry-run \(arguments.joined(separator: " "))\n\(request)\n"
        }
        return text
    }

    static let cassette = InstallTests.repository.appendingPathComponent("examples/cassettes/github-profile.har")

    @Test("numbers on stdout and in output files match their snapshot")
    func numbers() async throws {
        let space = try Workspace()
        defer { space.remove() }
        try Self.expectSnapshot(try await Self.numbersText(in: space), named: "formatting_numbers.txt")
    }

    @Test("dates in a report and URLs of api --dry-run match their snapshot")
    func datesAndURLs() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let text = try await Self.datesAndURLsText(cassette: Self.cassette, in: space)
        try Self.expectSnapshot(text, named: "formatting_dates_urls.txt")
    }
}
