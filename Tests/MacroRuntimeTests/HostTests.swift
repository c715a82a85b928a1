import Foundation
import MacroRuntime
import PythonBridge
import TestSupport
import Testing

/// The project root (this file is Tests/MacroRuntimeTests/HostTests.swift).
let projectRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The host for the test process (the interpreter is per process), with its
/// GitHub client pointed at a loopback test server.
struct Fixture: Sendable {
    let host: MacroHost
    let server: TestServer
    static let token = "ghp_fixtureToken0123456789"
    /// `$APIMACRO_HOME` of the test host (where logins are stored).
    static let home = FileManager.default.temporaryDirectory.appendingPathComponent(
        "apimacro-host-\(UUID().uuidString)")
}

private let fixtureTask = Task<Fixture, any Error> {
    // The home lives as long as the test process: removed when it exits.
    atexit { try? FileManager.default.removeItem(at: Fixture.home) }
    let server = try await TestServer.start()
    let host = try MacroHost(
        settings: try Settings(environment: [
            "HOME": NSTemporaryDirectory(), "APIMACRO_TEST_TOKEN": "s3cr3t-token-value",
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Fixture.token, "APIMACRO_MAX_WAIT": "5",
            "APIMACRO_HOME": Fixture.home.path, "APIMACRO_INSTAGRAM_URL": server.baseURL + "/instagram/v1",
            "APIMACRO_INSTAGRAM_CLIENT_ID": "test-client",
            "APIMACRO_SHORTENER_URL": server.baseURL + "/urlshortener/v1",
            "APIMACRO_SHORTENER_KEY": "AIza-test-key",
            // Many suites share this host and fan out thousands of calls to one endpoint; the pace
            // of GitHub's secondary limits is tested on its own (SecondaryPaceTests, GitHubPowerUserTests).
            "APIMACRO_GITHUB_PACE": "off",
        ]))
    return Fixture(host: host, server: server)
}

/// Every suite that runs Python in the shared host: they change process-wide
/// interpreter state (`sys.argv`, `sys.stderr`, `__main__`), so they never overlap.
@Suite("the embedded interpreter with apimacro", .serialized)
struct EmbeddedPython {}

/// The shared host and server.
func fixture() async throws -> Fixture { try await fixtureTask.value }

/// Runs Python code with apimacro loaded and returns the value of `result`.
func runPython(_ source: String) async throws -> PythonValue {
    _ = try await fixture()
    return try await onPythonThread {
        let globals = try Interpreter.newGlobals()
        do {
            try Interpreter.exec(source, globals: globals)
            return try PythonValue(python: try #require(try globals.item("result")))
        } catch is PythonErrorSet {
            throw PythonException.fetch() ?? PythonException(typeName: "?", message: "", traceback: "")
        }
    }
}

extension EmbeddedPython {
    @Suite("the apimacro module in the embedded interpreter", .serialized)
    struct HostTests {
        @Test("the package's own unittest suite passes against the real _apimacro")
        func packageTests() async throws {
            let folder = projectRoot.appendingPathComponent("Tests/PythonPackageTests").path
            let result = try await runPython(
                """
                import io, unittest
                suite = unittest.defaultTestLoader.discover(\(try pythonLiteral(folder)), top_level_dir=\(try pythonLiteral(folder)))
                stream = io.StringIO()
                outcome = unittest.TextTestRunner(stream=stream, verbosity=1).run(suite)
                result = (outcome.testsRun, len(outcome.failures) + len(outcome.errors), stream.getvalue()[-3000:])
                """)
            guard case .tuple(let parts) = result, parts.count == 3, case .int(let run) = parts[0],
                case .int(let failed) = parts[1], case .string(let log) = parts[2]
            else {
                Issue.record("unexpected result \(result)")
                return
            }
            #expect(run >= 50, "only \(run) tests ran")
            #expect(failed == 0, "\(log)")
        }

        @Test("every exception class of SPEC §3 exists with its attributes and hierarchy")
        func exceptions() async throws {
            let result = try await runPython(
                """
                import apimacro as a
                names = ['APIError', 'NetworkError', 'Timeout', 'HTTPError', 'NotFound', 'Unauthorized',
                         'Forbidden', 'RateLimited', 'ParseError', 'AuthError', 'OfflineError']
                bases = {n: getattr(a, n).__mro__[1].__name__ for n in names}
                e = a.RateLimited('slow down', status=429, url='https://x/y', api='github', body='b' * 5000,
                                  reset_at=1700000000, retry_after=30)
                result = [
                    bases,
                    [e.status, e.url, e.api, len(e.body), e.reset_at, e.retry_after, str(e)],
                    [a.NotFound('x').status, a.NotFound('x').body, issubclass(a.APIError, Exception)],
                    issubclass(a.MacroTimeout, Exception),
                    a.NotFound.__module__,
                ]
                """)
            #expect(
                result
                    == .list([
                        .object([
                            ("APIError", .string("Exception")), ("NetworkError", .string("APIError")),
                            ("Timeout", .string("NetworkError")), ("HTTPError", .string("APIError")),
                            ("NotFound", .string("HTTPError")), ("Unauthorized", .string("HTTPError")),
                            ("Forbidden", .string("HTTPError")), ("RateLimited", .string("HTTPError")),
                            ("ParseError", .string("APIError")), ("AuthError", .string("APIError")),
                            ("OfflineError", .string("APIError")),
                        ]),
                        .list([
                            .int(429), .string("https://x/y"), .string("github"), .int(4096), .int(1_700_000_000),
                            .int(30), .string("slow down"),
                        ]),
                        .list([.none, .none, .bool(true)]),
                        .bool(false),
                        .string("apimacro"),
                    ]))
        }

        @Test("the exception classes are _apimacro's, named apimacro.NAME, defined in <_apimacro>, and they pickle")
        func exceptionIdentity() async throws {
            let result = try await runPython(
                """
                import pickle, apimacro, _apimacro
                names = ['APIError', 'NetworkError', 'Timeout', 'HTTPError', 'NotFound', 'Unauthorized', 'Forbidden',
                         'RateLimited', 'ParseError', 'AuthError', 'OfflineError', 'GraphQLError', 'GraphAPIError',
                         'MacroTimeout']
                wrong = []
                for name in names:
                    cls = getattr(apimacro, name)
                    if cls is not getattr(_apimacro, name) or (cls.__module__, cls.__qualname__) != ('apimacro', name):
                        wrong.append(name)
                        continue
                    error = cls('gone') if name == 'MacroTimeout' else cls('gone', status=410, api='github')
                    copy = pickle.loads(pickle.dumps(error))
                    if type(copy) is not cls or str(copy) != 'gone' or getattr(copy, 'status', 410) != 410:
                        wrong.append(name)
                result = [wrong, apimacro.APIError.__init__.__code__.co_filename]
                """)
            #expect(result == .list([.list([]), .string("<_apimacro>")]))
        }

        @Test("a Graph error is its kind's class and a GraphAPIError, with code; other errors have no code; it pickles")
        func graphErrors() async throws {
            let result = try await runPython(
                """
                import pickle, apimacro, _apimacro
                cls = _apimacro._graph_class(apimacro.NotFound)
                error = cls('gone', status=404, api='instagram')
                error.code, error.subcode, error.fbtrace_id = 100, 33, 'Tr4ce'
                copy = pickle.loads(pickle.dumps(error))
                result = [
                    type(error).__name__, isinstance(error, apimacro.NotFound), isinstance(error, apimacro.GraphAPIError),
                    _apimacro._graph_class(apimacro.NotFound) is cls, type(copy) is cls, str(copy),
                    [copy.code, copy.subcode, copy.fbtrace_id, copy.status],
                    hasattr(apimacro.NotFound('x'), 'code'), hasattr(apimacro.APIError('x'), 'fbtrace_id'),
                ]
                """)
            #expect(
                result
                    == .list([
                        .string("NotFound"), .bool(true), .bool(true), .bool(true), .bool(true), .string("gone"),
                        .list([.int(100), .int(33), .string("Tr4ce"), .int(404)]), .bool(false), .bool(false),
                    ]))
        }

        @Test("apimacro.sleep waits without the GIL: a Python thread runs meanwhile")
        func sleepReleasesGIL() async throws {
            let result = try await runPython(
                """
                import threading, apimacro
                state = {'n': 0, 'stop': False}
                def spin():
                    while not state['stop']:
                        state['n'] += 1
                t = threading.Thread(target=spin)
                t.start()
                apimacro.sleep(0.3)
                state['stop'] = True
                t.join()
                errors = []
                for bad in (-1, float('nan'), 'x', 1e300, float('inf'), 10**400, 1_000_000_001):
                    try:
                        apimacro.sleep(bad)
                    except (TypeError, ValueError, OverflowError) as e:
                        errors.append(type(e).__name__)
                result = (state['n'] > 10000, errors)
                """)
            // As `time.sleep`: a negative or NaN wait is a ValueError; past the longest (1e9 s)
            // an OverflowError, where 1e300 used to stop the process (issue 24).
            let errors = ["ValueError", "ValueError", "TypeError", "OverflowError", "OverflowError", "OverflowError"]
            #expect(result == .tuple([.bool(true), .list((errors + ["OverflowError"]).map { .string($0) })]))
        }

        @Test("a request's timeout= past the longest wait is an OverflowError before anything is sent")
        func hugeRequestTimeout() async throws {
            let result = try await runPython(
                """
                import apimacro
                errors = []
                for bad in (1e300, float('inf'), 10**400, -1, float('nan'), 0):
                    try:
                        apimacro.get('http://127.0.0.1:9/never', timeout=bad)
                    except Exception as e:
                        errors.append(type(e).__name__)
                result = errors
                """)
            #expect(
                result
                    == .list(
                        ["OverflowError", "OverflowError", "OverflowError", "ValueError", "ValueError", "ValueError"]
                            .map { .string($0) }))
        }

        @Test("apimacro.output honours the --format setting when the macro does not choose")
        func defaultFormat() async throws {
            let result = try await runPython(
                """
                import io, _apimacro, apimacro
                buffer = io.StringIO()
                old = _apimacro.default_format
                _apimacro.default_format = 'ndjson'
                try:
                    apimacro.output([{'a': 1}, {'a': 2}], file=buffer)
                finally:
                    _apimacro.default_format = old
                result = buffer.getvalue()
                """)
            #expect(result == .string("{\"a\":1}\n{\"a\":2}\n"))
        }
    }
}

extension EmbeddedPython {
    @Suite("running macros", .serialized)
    struct MacroRunnerTests {
        func run(_ source: String, _ arguments: [String] = []) async throws -> Int32 {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "apimacro-runner-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("macro.py")
            try Data(source.utf8).write(to: file)
            let host = try await fixture().host
            return try await onPythonThread {
                try MacroRunner(host: host).run(file: file, arguments: arguments, name: "macro.py")
            }
        }

        @Test("exit codes: success, raise, sys.exit(n), sys.exit(None), sys.exit('message'), main() returning n")
        func exitCodes() async throws {
            #expect(try await run("x = 1") == 0)
            #expect(try await run("raise ValueError('boom')") == 1)
            #expect(try await run("import sys\nsys.exit(3)") == 3)
            #expect(try await run("import sys\nsys.exit(None)") == 0)
            #expect(try await run("import sys\nsys.exit('bye')") == 1)
            #expect(try await run("def main():\n    return 4") == 4)
            #expect(try await run("syntax error here(") == 1)
        }

        @Test("main() receives typed arguments; a guarded main() is not called twice")
        func mainArguments() async throws {
            let out = FileManager.default.temporaryDirectory.appendingPathComponent(
                "apimacro-main-\(UUID().uuidString).txt")
            defer { try? FileManager.default.removeItem(at: out) }
            let macro = """
                def main(user: str, limit: int = 5):
                    with open(\(try pythonLiteral(out.path)), 'a') as f:
                        f.write(f'{user!r} {limit!r}\\n')
                """
            #expect(try await run(macro, ["octocat", "--limit", "2"]) == 0)
            #expect(try await run(macro + "\nif __name__ == '__main__':\n    main('guarded', 1)") == 0)
            #expect(try await run(macro, ["octocat", "--limit", "x"]) == 2)
            #expect(try String(contentsOf: out, encoding: .utf8) == "'octocat' 2\n'guarded' 1\n")
        }

        @Test("a missing macro file is a usage error")
        func missingFile() async throws {
            let host = try await fixture().host
            #expect(throws: MacroError.self) {
                _ = try MacroRunner(host: host).run(
                    file: URL(fileURLWithPath: "/nonexistent/macro.py"), arguments: [], name: "macro.py")
            }
        }
    }
}

/// A Python string literal for `text` (JSON string syntax is valid Python).
func pythonLiteral(_ text: String) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .withoutEscapingSlashes
    return String(decoding: try encoder.encode(text), as: UTF8.self)
}
