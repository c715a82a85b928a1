import Foundation
import Testing

/// Numbers as the binary writes them, kept as a snapshot.
///
/// Recorded from the binary before the formatting code left Foundation's `String(format:)`
/// (issue 43): every `--format` on stdout and the `.csv` and `.jsonl` files of `output(to=)`
/// (Store's own number text). Whole numbers, halves, a third, minus zero, the 1e16 edge where
/// `1.0` style ends, exponents, integers. `APIMACRO_RECORD_SNAPSHOTS=1 swift test` re-records it.
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

    @Test("numbers on stdout and in output files match their snapshot")
    func numbers() async throws {
        let space = try Workspace(files: [
            "numbers.py": Self.rows + "apimacro.output(rows)\n",
            "files.py": Self.rows + "apimacro.output(rows, to=\"rows.csv\")\n"
                + "apimacro.output(rows, to=\"rows.jsonl\")\n",
        ])
        defer { space.remove() }
        var text = ""
        for format in ["csv", "ndjson", "json", "table"] {
            let result = try await space.run("run", "--format", format, "numbers.py")
            #expect(result.status == 0, "\(result.stderr)")
            text += "== --format \(format)\n" + result.stdout
        }
        let written = try await space.run("run", "files.py")
        #expect(written.status == 0, "\(written.stderr)")
        for file in ["rows.csv", "rows.jsonl"] {
            text += "== \(file)\n" + (try String(contentsOf: space.url.appendingPathComponent(file), encoding: .utf8))
        }
        let snapshot = HelpTests.snapshots.appendingPathComponent("formatting_numbers.txt")
        if ProcessInfo.processInfo.environment["APIMACRO_RECORD_SNAPSHOTS"] == "1" {
            try Data(text.utf8).write(to: snapshot)
        }
        let expected = try String(contentsOf: snapshot, encoding: .utf8)
        #expect(text == expected)
    }
}
