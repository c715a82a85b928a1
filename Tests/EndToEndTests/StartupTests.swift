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

    @Test(
        "a main() that takes nothing is called without the argument parser's modules; async, --help and arguments still work"
    )
    func mainWithoutParser() async throws {
        let heavy = "['argparse', 'inspect', 'typing', 'dataclasses', 'pathlib', 'apimacro._main']"
        let space = try Workspace(files: [
            "plain.py": """
            import sys
            def main():
                '''Says which modules are loaded.'''
                print([name for name in \(heavy) if name in sys.modules])
                return 3
            """,
            "later.py": """
            import sys
            async def work():
                return 4
            def main():
                print([name for name in \(heavy) if name in sys.modules])
                return work()
            """,
            "coroutine.py": """
            import sys
            async def main():
                print("async ran")
            """,
            "guarded.py": """
            def main():
                print("main by the host")
            if __name__ \t== '__main__' :
                print("guard")
            """,
        ])
        defer { space.remove() }
        let plain = try await space.run("run", "plain.py")
        #expect(plain.status == 3, "main()'s return value is the exit status: \(plain.stderr)")
        #expect(plain.stdout == "[]\n", "\(plain.stdout)")
        // A plain def returning a coroutine: it is run, as call_main runs it.
        let later = try await space.run("run", "later.py")
        #expect(later.status == 4 && later.stdout == "[]\n", "\(later.stdout)\(later.stderr)")
        let coroutine = try await space.run("run", "coroutine.py")
        #expect(coroutine.status == 0 && coroutine.stdout == "async ran\n", "\(coroutine.stderr)")
        let help = try await space.run("run", "plain.py", "--help")
        #expect(help.status == 0 && help.stdout.contains("Says which modules are loaded."), "\(help.stdout)")
        let extra = try await space.run("run", "plain.py", "surplus")
        #expect(extra.status == 2 && extra.stderr.contains("unrecognized arguments: surplus"), "\(extra.stderr)")
        let guarded = try await space.run("run", "guarded.py")
        #expect(guarded.stdout == "guard\n", "the macro calls its main itself: \(guarded.stdout)")
    }

    @Test("an empty macro with the HTTP cache on never opens the cache's database")
    func cacheOpenedOnFirstUse() async throws {
        let space = try Workspace(files: ["empty.py": "import apimacro\n"])
        defer { space.remove() }
        let result = try await space.run("run", "empty.py")
        #expect(result.status == 0, "\(result.stderr)")
        let database = space.url.appendingPathComponent(".cache/apimacro/cache.sqlite")
        #expect(!FileManager.default.fileExists(atPath: database.path), "an empty macro opened the HTTP cache")
    }

    @Test(
        "the exception classes, clients and plugins are made the first time a macro reads one; dir() lists them all from the start"
    )
    func clientsBuiltOnFirstUse() async throws {
        let lazy =
            "('github', 'GitHub', 'instagram', 'Instagram', 'shortener', 'Shortener', 'plugins', 'client', 'PluginClient', "
            + "'APIError', 'NotFound', 'MacroTimeout', '_graph_class', 'request', 'get', 'Response', 'Headers')"
        let space = try Workspace(files: [
            "probe.py": """
            import _apimacro, apimacro
            names = \(lazy)
            def built():
                return [name for name in names if name in vars(_apimacro)]
            print("at start:", built())
            listed = dir(_apimacro)
            print("listed:", all(name in listed and (name[0] == "_" or name in dir(apimacro)) for name in names))
            from apimacro import github
            print("after github:", built(), type(github) is apimacro.GitHub)
            print("shortener:", isinstance(apimacro.shortener, apimacro.Shortener), "Shortener" in built())
            print("plugins:", type(apimacro.plugins).__name__, apimacro.client.__name__, "plugins" in built())
            # Everything made: dir() named every public name before any was made, and no more.
            for name in listed:
                getattr(_apimacro, name)
            def public(seq):
                return sorted(name for name in seq if name[0] != "_")
            print("the same names:", set(built()) == set(names), public(vars(_apimacro)) == public(listed))
            for name in ("nope", "__path__"):
                try:
                    getattr(_apimacro, name)
                except AttributeError as error:
                    print(error)
            """,
            // Threads reading a client at once while it is being built (its GraphQL helpers' Python
            // lets them in) all get the one object.
            "race.py": """
            import threading, apimacro
            start = threading.Barrier(8)
            seen = []
            def read():
                start.wait()
                seen.append(apimacro.github)
            threads = [threading.Thread(target=read) for _ in range(8)]
            for thread in threads: thread.start()
            for thread in threads: thread.join()
            print(len(seen), len({id(client) for client in seen}), seen[0] is apimacro.github)
            """,
        ])
        defer { space.remove() }
        let result = try await space.run("run", "probe.py")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                at start: []
                listed: True
                after github: ['github', 'GitHub', 'APIError', 'NotFound', 'MacroTimeout', '_graph_class'] True
                shortener: True True
                plugins: _Plugins client True
                the same names: True True
                module '_apimacro' has no attribute 'nope'
                module '_apimacro' has no attribute '__path__'

                """, "\(result.stdout)")
        let race = try await space.run("run", "race.py")
        #expect(race.status == 0, "\(race.stderr)")
        #expect(race.stdout == "8 1 True\n", "\(race.stdout)")
    }

    @Test(
        "the bundled Python is compiled once into the cache folder and read from there; no usable folder changes nothing"
    )
    func bytecodeCache() async throws {
        // `Headers` read too: the helpers' file is compiled with the exception classes' and `_finish.py`.
        let space = try Workspace(files: [
            "hello.py": "import apimacro\nprint(apimacro.NotFound.__name__)\napimacro.Headers\n"
        ])
        defer { space.remove() }
        let folder = space.url.appendingPathComponent(".cache/apimacro/bytecode")
        let first = try await space.run("run", "--no-cache", "hello.py")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "NotFound\n")
        func files() throws -> [String: Int] {
            var found: [String: Int] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".code") {
                let attributes = try FileManager.default.attributesOfItem(
                    atPath: folder.appendingPathComponent(name).path)
                found[name] = (attributes[.systemFileNumber] as? NSNumber)?.intValue ?? -1
            }
            return found
        }
        let stored = try files()
        #expect(stored.count >= 3, "compiled code of the bundled sources was not stored: \(stored)")
        // The exception classes (_native_exceptions.py) among them: a file's header holds its whole source.
        let exceptions = try stored.keys.filter { name in
            try Data(contentsOf: folder.appendingPathComponent(name)).range(of: Data("class RateLimited(".utf8)) != nil
        }
        #expect(exceptions.count == 1, "the exception classes' code was not stored once: \(exceptions)")
        // The second run reads those files: none is compiled and written again (same inodes).
        let second = try await space.run("run", "--no-cache", "hello.py")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == "NotFound\n")
        #expect(try files() == stored)
        // A cache folder that cannot exist (XDG_CACHE_HOME is a file): the macro runs, nothing is said.
        try space.write("blocker", "not a folder")
        let blocked = try await space.run(
            "run", "--no-cache", "hello.py",
            environment: ["XDG_CACHE_HOME": space.url.appendingPathComponent("blocker").path])
        #expect(blocked.status == 0, "\(blocked.stderr)")
        #expect(blocked.stdout == "NotFound\n")
        #expect(blocked.stderr.isEmpty, "\(blocked.stderr)")
    }

    @Test("run MACRO ARGS, read without ArgumentParser, passes the arguments through as the parser did")
    func plainRunArguments() async throws {
        let space = try Workspace(files: ["argv.py": "import json, sys\nprint(json.dumps(sys.argv[1:]))\n"])
        defer { space.remove() }
        let cases: [([String], String)] = [
            (["--help"], #"["--help"]"#), (["-h"], #"["-h"]"#), (["--version"], #"["--version"]"#),
            (["--stats-file", "x"], #"["--stats-file", "x"]"#), (["help"], #"["help"]"#),
            (["a", "--experimental-dump-help"], #"["a", "--experimental-dump-help"]"#),
            (["a", "-v", "b"], #"["a", "b"]"#), (["--format", "json", "a"], #"["a"]"#),
            (["--", "--format", "json"], #"["--", "--format", "json"]"#), ([], "[]"),
        ]
        for (arguments, expected) in cases {
            let result = try await Binary.run(["run", "argv.py"] + arguments, in: space.url)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout == expected + "\n", "\(arguments)")
        }
        // Flags before the macro's name are read too, and take effect: --no-cache opens no HTTP cache.
        let fresh = try Workspace(files: ["argv.py": "import json, sys\nprint(json.dumps(sys.argv[1:]))\n"])
        defer { fresh.remove() }
        let database = fresh.url.appendingPathComponent(".cache/apimacro/cache.sqlite")
        for flags in [["--no-cache"], ["-v", "--offline", "--no-cache"], ["--no-cache", "--verbose"]] {
            let result = try await Binary.run(["run"] + flags + ["argv.py", "a", "-v"], in: fresh.url)
            #expect(result.status == 0, "\(flags): \(result.stderr)")
            #expect(result.stdout == #"["a"]"# + "\n", "\(flags)")
            #expect(!FileManager.default.fileExists(atPath: database.path), "\(flags) opened the HTTP cache")
        }
        // batch's children: `run [--no-cache] --stats-file PATH MACRO`, read here too; the counts are written.
        let stats = fresh.url.appendingPathComponent("stats.json")
        let child = try await fresh.run("run", "--no-cache", "--stats-file", stats.path, "argv.py", "b")
        #expect(child.stdout == #"["b"]"# + "\n", "\(child.stderr)")
        let counts = try String(contentsOf: stats, encoding: .utf8)
        #expect(counts.contains("\"requests\""), "\(counts)")
        // The cache is opened by the first request that asks it: an offline request, which the
        // cache answers or refuses, opens it without --no-cache and not with it.
        try fresh.write(
            "ask.py",
            """
            import apimacro
            try:
                apimacro.request("GET", "http://127.0.0.1:9/never-stored")
            except Exception as error:
                print(type(error).__name__)
            """)
        let uncached = try await fresh.run("run", "--no-cache", "--offline", "ask.py")
        #expect(uncached.status == 0, "\(uncached.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database.path), "--no-cache before the macro opened the cache")
        let cached = try await fresh.run("run", "--offline", "ask.py")
        #expect(cached.status == 0, "\(cached.stderr)")
        #expect(cached.stdout == uncached.stdout, "\(cached.stdout) \(cached.stderr)")
        #expect(FileManager.default.fileExists(atPath: database.path), "without --no-cache, no HTTP cache was opened")
        // What the parser itself answers still goes to it.
        let completion = try await space.run("run", "argv.py", "--generate-completion-script", "bash")
        #expect(completion.stdout.hasPrefix("#!/bin/bash"), "\(completion.stdout.prefix(200))")
        let missing = try await space.run("run", "missing.py")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no such macro file: missing.py"), "\(missing.stderr)")
    }

    @Test(
        "a macro file compiles as compile(source, path, 'exec', dont_inherit=True) did: cookie, BOM, NUL, errors, __future__"
    )
    func macroCompilesAsBefore() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let files: [(String, [UInt8])] = [
            ("latin.py", Array("# -*- coding: latin-1 -*-\nprint(\"caf".utf8) + [0xE9] + Array("\")\n".utf8)),
            ("bom.py", [0xEF, 0xBB, 0xBF] + Array("print(\"bom\")\n".utf8)),
            ("nul.py", Array("print(1)\n".utf8) + [0] + Array("\n".utf8)),
            ("cookie.py", Array("# coding: nope\nprint(1)\n".utf8)),
            ("syntax.py", Array("x = (\n".utf8)),
            (
                "future.py",
                Array("from __future__ import annotations\ndef f(a: nowhere): pass\nprint(f.__annotations__)\n".utf8)
            ),
        ]
        for (name, bytes) in files { try Data(bytes).write(to: space.url.appendingPathComponent(name)) }
        // Outputs of the builtin compile(), from the binary before the change.
        let expected: [(String, Int32, String, String)] = [
            ("latin.py", 0, "café\n", ""), ("bom.py", 0, "bom\n", ""), ("future.py", 0, "{'a': 'nowhere'}\n", ""),
            ("nul.py", 1, "", "ValueError: source code string cannot contain null bytes"),
            ("cookie.py", 1, "", "SyntaxError: unknown encoding: nope"),
            ("syntax.py", 1, "", "SyntaxError: '(' was never closed"),
        ]
        for (name, status, stdout, stderr) in expected {
            let result = try await space.run("run", name)
            #expect(result.status == status, "\(name): \(result.stderr)")
            #expect(result.stdout == stdout, "\(name)")
            #expect(
                stderr.isEmpty ? result.stderr.isEmpty : result.stderr.contains(stderr), "\(name): \(result.stderr)")
        }
        let syntax = try await space.run("run", "syntax.py")
        #expect(syntax.stderr.contains("File \"\(space.url.appendingPathComponent("syntax.py").path)\", line 1"))
    }
}
