import Foundation
import Testing

/// Help output is kept as snapshot files; `APIMACRO_RECORD_SNAPSHOTS=1 swift test` re-records them.
@Suite("help snapshots")
struct HelpTests {
    static let snapshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Snapshots")

    @Test(
        "help text matches its snapshot",
        arguments: [
            ["--help"], ["run", "--help"], ["help", "run"], ["batch", "--help"], ["repl", "--help"],
            ["login", "--help"],
            ["logout", "--help"], ["api", "--help"], ["state", "--help"], ["help", "environment"], ["__apimacro_man"],
            ["mcp", "--help"],
        ])
    func help(arguments: [String]) async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Binary.run(arguments, in: space.url)
        #expect(result.status == 0)
        let file = Self.snapshots.appendingPathComponent(
            arguments.joined(separator: "_").replacingOccurrences(of: "-", with: "") + ".txt")
        if ProcessInfo.processInfo.environment["APIMACRO_RECORD_SNAPSHOTS"] == "1" {
            try Data(result.stdout.utf8).write(to: file)
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(result.stdout == expected)
    }
}
