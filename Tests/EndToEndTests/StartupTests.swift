import Foundation
import TestSupport
import Testing

/// Start-up does only what the macro needs (issue 13): what a macro that sends
/// nothing finds in its own process, read from /proc and `sys.modules`.
@Suite("start-up pays only for what the macro uses", .serialized)
struct StartupTests {
    /// A macro that prints its process's thread names and whether `collections` and `types` are loaded,
    /// sends one request when given a URL, then prints the thread names again.
    static let probe = """
        import os, sys
        def threads():
            names = []
            for task in os.listdir("/proc/self/task"):
                try:
                    with open(f"/proc/self/task/{task}/comm") as f:
                        names.append(f.read().strip())
                except OSError:
                    pass  # a thread that ended meanwhile
            return sorted(names)
        def curl():
            with open("/proc/self/maps") as f:
                return "libcurl" in f.read()
        print("collections loaded:", "collections" in sys.modules)
        print("types loaded:", "types" in sys.modules)
        print("before:", threads())
        print("libcurl before:", curl())
        if len(sys.argv) > 1:
            import apimacro
            apimacro.get(sys.argv[1] + "/users/octocat", cache=False)
            print("after:", threads())
            print("libcurl after:", curl())
        """

    static func line(_ prefix: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
    }

    @Test("a macro that sends nothing neither loads libcurl nor starts a transfer thread; the first request loads it")
    func libcurlOnFirstRequest() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["probe.py": Self.probe])
        defer { space.remove() }
        let idle = try await space.run("run", "--no-cache", "probe.py")
        let busy = try await space.run("run", "--no-cache", "probe.py", server.baseURL)
        try await server.shutdown()
        #expect(idle.status == 0, "\(idle.stderr)")
        #expect(busy.status == 0, "\(busy.stderr)")
        let before = try #require(Self.line("before:", in: idle.stdout), "\(idle.stdout)")
        #expect(
            !before.contains("NIO-") && !before.contains("apimacro-curl"), "an empty macro started threads: \(before)")
        #expect(Self.line("libcurl before:", in: idle.stdout) == "libcurl before: False", "\(idle.stdout)")
        // The same probe after a request: libcurl is mapped then, so the check above can see it.
        #expect(Self.line("libcurl after:", in: busy.stdout) == "libcurl after: True", "\(busy.stdout)")
        // The request ran on the macro's own thread: no transfer thread was needed for it.
        let after = try #require(Self.line("after:", in: busy.stdout), "\(busy.stdout)")
        #expect(!after.contains("apimacro-curl"), "a plain call used the transfer thread: \(after)")
        #expect(server.requests.contains { $0.path == "/users/octocat" })
    }

    @Test("an empty macro imports neither collections nor types (python3 -c pass does not either)")
    func noExtraImports() async throws {
        let space = try Workspace(files: ["probe.py": Self.probe])
        defer { space.remove() }
        let result = try await space.run("run", "probe.py")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.line("collections loaded:", in: result.stdout) == "collections loaded: False", "\(result.stdout)")
        #expect(Self.line("types loaded:", in: result.stdout) == "types loaded: False", "\(result.stdout)")
    }
}
