import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `import apimacro` from a plain python3 (issue 42): the wheel `scripts/package --wheel` makes of
/// the extension module `swift build` built beside the binary, installed with pip into a fresh
/// virtualenv of Debian's /usr/bin/python3, used by a script and by pytest against the loopback
/// server.
@Suite("the wheel: import apimacro from Debian's python3")
struct WheelTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let token = "ghp_wheelTestToken0123456789abcdef"

    /// The virtualenv holding the installed wheel, made once per test process.
    static func virtualEnvironment() async throws -> URL {
        try await installed.value
    }

    /// Where the wheel is made and installed: removed when the test process exits.
    private static let work = FileManager.default.temporaryDirectory.appendingPathComponent(
        "apimacro-wheel-\(UUID().uuidString)")

    private static let installed = Task<URL, any Error> {
        let folder = work
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: WheelTests.work) }
        // The shared object `swift build` made next to the binary (the same objects: no second build).
        let extensionModule = Binary.url.deletingLastPathComponent().appendingPathComponent("libApimacroExtension.so")
        let made = try await Binary.run(
            [
                "--wheel", "--extension", extensionModule.path, "--output", folder.path,
                "--allow-unpackaged-libraries",
            ],
            in: folder, executable: repository.appendingPathComponent("scripts/package"))
        guard made.status == 0, let wheel = made.stdout.split(separator: "\n").last.map(String.init) else {
            throw WorkspaceError("scripts/package --wheel failed (\(made.status)): \(made.stderr)")
        }
        let venv = folder.appendingPathComponent("venv")
        let created = try await Binary.run(
            ["-m", "venv", venv.path], in: folder, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        guard created.status == 0 else { throw WorkspaceError("python3 -m venv failed: \(created.stderr)") }
        let pip = try await Binary.run(
            ["-m", "pip", "install", "-q", "--no-index", "--disable-pip-version-check", wheel], in: folder,
            executable: venv.appendingPathComponent("bin/python"))
        guard pip.status == 0 else { throw WorkspaceError("pip install \(wheel) failed: \(pip.stdout)\(pip.stderr)") }
        return venv
    }

    /// What the scripts below do, by their first argument.
    static let script = """
        import apimacro
        import os, sys, threading, time

        print("imported", flush=True)
        base = os.environ.get("APIMACRO_GITHUB_URL", "")
        mode = sys.argv[1]
        if mode == "live":
            print("login", apimacro.github.user("octocat")["login"])
            print("cacheable", apimacro.get(base + "/cache/max-age/600").json()["serial"])
            print("args", apimacro.args)
        elif mode == "cached":
            print("cacheable", apimacro.get(base + "/cache/max-age/600").json()["serial"])
        elif mode == "example":
            import runpy
            runpy.run_path(sys.argv[2])["main"]("octocat")
        elif mode == "interrupt":
            try:
                apimacro.get(base + "/slow", params={"ms": "600000"})
            except KeyboardInterrupt:
                print("KeyboardInterrupt", flush=True)
                sys.exit(0)
            print("not interrupted")
        elif mode == "state":
            try:
                print("state", apimacro.state.get("count"))
            except RuntimeError as error:
                print(error)
                sys.exit(0)
            apimacro.state["count"] = (apimacro.state.get("count") or 0) + 1
            if sys.argv[2:] == ["commit"]:
                apimacro.state.commit()
        elif mode == "threads":
            waiting = threading.Thread(
                target=lambda: apimacro.get(base + "/slow", params={"ms": "600000"}), daemon=True)
            waiting.start()
            while not os.path.exists("go"):
                time.sleep(0.02)
            # The thread is in its wait (the server has its request): this thread runs meanwhile.
            print("while waiting", apimacro.github.user("octocat")["login"], flush=True)
            os._exit(0)
        """

    /// Runs `wheel.py MODE ARGS` with the virtualenv's python in `space`.
    static func python(
        _ arguments: [String], in space: Workspace, environment: [String: String],
        whileRunning: (@Sendable (Spawned) async throws -> Void)? = nil
    ) async throws -> RunResult {
        let venv = try await virtualEnvironment()
        return try await Binary.run(
            ["wheel.py"] + arguments, in: space.url, environment: environment,
            defaultSIGINT: true, executable: venv.appendingPathComponent("bin/python"), whileRunning: whileRunning)
    }

    @Test("a script: a GitHub call, a cache hit with the network off, a recording, nothing printed at import")
    func script() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["wheel.py": Self.script])
        defer { space.remove() }
        let environment = ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token]
        let har = space.url.appendingPathComponent("session.har")
        let live = try await Self.python(
            ["live", "--flag"], in: space, environment: environment.merging(["APIMACRO_RECORD": har.path]) { $1 })
        #expect(live.status == 0, "\(live.stderr)")
        #expect(live.stdout == "imported\nlogin octocat\ncacheable 1\nargs ['live', '--flag']\n", "\(live.stdout)")
        #expect(live.stderr.isEmpty, "\(live.stderr)")
        // The recording was written when the program ended, without the token.
        let recorded = try String(contentsOf: har, encoding: .utf8)
        #expect(recorded.contains("/users/octocat") && recorded.contains("/cache/max-age/600"))
        #expect(!recorded.contains(Self.token))
        // The cache answers with the network off (APIMACRO_OFFLINE), as `run --offline` does.
        let cached = try await Self.python(
            ["cached"], in: space, environment: environment.merging(["APIMACRO_OFFLINE": "1"]) { $1 })
        #expect(cached.status == 0, "\(cached.stderr)")
        #expect(cached.stdout == "imported\ncacheable 1\n", "\(cached.stdout)")
        #expect(server.requests.filter { $0.path == "/cache/max-age/600" }.count == 1)
        // The recording replays alone: the server is gone.
        try await server.shutdown()
        let replayed = try await Self.python(
            ["live"], in: space,
            environment: environment.merging(["APIMACRO_REPLAY": har.path, "APIMACRO_NO_CACHE": "1"]) { $1 })
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stdout == "imported\nlogin octocat\ncacheable 1\nargs ['live']\n", "\(replayed.stdout)")
    }

    @Test("an example's logic replayed from its cassette with no token prints what the binary printed")
    func exampleFromCassette() async throws {
        let space = try Workspace(files: ["wheel.py": Self.script])
        defer { space.remove() }
        let cassettes = Self.repository.appendingPathComponent("examples/cassettes")
        let result = try await Self.python(
            ["example", Self.repository.appendingPathComponent("examples/github-profile.py").path], in: space,
            environment: [
                "APIMACRO_REPLAY": cassettes.appendingPathComponent("github-profile.har").path,
                "APIMACRO_FORMAT": "csv",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try String(contentsOf: cassettes.appendingPathComponent("github-profile.out"), encoding: .utf8)
        #expect(result.stdout == "imported\n" + expected)
    }

    @Test("SIGINT during a slow call raises KeyboardInterrupt in the program once the request reached the server")
    func interrupt() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["wheel.py": Self.script])
        defer { space.remove() }
        let result = try await Self.python(
            ["interrupt"], in: space,
            environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_REQUEST_TIMEOUT": "600"]
        ) { process in
            // Or the program ended early (its output says why): no wait for the hang guard.
            try await waitUntil("the slow request to reach the server") {
                server.requests.contains { $0.path == "/slow" } || !process.isRunning
            }
            if process.isRunning { kill(process.processIdentifier, SIGINT) }
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "imported\nKeyboardInterrupt\n", "\(result.stdout)\(result.stderr)")
        try await server.shutdown()
    }

    @Test("a thread waiting for a slow call releases the GIL: the main thread's call completes meanwhile")
    func threadsReleaseTheGIL() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["wheel.py": Self.script])
        defer { space.remove() }
        let result = try await Self.python(
            ["threads"], in: space,
            environment: ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_REQUEST_TIMEOUT": "600"]
        ) { process in
            // Or the program ended early (its output says why): no wait for the hang guard.
            try await waitUntil("the slow request to reach the server") {
                server.requests.contains { $0.path == "/slow" } || !process.isRunning
            }
            try space.write("go", "")
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "imported\nwhile waiting octocat\n", "\(result.stdout)\(result.stderr)")
        try await server.shutdown()
    }

    @Test("apimacro.state under APIMACRO_STATE_KEY keeps what was committed; a bad setting is an ImportError")
    func stateAndSettings() async throws {
        let space = try Workspace(files: ["wheel.py": Self.script])
        defer { space.remove() }
        let keyed = ["APIMACRO_STATE_KEY": "notebook"]
        let first = try await Self.python(["state", "commit"], in: space, environment: keyed)
        #expect(first.stdout == "imported\nstate None\n", "\(first.stdout)\(first.stderr)")
        // Not committed: there is no run's end to commit it.
        let second = try await Self.python(["state"], in: space, environment: keyed)
        #expect(second.stdout == "imported\nstate 1\n", "\(second.stdout)\(second.stderr)")
        let third = try await Self.python(["state"], in: space, environment: keyed)
        #expect(third.stdout == "imported\nstate 1\n", "\(third.stdout)\(third.stderr)")
        let unnamed = try await Self.python(["state"], in: space, environment: [:])
        #expect(
            unnamed.stdout.contains("set APIMACRO_STATE_KEY=NAME before importing apimacro"),
            "\(unnamed.stdout)\(unnamed.stderr)")
        let bad = try await Self.python(["live"], in: space, environment: ["APIMACRO_OFFLINE": "maybe"])
        #expect(bad.status == 1)
        #expect(
            bad.stderr.contains("ImportError: apimacro: APIMACRO_OFFLINE: 'maybe' is not on or off"), "\(bad.stderr)")
    }

    /// A test file as a project's own tests would use apimacro.
    static let pytestFile = """
        import os

        import apimacro
        import pytest


        def test_user():
            assert apimacro.github.user("octocat")["login"] == "octocat"


        def test_not_found_is_apimacros_exception():
            with pytest.raises(apimacro.NotFound):
                apimacro.github.user("no-such-user-here")


        def test_errors_never_hold_the_token():
            with pytest.raises(apimacro.APIError) as caught:
                apimacro.get(os.environ["APIMACRO_GITHUB_URL"] + "/status/404", params={"t": os.environ["APIMACRO_GITHUB_TOKEN"]})
            assert os.environ["APIMACRO_GITHUB_TOKEN"] not in str(caught.value)
        """

    @Test("pytest runs a test file that imports apimacro against the loopback server")
    func pytest() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["test_wheel.py": Self.pytestFile])
        defer { space.remove() }
        let venv = try await Self.virtualEnvironment()
        // pytest from the tests' own tools (Tests/python-requirements.txt); apimacro from the wheel.
        let tools = try await PythonTools.virtualEnvironment()
        let result = try await Binary.run(
            ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_wheel.py"], in: space.url,
            environment: [
                "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token,
                "PYTHONPATH": tools.appendingPathComponent("lib/python3.11/site-packages").path,
            ],
            executable: venv.appendingPathComponent("bin/python"))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("3 passed"), "\(result.stdout)")
        try await server.shutdown()
    }
}
