import Foundation
import Testing

/// How `batch` takes its jobs as a new user meets it (issue 27, frictions 8 and 11): a macro's
/// arguments, paths in a jobs file, and the requests a replayed macro made.
@Suite("batch jobs: arguments, paths, replayed requests")
struct BatchJobsTests {
    static let hello = "def main(name: str = 'x', times: int = 1):\n    print(('hello ' + name + ' ') * times)\n"

    @Test("an option after a macro says how jobs take arguments, with the line to pipe in; a typo is a near miss")
    func optionAfterMacro() async throws {
        let space = try Workspace(files: ["hello.py": Self.hello])
        defer { space.remove() }
        let result = try await space.run("batch", "hello.py", "--name", "Ada L", "--times", "2")
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty, "nothing ran: \(result.stdout)")
        #expect(
            result.stderr.hasPrefix(
                "apimacro: '--name' is not an option of batch; a macro takes its arguments in a jobs file, one "
                    + "'MACRO ARGS...' per line: echo \"hello.py --name 'Ada L' --times 2\" | apimacro batch --file -"),
            "\(result.stderr)")
        // The line it gives works as given.
        let piped = try await space.run(
            "batch", "--file", "-", stdin: "hello.py --name 'Ada L' --times 2\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout.contains("hello Ada L hello Ada L"), "\(piped.stdout)")
        let typo = try await space.run("batch", "--fial-fast", "hello.py")
        #expect(typo.status == 2)
        #expect(
            typo.stderr.hasPrefix("apimacro: unknown option '--fial-fast' for batch; did you mean '--fail-fast'?"),
            "\(typo.stderr)")
    }

    @Test("paths in a jobs file are read from the working directory; one found beside the file says so")
    func jobsFilePaths() async throws {
        let space = try Workspace(files: [
            "ci/scripts/greet.py": Self.hello, "ci/from-root.txt": "ci/scripts/greet.py --name root\n",
            "ci/beside.txt": "scripts/greet.py --name beside\n",
        ])
        defer { space.remove() }
        let fromRoot = try await space.run("batch", "--file", "ci/from-root.txt")
        #expect(fromRoot.status == 0, "\(fromRoot.stderr)")
        #expect(fromRoot.stdout.contains("hello root"), "\(fromRoot.stdout)")
        let beside = try await space.run("batch", "--file", "ci/beside.txt")
        #expect(beside.status == 2)
        #expect(
            beside.stderr
                == "apimacro: ci/beside.txt:1: no such macro file: scripts/greet.py; paths in a jobs file are relative "
                + "to the working directory (\(space.url.path)), not to the file: write "
                + "\(space.url.path)/ci/scripts/greet.py or run apimacro batch from \(space.url.path)/ci\n")
    }

    @Test("a replayed macro's requests are counted: the summary and the JUnit report say how many it made")
    func replayedRequestsCount() async throws {
        let examples = ExampleTests.examples
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run(
            "batch", "--replay", examples.appendingPathComponent("cassettes/github-followers.har").path, "--file", "-",
            "--junit", "report.xml",
            stdin: "name=followers \(examples.appendingPathComponent("github-followers.py").path) --login many "
                + "--limit 120\n")
        #expect(result.status == 0, "\(result.stderr)")
        let row = result.stdout.split(separator: "\n").first { $0.hasPrefix("followers ") }.map {
            $0.split(separator: " ").map(String.init)
        }
        // Two pages of 100 followers, both answered by the recording.
        #expect(row.map { Array($0[4...5]) } == ["2", "0"], "\(result.stdout)")
        let report = try String(contentsOf: space.url.appendingPathComponent("report.xml"), encoding: .utf8)
        #expect(report.contains(#"<property name="followers.requests" value="2"/>"#), "\(report)")
    }
}
