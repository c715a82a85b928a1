import Foundation
import TestSupport
import Testing

@Suite("apimacro run, end to end", .serialized)
struct RunTests {
    @Test("a macro prints sys.argv, non-ASCII text and a nested dict")
    func printsArguments() async throws {
        let space = try Workspace(files: [
            "hello.py": """
            import sys, apimacro
            print(sys.argv[1:], apimacro.args == sys.argv[1:])
            print("héllo 東京 😀")
            print({"a": {"b": [1, 2, {"c": None}]}})
            print(__name__, __file__.endswith("hello.py"))
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "hello.py", "a", "b c", "--x")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "['a', 'b c', '--x'] True\nhéllo 東京 😀\n{'a': {'b': [1, 2, {'c': None}]}}\n__main__ True\n")
        #expect(result.stderr.isEmpty)
    }

    @Test("raise exits 1 with the traceback on stderr")
    func raises() async throws {
        let space = try Workspace(files: ["boom.py": "def f():\n    raise ValueError('boom')\nf()\n"])
        defer { space.remove() }
        let result = try await space.run("run", "boom.py")
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Traceback (most recent call last):\n"))
        #expect(result.stderr.contains("boom.py\", line 2, in f"))
        #expect(result.stderr.hasSuffix("ValueError: boom\n"))
    }

    @Test("sys.exit(n) passes n through; sys.exit('msg') prints it and exits 1")
    func exits() async throws {
        let space = try Workspace(files: [
            "three.py": "import sys\nprint('before')\nsys.exit(3)\n", "msg.py": "import sys\nsys.exit('bye now')\n",
        ])
        defer { space.remove() }
        let three = try await space.run("run", "three.py")
        #expect(three.status == 3)
        #expect(three.stdout == "before\n")
        let message = try await space.run("run", "msg.py")
        #expect(message.status == 1)
        #expect(message.stderr == "bye now\n")
    }

    @Test(
        "usage errors exit 2 with one line",
        arguments: [
            ["run", "--bogus", "x.py"], ["run"], ["nosuchcommand"], ["run", "--format", "xml", "x.py"],
            ["run", "--timeout", "-1", "x.py"], ["run", "nosuchmacro"],
        ])
    func usageErrors(arguments: [String]) async throws {
        let space = try Workspace(files: ["x.py": "print(1)\n"])
        defer { space.remove() }
        let result = try await Binary.run(arguments, in: space.url)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("apimacro: "))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
    }

    @Test(
        "--timeout 1 stops a busy loop, a blocking sleep and a native wait",
        arguments: [
            "while True:\n    pass\n", "import time\ntime.sleep(10 ** 6)\n",
            "import apimacro\napimacro.sleep(10 ** 6)\n",
            "while True:\n    try:\n        while True: pass\n    except Exception:\n        pass\n",
        ])
    func timeout(source: String) async throws {
        let space = try Workspace(files: ["slow.py": "import time\nprint(time.time(), flush=True)\n" + source])
        defer { space.remove() }
        let result = try await space.run("run", "--timeout", "1", "slow.py")
        // Unstopped, each runs for ever (or 11 days): only the timeout ends it, else the runner's
        // hang guard kills it (a signal). An event decides, not a duration.
        #expect(!result.signalled && result.status == 1, "\(result.status) \(result.signalled) \(result.stderr)")
        #expect(result.stderr.contains("slow.py ran longer than its --timeout of 1 s"), "\(result.stderr)")
        #expect(!result.stderr.contains("did not stop when interrupted"), "stopped by the interrupt, not the hard stop")
    }

    @Test("a macro that defeats the timeout (its own SIGALRM handler) is ended after a grace second")
    func swallowedTimeout() async throws {
        let space = try Workspace(files: [
            "stubborn.py":
                "import signal, time\nprint(time.time(), flush=True)\nsignal.signal(signal.SIGALRM, lambda *a: None)\nwhile True:\n    pass\n"
        ])
        defer { space.remove() }
        let result = try await space.run("run", "--timeout", "1", "stubborn.py")
        // The loop never ends by itself: exit 1 (not the runner's kill) is the hard stop's doing.
        #expect(!result.signalled && result.status == 1, "\(result.status) \(result.signalled) \(result.stderr)")
        #expect(result.stderr.contains("did not stop when interrupted"))
    }

    @Test(
        "Ctrl-C exits 130, also during a native wait",
        arguments: [
            "import sys\nprint('ready', flush=True)\n" + pythonTouch("ready") + "while True:\n    pass\n",
            "import apimacro\nprint('ready', flush=True)\n" + pythonTouch("ready") + "apimacro.sleep(100)\n",
        ])
    func interrupt(source: String) async throws {
        let space = try Workspace(files: ["wait.py": source])
        defer { space.remove() }
        let result = try await space.run("run", "wait.py", defaultSIGINT: true) { [space] process in
            // Ctrl-C once the macro says it has started (an event, not a delay).
            try? await space.waitFor("ready")
            kill(process.processIdentifier, SIGINT)
        }
        #expect(result.status == 130, "\(result.stderr)")
        #expect(result.stdout == "ready\n")
    }

    @Test("an interrupt that bypasses the signal counter (_thread.interrupt_main) still ends a native wait")
    func interruptMainDuringNativeWait() async throws {
        // Whether the interrupt lands before apimacro.sleep starts or during it, the macro must
        // end with KeyboardInterrupt (exit 130); the old wait only saw real signals, so it slept
        // on until the runner's 60 s guard killed it.
        let space = try Workspace(files: [
            "wait.py": """
            import _thread, threading, time
            import apimacro
            threading.Thread(target=lambda: (time.sleep(0.3), _thread.interrupt_main()), daemon=True).start()
            apimacro.sleep(600)
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "wait.py")
        #expect(result.status == 130, "\(result.stderr)")
    }

    @Test("main(user: str, limit: int = 5) gets typed arguments; --help shows them")
    func mainSignature() async throws {
        let space = try Workspace(files: [
            "user.py": """
            \"\"\"Show a GitHub user.\"\"\"
            def main(user: str, limit: int = 5):
                \"\"\"Print a user and how many repositories to list.\"\"\"
                print(repr(user), repr(limit))
            """
        ])
        defer { space.remove() }
        let result = try await space.run("run", "user.py", "octocat", "--limit", "2")
        #expect(result.stdout == "'octocat' 2\n")
        let help = try await space.run("run", "user.py", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("usage: apimacro run user.py [-h] [--limit LIMIT] user"))
        #expect(help.stdout.contains("Print a user and how many repositories to list."))
        #expect(help.stdout.contains("--limit LIMIT  (int, default: 5)"))
        let bad = try await space.run("run", "user.py", "octocat", "--limit", "many")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("invalid int value: 'many'"))
    }

    @Test("a macro name is found in ./macros/")
    func macroPath() async throws {
        let space = try Workspace(files: ["macros/greet.py": "print('hi from greet')\n"])
        defer { space.remove() }
        let result = try await space.run("run", "greet")
        #expect(result.status == 0)
        #expect(result.stdout == "hi from greet\n")
    }

    @Test("secrets from the environment are redacted in tracebacks")
    func redactedTraceback() async throws {
        let space = try Workspace(files: [
            "leak.py": "import os\nraise RuntimeError('token is ' + os.environ['APIMACRO_GITHUB_TOKEN'])\n"
        ])
        defer { space.remove() }
        let result = try await space.run(
            "run", "leak.py", environment: ["APIMACRO_GITHUB_TOKEN": "ghp_fakeSecret0123456789"])
        #expect(result.status == 1)
        #expect(!result.stderr.contains("ghp_fakeSecret0123456789"))
        #expect(result.stderr.contains("RuntimeError: token is REDACTED"))
    }

    @Test("a PYTHONHOME meant for another Python does not break the interpreter")
    func isolatedFromPythonVariables() async throws {
        let space = try Workspace(files: ["ok.py": "import json, sys\nprint(sys.prefix, json.dumps([1]))\n"])
        defer { space.remove() }
        let result = try await space.run(
            "run", "ok.py",
            environment: [
                "PYTHONHOME": "/nonexistent/python", "PYTHONPATH": "/nonexistent", "PYTHONSTARTUP": "/nonexistent",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "/usr [1]\n")
    }

    @Test("an active virtualenv of the same Python is importable; another version is ignored with a warning")
    func virtualEnvironment() async throws {
        let space = try Workspace(files: [
            "venv/pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n",
            "venv/lib/python3.11/site-packages/venvonly.py": "VALUE = 'from the venv'\n",
            "old/pyvenv.cfg": "home = /usr/bin\nversion = 3.9.2\n",
            "old/lib/python3.9/site-packages/venvonly.py": "VALUE = 'wrong'\n",
            "use.py":
                "try:\n    import venvonly\n    print(venvonly.VALUE)\nexcept ImportError:\n    print('not importable')\n",
        ])
        defer { space.remove() }
        let same = try await space.run(
            "run", "use.py", environment: ["VIRTUAL_ENV": space.url.appendingPathComponent("venv").path])
        #expect(same.stdout == "from the venv\n")
        #expect(same.stderr.isEmpty)
        let other = try await space.run(
            "run", "use.py", environment: ["VIRTUAL_ENV": space.url.appendingPathComponent("old").path])
        #expect(other.stdout == "not importable\n")
        #expect(other.stderr.contains("ignoring VIRTUAL_ENV"))
    }

    @Test("--version names the embedded Python")
    func version() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await space.run("--version")
        #expect(result.status == 0)
        #expect(result.stdout == "apimacro 0.1.0\nembedded Python 3.11.2 (libpython3.11)\n")
    }
}
