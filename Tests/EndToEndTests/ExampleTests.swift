import Foundation
import Testing

@Suite("examples")
struct ExampleTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples")

    static var offlineExamples: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: examples.path)) ?? []).filter { $0.hasSuffix(".py") }.sorted()
    }

    @Test("every example runs and prints something", arguments: offlineExamples)
    func example(name: String) async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run("run", "--format", "json", Self.examples.appendingPathComponent(name).path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.isEmpty)
    }

    @Test("the README's hello example prints its table")
    func hello() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run("run", "--format", "table", Self.examples.appendingPathComponent("hello.py").path, "--name", "Ada", "--times", "2")
        #expect(result.stdout == "n  greeting       length\n-  -------------  ------\n1  Hello, Ada!         3\n2  Bonjour, Ada!       3\n")
    }
}
