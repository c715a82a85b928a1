import Foundation
import TestSupport
import Testing

/// Issue 27, "Python the way Python users run it": `apimacro run -c CODE`, `-` (standard input)
/// and `-m MODULE`, as python3 takes them.
@Suite("apimacro run -c, - and -m")
struct RunScriptTests {
    @Test("-c CODE and - take sys.argv and sys.path as python3 does; apimacro's options go before")
    func codeAndStandardInput() async throws {
        let space = try Workspace(files: ["helper.py": "WORD = 'from the working directory'\n"])
        defer { space.remove() }
        let code = try await space.run(
            "run", "--format", "json", "-c",
            "import sys, apimacro, helper; print(sys.argv, helper.WORD); apimacro.output([{'a': 1}])", "x", "--format",
            "y")
        #expect(code.status == 0, "\(code.stderr)")
        #expect(code.stdout.hasPrefix("['-c', 'x', '--format', 'y'] from the working directory\n"), "\(code.stdout)")
        #expect(code.stdout.contains("\"a\": 1"), "json, from --format before -c: \(code.stdout)")

        let piped = try await space.run(
            "run", "-", "a b", stdin: "import sys\nprint('stdin', sys.argv)\ndef main(word):\n    print('main', word)\n"
        )
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout == "stdin ['-', 'a b']\nmain a b\n", "\(piped.stdout)")

        let failing = try await space.run("run", "-c", "def f():\n    1 / 0\nf()")
        #expect(failing.status == 1)
        #expect(
            failing.stderr
                == "Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\n  File \"<string>\", line 2, in f\nZeroDivisionError: division by zero\n",
            "\(failing.stderr)")
    }

    @Test("a run's end imports nothing heavy: the final flush finds no formatter, csv, json or unicodedata loaded")
    func lightEnd() async throws {
        // The end of every run flushes stdout through apimacro._stdout; when that went through
        // apimacro._output, its csv/json/re/unicodedata imports were half an empty macro's start-up.
        let probe = """
            import sys
            class Probe:
                def __init__(self, out):
                    self.out = out
                    self.flushed = False
                def write(self, text):
                    return self.out.write(text)
                def flush(self):
                    if not self.flushed:  # the first flush is the run's final one
                        self.flushed = True
                        heavy = sorted(m for m in ("apimacro._output", "csv", "json", "unicodedata") if m in sys.modules)
                        self.out.write(f"loaded at the final flush: {heavy}\\n")
                    self.out.flush()
            sys.stdout = Probe(sys.__stdout__)

            """
        let space = try Workspace(files: ["probe.py": probe])
        defer { space.remove() }
        let result = try await space.run("run", "probe.py")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "loaded at the final flush: []\n", "\(result.stdout)")
    }

    @Test("-m MODULE runs it as __main__ with its file as sys.argv[0]; its traceback starts at its own frames")
    func module() async throws {
        let space = try Workspace(files: [
            "tool/__init__.py": "",
            "tool/__main__.py":
                "import sys\nprint(__name__, sys.argv[1:], sys.argv[0].endswith('tool/__main__.py'))\nsys.exit(4)\n",
            "broken.py": "def g():\n    raise ValueError('in the module')\ng()\n",
        ])
        defer { space.remove() }
        let run = try await space.run("run", "-m", "tool", "-x", "--timeout", "3")
        #expect(run.status == 4, "\(run.stderr)")
        #expect(run.stdout == "__main__ ['-x', '--timeout', '3'] True\n", "\(run.stdout)")

        let broken = try await space.run("run", "-mbroken")
        #expect(broken.status == 1)
        #expect(broken.stderr.hasPrefix("Traceback (most recent call last):\n  File \""), "\(broken.stderr)")
        #expect(!broken.stderr.contains("runpy"), "\(broken.stderr)")
        #expect(broken.stderr.hasSuffix("ValueError: in the module\n"), "\(broken.stderr)")

        let missing = try await space.run("run", "-m", "no_such_module")
        #expect(missing.status == 2)
        #expect(missing.stderr.hasPrefix("apimacro: no module named 'no_such_module'"), "\(missing.stderr)")
        let bare = try await space.run("run", "-m")
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("-m needs a module name"), "\(bare.stderr)")
    }

    @Test("run -m pytest: a macro's own tests, with pytest from the active virtualenv, call the real module")
    func pytestFromVirtualEnvironment() async throws {
        let venv = try await PythonTools.virtualEnvironment()
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "macros/stars.py": """
            from apimacro import github

            def top(login):
                return github.user(login)["login"].upper()
            """,
            "tests/test_stars.py": """
            import sys, apimacro, pytest
            sys.path.insert(0, "macros")
            import stars

            def test_top():
                assert stars.top("octocat") == "OCTOCAT"

            def test_missing_user_is_not_found():
                with pytest.raises(apimacro.NotFound) as raised:
                    stars.top("nobody-here")
                assert raised.value.status == 404
            """,
        ])
        defer { space.remove() }
        let environment = ["VIRTUAL_ENV": venv.path, "APIMACRO_GITHUB_URL": server.baseURL]
        let passing = try await space.run(
            "run", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/", environment: environment)
        #expect(passing.status == 0, "\(passing.stdout)\(passing.stderr)")
        #expect(passing.stdout.contains("2 passed"), "\(passing.stdout)")

        try space.write("tests/test_fails.py", "def test_fails():\n    assert 1 == 2\n")
        let failing = try await space.run(
            "run", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/", environment: environment)
        #expect(failing.status == 1, "pytest's own exit status: \(failing.stdout)")
        #expect(failing.stdout.contains("1 failed, 2 passed"), "\(failing.stdout)")
        try await server.shutdown()
    }

    @Test("async def main: two calls awaited through asyncio.to_thread are in flight at once, the loop keeps running")
    func asyncioOverlap() async throws {
        let server = try await TestServer.start()
        // No answer goes out until two requests are in flight: the calls must overlap (an
        // event; the gate opens anyway after 60 s and the report says it was not seen).
        server.setBudget(limit: 100, holdUntilInFlight: 2)
        let space = try Workspace(files: [
            "overlap.py": """
            import asyncio
            from apimacro import github

            async def main():
                ticks = 0
                done = asyncio.Event()
                async def tick():
                    nonlocal ticks
                    while not done.is_set():
                        ticks += 1
                        await asyncio.sleep(0.01)
                ticker = asyncio.create_task(tick())
                first, second = await asyncio.gather(
                    asyncio.to_thread(github.user, "octocat"), asyncio.to_thread(github.user, "user1"))
                done.set()
                await ticker
                print(first["login"], second["login"], ticks > 0)
            """
        ])
        defer { space.remove() }
        let run = try await space.run("run", "overlap.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "octocat user1 True\n", "\(run.stdout)")
        let report = server.budgetReport
        #expect(report.gateOpened, "the two requests were never in flight together: \(report)")
        #expect(report.peakInFlight == 2, "\(report)")
        try await server.shutdown()
    }

    @Test(
        "sys.executable is the embedded Python's python3: subprocess runs it; a forked child's client call is refused")
    func executableAndChildren() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "children.py": """
            import multiprocessing, subprocess, sys
            from apimacro import github

            def square(n):
                return n * n

            def call(login):
                try:
                    return github.user(login)["login"]
                except RuntimeError as error:
                    return str(error)

            if __name__ == "__main__":
                print(sys.executable)
                child = subprocess.run([sys.executable, "-c", "import sys; print(sys.version_info[:2])"],
                                       capture_output=True, text=True, check=True)
                print(child.stdout.strip())
                with multiprocessing.get_context("fork").Pool(2) as pool:
                    print(pool.map(square, [1, 2, 3]))
                    print(pool.map(call, ["octocat"])[0])
                print(github.user("octocat")["login"])
            """
        ])
        defer { space.remove() }
        let run = try await space.run("run", "children.py", environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(run.stdout)")
        #expect(lines.first == "/usr/bin/python3.11", "\(run.stdout)")
        #expect(lines.dropFirst().first == "(3, 11)", "\(run.stdout)")
        #expect(lines.dropFirst(2).first == "[1, 4, 9]", "\(run.stdout)")
        #expect(
            lines.dropFirst(3).first?.hasPrefix(
                "apimacro's native calls (clients, request, map, sleep) cannot run in a child process made by fork()")
                == true, "\(run.stdout)")
        #expect(lines.last == "octocat", "the parent's client still works: \(run.stdout)")
        try await server.shutdown()
    }

    @Test("a child that fork() makes dies of SIGTERM as in plain Python (a pool's terminate() cannot hang)")
    func forkedChildTermination() async throws {
        let space = try Workspace(files: [
            "terminate.py": """
            import multiprocessing

            def wait(connection):
                connection.send("ready")
                connection.recv()

            if __name__ == "__main__":
                context = multiprocessing.get_context("fork")
                ours, theirs = context.Pipe()
                child = context.Process(target=wait, args=(theirs,))
                child.start()
                print(ours.recv())
                child.terminate()
                child.join()
                print(child.exitcode)
            """
        ])
        defer { space.remove() }
        let run = try await space.run("run", "terminate.py")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "ready\n-15\n", "killed by SIGTERM, not a KeyboardInterrupt: \(run.stdout) \(run.stderr)")
        #expect(!run.stderr.contains("KeyboardInterrupt"), "\(run.stderr)")
    }

    @Test("main() annotations: Literal choices and dates are read; an unsupported one is refused at --help time")
    func mainAnnotations() async throws {
        let space = try Workspace(files: [
            "typed.py": """
            import datetime
            from typing import Literal

            def main(since: datetime.date, mode: Literal["fast", "slow"] = "fast"):
                print(repr(since), mode)
            """,
            "untyped.py": "def main(filters: dict = {}):\n    print(filters)\n",
        ])
        defer { space.remove() }
        let typed = try await space.run("run", "typed.py", "2024-05-01", "--mode", "slow")
        #expect(typed.status == 0, "\(typed.stderr)")
        #expect(typed.stdout == "datetime.date(2024, 5, 1) slow\n", "\(typed.stdout)")
        let wrong = try await space.run("run", "typed.py", "2024-05-01", "--mode", "medium")
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("invalid choice: 'medium' (choose from fast, slow)"), "\(wrong.stderr)")
        let help = try await space.run("run", "untyped.py", "--help")
        #expect(help.status == 2)
        #expect(help.stdout.isEmpty, "\(help.stdout)")
        #expect(
            help.stderr.hasPrefix(
                "apimacro run untyped.py: main() parameter 'filters': dict cannot be read from the command line; use str, int"
            ), "\(help.stderr)")
    }
}
