import Foundation
import Testing

/// `batch --junit FILE` and `--output-dir DIR`: their folders made or refused before any job
/// runs, and a report that cannot be written once the jobs ran written elsewhere, with a
/// message that says where (issue 36, "Nothing lost at the end of a batch").
///
/// The suite runs as root on CI, where a mode cannot make a folder unwritable: a file standing
/// where a folder should be ("Not a directory"), or a folder under /proc, does it for anyone.
@Suite("batch: report files, checked before the jobs and never lost after", .serialized)
struct BatchReportFileTests {
    /// A macro that leaves `ran.txt` behind: whether any job ran.
    static let marker = "open('ran.txt', 'a').write('ran\\n')\n"

    @Test("--junit into a missing folder makes it; the report is there")
    func junitMakesItsFolder() async throws {
        let space = try Workspace(files: ["ok.py": Self.marker])
        defer { space.remove() }
        let result = try await space.run("batch", "--junit", "reports/ci/batch.xml", "ok.py")
        #expect(result.status == 0, "\(result.stderr)")
        let report = try String(contentsOf: space.url.appendingPathComponent("reports/ci/batch.xml"), encoding: .utf8)
        #expect(report.contains(#"<testcase name="ok""#))
    }

    @Test("--junit or --output-dir where no folder can be made: exit 2 before any job runs")
    func unwritableReportPathsRefusedFirst() async throws {
        let space = try Workspace(files: ["ok.py": Self.marker, "taken": "a file, not a folder\n"])
        defer { space.remove() }
        let cases: [[String]] = [
            ["--junit", "taken/batch.xml"],
            ["--junit", "/proc/apimacro-no-such/batch.xml"],
            ["--output-dir", "taken"],
            ["--output-dir", "taken/out"],
            ["--junit", "."],
        ]
        for options in cases {
            let result = try await Binary.run(["batch"] + options + ["ok.py"], in: space.url)
            let shown = options.joined(separator: " ")
            #expect(result.status == 2, "\(shown): \(result.stderr)")
            #expect(result.stderr.hasPrefix("apimacro: \(options[0]): cannot write "), "\(shown): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(shown): one line: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran.txt").path))
        }
    }

    @Test("run --stats-file (batch's counts from each child) is checked before the macro runs; its folder made")
    func statsFileChecked() async throws {
        let space = try Workspace(files: ["ok.py": Self.marker, "taken": "a file\n"])
        defer { space.remove() }
        let refused = try await space.run("run", "--stats-file", "taken/stats.json", "ok.py")
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("apimacro: --stats-file: cannot write "), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("ran.txt").path))
        let made = try await space.run("run", "--stats-file", "counts/stats.json", "ok.py")
        #expect(made.status == 0, "\(made.stderr)")
        let counts = try Data(contentsOf: space.url.appendingPathComponent("counts/stats.json"))
        let decoded = try JSONSerialization.jsonObject(with: counts) as? [String: Int]
        #expect(decoded == ["requests": 0, "cacheHits": 0], "\(String(decoding: counts, as: UTF8.self))")
    }

    @Test("a JUnit report that cannot be written after the jobs ran goes to the working directory, named")
    func junitRescuedAfterTheJobs() async throws {
        // The macro takes the report's folder away while the batch runs: a file where it was.
        let macro = "import shutil\nshutil.rmtree('reports')\nopen('reports', 'w').close()\n" + Self.marker
        let space = try Workspace(files: ["takes.py": macro])
        defer { space.remove() }
        let result = try await space.run("batch", "--junit", "reports/batch.xml", "takes.py")
        #expect(result.status == 1, "the report is not where it was asked for: \(result.stderr)")
        let rescued = space.url.appendingPathComponent("batch.xml")
        #expect(
            result.stderr.contains(
                "apimacro: cannot write the JUnit report to \(space.url.path)/reports/batch.xml (Not a directory); "
                    + "wrote it to \(rescued.path) instead"), "\(result.stderr)")
        let report = try String(contentsOf: rescued, encoding: .utf8)
        #expect(report.contains(#"<testcase name="takes""#))
        #expect(result.stdout.contains("1 macro: 1 ok"), "the summary still printed: \(result.stdout)")
    }

    @Test("an --output-dir file that cannot be written after its job ran is written elsewhere, named")
    func outputRescuedAfterTheJob() async throws {
        let macro = "import shutil\nprint('kept line')\nshutil.rmtree('out')\nopen('out', 'w').close()\n"
        let space = try Workspace(files: ["takes.py": macro])
        defer { space.remove() }
        let result = try await space.run("batch", "--output-dir", "out", "takes.py")
        #expect(result.status == 0, "the job itself succeeded: \(result.stderr)")
        let rescued = space.url.appendingPathComponent("takes.out")
        #expect(
            result.stderr.contains(
                "apimacro: takes: cannot write the output to \(space.url.path)/out/takes.out (Not a directory); "
                    + "wrote it to \(rescued.path) instead"), "\(result.stderr)")
        #expect(try String(contentsOf: rescued, encoding: .utf8) == "kept line\n")
    }
}

/// Error paths swept for Foundation's and Swift's raw error text (issue 36): every run of the
/// binary is also checked by `Binary.run` itself (`RawErrorText`); these are the file errors
/// a user meets most, each made to happen on purpose.
@Suite("no raw Foundation error text on any error path")
struct RawErrorTextTests {
    @Test("file errors of every command read as the system's words")
    func fileErrorsInPlainWords() async throws {
        let space = try Workspace(files: ["ok.py": "print('ok')\n", "taken": "x\n", "folder/keep": "x\n"])
        defer { space.remove() }
        let runs: [[String]] = [
            ["run", "folder"],
            ["run", "missing.py"],
            ["run", "--replay", "missing.har", "ok.py"],
            ["run", "--replay", "folder", "ok.py"],
            ["run", "--record", "taken/x.har", "ok.py"],
            ["run", "--record", "missing/x.har", "ok.py"],
            ["batch", "--file", "missing.txt"],
            ["batch", "--file", "folder"],
            ["batch", "--record", "taken/x.har", "ok.py"],
            ["batch", "--junit", "taken/x.xml", "ok.py"],
            ["batch", "--output-dir", "taken", "ok.py"],
            ["api", "github", "/users/octocat", "-F", "a=@missing.json"],
            ["api", "github", "/users/octocat", "-F", "a=@folder"],
        ]
        for arguments in runs {
            let result = try await Binary.run(arguments, in: space.url)
            #expect(result.status != 0, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.isEmpty, "\(arguments) says why")
            // Binary.run records any raw text; this names the run in the failure too.
            #expect(RawErrorText.marks(in: result.stderr) == [], "\(arguments): \(result.stderr)")
        }
    }
}
