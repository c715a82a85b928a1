import Clients
import Foundation
import TestSupport
import Testing
import WebAPI

@testable import PluginHost

@Suite("plugin discovery: folders, failures, duplicates")
struct RegistryTests {
    static func manifest(_ name: String, prefix: String = "/hn/api/v1") -> String {
        """
        name = "\(name)"
        description = "Plugin \(name)"
        base_url = "https://example.com"
        pagination = { kind = "page_param", param = "page", first = 0 }

        [endpoints.search]
        path = "\(prefix)/search"
        params = { query = "string!" }
        result = "hits"
        """
    }

    @Test("one broken plugin beside two good ones: both good ones load and answer, the broken one is reported once")
    func brokenBesideGood() async throws {
        let folder = PluginFolder()
        defer { folder.remove() }
        try folder.write("alpha", Self.manifest("alpha"))
        let broken = try folder.write(
            "broken", Self.manifest("broken").replacingOccurrences(of: "page_param", with: "scroll"))
        try folder.write("gamma", Self.manifest("gamma"))
        try folder.write(".hidden", Self.manifest("hidden"))
        let registry = PluginRegistry.load(
            folders: [folder.url, folder.url.appendingPathComponent("missing")], reservedNames: builtInNames)
        #expect(registry.plugins.map(\.name) == ["alpha", "gamma"])
        #expect(registry.failures.count == 1)
        let failure = try #require(registry.failure(named: "broken"))
        #expect(
            failure.error.description
                == "\(broken.path): pagination.kind: unknown kind \"scroll\"; use one of none, link_header, next_url, page_param, offset, cursor, header_cursor"
        )
        let server = try await TestServer.start()
        let transport = CurlTransport(userAgent: "apimacro/test")
        for manifest in registry.plugins {
            let client = PluginClient(
                manifest: manifest, environment: ["APIMACRO_\(manifest.name.uppercased())_URL": server.baseURL],
                storedToken: nil,
                transport: transport, log: ExchangeLog(logger: nil), redactor: Redactor(secrets: []))
            let response = try await client.send(try client.request("search", [("query", .string(manifest.name))]).1)
            #expect(
                JSONPath.value(in: response.body, path: ["hits", "0", "title"]) as? String == "\(manifest.name) story 1"
            )
        }
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("two plugins with one name in one folder: the first found wins, the second is an error naming both files")
    func duplicateNames() throws {
        let folder = PluginFolder()
        defer { folder.remove() }
        let kept = try folder.write("one", Self.manifest("same"))
        let dropped = try folder.write("two", Self.manifest("same"))
        let registry = PluginRegistry.load(folders: [folder.url], reservedNames: builtInNames)
        #expect(registry.plugins.map(\.file.path) == [kept.path])
        #expect(registry.overridden.isEmpty)
        #expect(
            registry.failures.map(\.error.description) == [
                "\(dropped.path): name: plugin \"same\" is already loaded from \(kept.path); rename this one (name = \"same_2\") or remove one of the folders"
            ])
    }

    @Test("a plugin of the name of one in a later folder overrides it: no failure, the override is reported")
    func override() throws {
        let user = PluginFolder()
        let shipped = PluginFolder()
        defer {
            user.remove()
            shipped.remove()
        }
        let kept = try user.write("same", Self.manifest("same"))
        let overridden = try shipped.write("same", Self.manifest("same"))
        try shipped.write("other", Self.manifest("other"))
        let registry = PluginRegistry.load(folders: [user.url, shipped.url], reservedNames: builtInNames)
        #expect(registry.plugins.map(\.name) == ["other", "same"])
        #expect(registry.plugin(named: "same")?.file.path == kept.path)
        #expect(registry.failures.isEmpty)
        #expect(registry.overridden.map(\.name) == ["same"])
        #expect(registry.overridden.map(\.folder.path) == [overridden.deletingLastPathComponent().path])
        #expect(registry.overridden.map(\.winner.path) == [kept.deletingLastPathComponent().path])
    }

    @Test(
        "search order: APIMACRO_PLUGINS entries, $APIMACRO_HOME/plugins, then the checkout's plugins/ found from the executable"
    )
    func folders() throws {
        let checkout = PluginFolder()
        defer { checkout.remove() }
        try checkout.write("plugins/demo", Self.manifest("demo"))
        try checkout.write(".", "// swift-tools-version: 6.0", file: "Package.swift")
        let executable = checkout.url.appendingPathComponent(".build/debug/apimacro")
        try FileManager.default.createDirectory(
            at: executable.deletingLastPathComponent(), withIntermediateDirectories: true)
        let repository = try #require(PluginRegistry.repositoryFolder(executable: executable))
        #expect(
            repository.standardizedFileURL.path
                == checkout.url.appendingPathComponent("plugins").standardizedFileURL.path)
        let folders = PluginRegistry.folders(
            environment: ["APIMACRO_PLUGINS": "/a:/b"], home: URL(fileURLWithPath: "/home/x/.config/apimacro"),
            executable: executable)
        #expect(folders.map(\.path) == ["/a", "/b", "/home/x/.config/apimacro/plugins", repository.path])
        #expect(PluginRegistry.repositoryFolder(executable: URL(fileURLWithPath: "/usr/local/bin/apimacro")) == nil)
        // A folder that is itself a plugin is accepted too.
        let registry = PluginRegistry.load(
            folders: [repository.appendingPathComponent("demo")], reservedNames: builtInNames)
        #expect(registry.plugins.map(\.name) == ["demo"])
        #expect(registry.macroFolders.isEmpty)
    }

    @Test("the folder above a path, read as text, is what URL.deletingLastPathComponent gives")
    func parentFolder() {
        for path in ["/", "/a", "/a/", "/a/b", "/a/b/", "/a//b", "/usr/local/bin/apimacro", "/work/x/.build/debug"] {
            let expected = URL(fileURLWithPath: path).deletingLastPathComponent().path
            #expect(PluginRegistry.parent(of: path) == expected, "\(path)")
        }
    }
}
