import Foundation
import Testing

/// scripts/demo (issue 27, friction 14): the build's ~830 lines stay in a log, so the user sees
/// the example's answer.
@Suite("scripts/demo")
struct DemoScriptTests {
    static let repository = ExampleReplayTests.repository

    /// A tree holding copies of scripts/demo and what it runs, with the suite's binary as
    /// .build/debug/apimacro and, first on the PATH, a stand-in `swift` that prints 830 lines as
    /// the first build does (then fails with `error: FAIL` when FAIL is set): a real build here
    /// would be a second swift build.
    static func demoTree(in space: Workspace) throws -> (tree: URL, environment: [String: String]) {
        let fileManager = FileManager.default
        let tree = space.url.appendingPathComponent("tree")
        for path in [
            "scripts/demo", "scripts/quietly", "scripts/setup-system", "examples/github-profile.py",
            "examples/cassettes/github-profile.har",
        ] {
            let target = tree.appendingPathComponent(path)
            try fileManager.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try fileManager.copyItem(at: repository.appendingPathComponent(path), to: target)
        }
        let binary = tree.appendingPathComponent(".build/debug/apimacro")
        try fileManager.createDirectory(at: binary.deletingLastPathComponent(), withIntermediateDirectories: true)
        try fileManager.createSymbolicLink(at: binary, withDestinationURL: Binary.url)
        try space.write(
            "stand-in/swift",
            """
            #!/bin/sh
            i=1
            while [ $i -le 830 ]; do echo "[$i/830] Compiling apimacro File$i.swift"; i=$((i + 1)); done
            if [ -n "$FAIL" ]; then echo "error: $FAIL" >&2; exit 1; fi

            """)
        try fileManager.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: space.url.appendingPathComponent("stand-in/swift").path)
        return (tree, ["PATH": space.url.appendingPathComponent("stand-in").path + ":/usr/bin:/bin:/usr/sbin:/sbin"])
    }

    @Test("scripts/demo keeps the build's output in a log: one line on stderr, then the 3-line answer")
    func demoQuiet() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let (tree, environment) = try Self.demoTree(in: space)
        let demo = tree.appendingPathComponent("scripts/demo")
        let result = try await Binary.run([], in: space.url, environment: environment, limit: 600, executable: demo)
        #expect(result.status == 0, "\(result.stderr)")
        // It ends by naming the binary it built (issue 36, friction 13).
        #expect(
            result.stderr
                == "building apimacro (first time: a few minutes)...\nthe binary is \(tree.path)/.build/debug/apimacro; "
                + "try: .build/debug/apimacro --help\n", "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(result.stdout.prefix(2000))")
        #expect(lines.first?.hasPrefix("login ") == true)
        #expect(lines.last?.hasPrefix("octocat  The Octocat") == true, "\(result.stdout.prefix(2000))")
        let log = try String(contentsOf: tree.appendingPathComponent(".build/demo-build.log"), encoding: .utf8)
        #expect(log.split(separator: "\n").count == 830)

        // A failing build shows its end and where the whole log is, and nothing runs.
        let failing = environment.merging(["FAIL": "no such module 'CPython'"]) { $1 }
        let failed = try await Binary.run([], in: space.url, environment: failing, limit: 600, executable: demo)
        #expect(failed.status == 1)
        #expect(failed.stdout.isEmpty, "\(failed.stdout.prefix(2000))")
        #expect(failed.stderr.contains("error: no such module 'CPython'\n"))
        #expect(failed.stderr.contains("the whole output is in .build/demo-build.log"), "\(failed.stderr)")
        #expect(!failed.stderr.contains("[1/830]"))
    }
}
