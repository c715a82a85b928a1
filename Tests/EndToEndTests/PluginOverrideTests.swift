import Foundation
import Testing

/// A user's plugin of a shipped plugin's name (issue 27, friction 14): an override, not a
/// failure.
@Suite("a plugin that overrides a shipped one")
struct PluginOverrideTests {
    @Test("plugins list names the override and exits 0; plugins show says what the plugin overrides")
    func listAndShow() async throws {
        let shipped = ExampleReplayTests.repository.appendingPathComponent("plugins/openweather").standardizedFileURL
        let manifest = try String(contentsOf: shipped.appendingPathComponent("plugin.toml"), encoding: .utf8)
        let space = try Workspace(files: [
            ".config/apimacro/plugins/openweather/plugin.toml": manifest.replacingOccurrences(
                of: "description = \"OpenWeather 2.5", with: "description = \"My OpenWeather 2.5")
        ])
        defer { space.remove() }
        let mine = space.url.appendingPathComponent(".config/apimacro/plugins/openweather")
        let list = try await space.run("plugins", "list")
        #expect(list.status == 0, "\(list.stdout)\(list.stderr)")
        #expect(!list.stdout.contains("Failed to load"), "\(list.stdout)")
        #expect(list.stdout.contains("  My OpenWeather 2.5"), "the user's plugin is used: \(list.stdout)")
        #expect(
            list.stdout.hasSuffix(
                "\n\nOverridden (a plugin of the same name, found earlier in the search order, is used instead):\n"
                    + "  openweather: \(shipped.path) (used: \(mine.path))\n"), "\(list.stdout)")
        let show = try await space.run("plugins", "show", "openweather")
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("  manifest:     \(mine.path)/plugin.toml\n"), "\(show.stdout)")
        #expect(
            show.stdout.contains(
                "  overrides:    \(shipped.path) (a plugin of the same name found later in the search order)\n"),
            "\(show.stdout)")
    }
}
