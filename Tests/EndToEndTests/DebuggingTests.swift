import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 40, "Debugging", through the built binary: pdb on a pseudo-terminal (`breakpoint()`,
/// `pdb.set_trace()`, `run --pdb`, the REPL), `breakpoint()` where no one can answer (a batch
/// job, stdin not a terminal), `PYTHONBREAKPOINT`, a real Debug Adapter Protocol client
/// attached through `run --debugpy`, `run --watch` and the REPL's `:reload`.
@Suite("Debugging a macro: pdb, debugpy, --watch, :reload", .serialized)
struct DebuggingTests {
    static let prompt = "(Pdb) "

    /// Types `line` and Enter, then waits for the next pdb prompt; returns what came between.
    @discardableResult
    static func enter(_ line: String, on terminal: PseudoTerminal, until needle: String = prompt) async throws
        -> String
    {
        let start = terminal.count
        terminal.type(line + "\r")
        let end = try await terminal.expect(needle, after: start, timeout: 600)
        return String(decoding: Array(terminal.output.utf8)[start..<end], as: UTF8.self)
    }

    @Test("breakpoint() on a terminal: p shows a variable, Ctrl-C at the prompt stays in pdb, c goes on")
    func breakpointOnTerminal() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "stop.py": """
            from apimacro import github
            before = github.user("octocat")["login"]
            answer = 41
            breakpoint()
            after = github.user("octocat")["id"]
            print("after the breakpoint:", before, answer + 1, after)
            """
        ])
        defer { space.remove() }
        let terminal = try PseudoTerminal(
            ["run", "stop.py"], in: space.url, environment: ["APIMACRO_GITHUB_URL": server.baseURL])
        defer { terminal.close() }
        try await terminal.expect(Self.prompt, timeout: 600)
        #expect(terminal.output.contains("stop.py(5)<module>()"), "\(terminal.output)")
        let shown = try await Self.enter("p answer, before", on: terminal)
        #expect(shown.contains("(41, 'octocat')"), "\(shown)")
        // Ctrl-C at pdb's prompt: as in Python, pdb says so and asks again.
        try await terminal.waitUntilReadingInput()
        let start = terminal.count
        terminal.type("\u{03}")
        try await terminal.expect("--KeyboardInterrupt--", after: start, timeout: 600)
        try await terminal.expect(Self.prompt, after: start, timeout: 600)
        terminal.type("c\r")
        // The request after the breakpoint still goes out and comes back.
        try await terminal.expect("after the breakpoint: octocat 42 583231", after: start, timeout: 600)
        #expect(try await terminal.waitForExit(timeout: 600) == 0, "\(terminal.output)")
        try await server.shutdown()
    }

    @Test("Ctrl-C while the macro runs on after c stops it in pdb, as in Python, instead of ending it")
    func interruptAfterContinue() async throws {
        let space = try Workspace(files: [
            // The marker is made by os.open, not open(): a text-mode open() runs codecs'
            // Python code (IncrementalEncoder.__init__) after the file exists, and a Ctrl-C
            // landing there stops pdb in that frame, where `turns` is not defined (Python
            // itself does the same).
            "loop.py": """
            import os, time
            turns = 0
            breakpoint()
            os.close(os.open("continued", os.O_WRONLY | os.O_CREAT))
            while True:
                turns += 1
                time.sleep(0.01)
            """
        ])
        defer { space.remove() }
        let terminal = try PseudoTerminal(["run", "loop.py"], in: space.url, environment: [:])
        defer { terminal.close() }
        try await terminal.expect(Self.prompt, timeout: 600)
        let start = terminal.count
        terminal.type("c\r")
        try await space.waitFor("continued")
        terminal.type("\u{03}")
        try await terminal.expect("Program interrupted", after: start, timeout: 600)
        try await terminal.expect(Self.prompt, after: start, timeout: 600)
        let shown = try await Self.enter("p turns >= 0", on: terminal)
        #expect(shown.contains("True"), "\(shown)")
        terminal.type("q\r")
        #expect(try await terminal.waitForExit(timeout: 600) == 1)
    }

    @Test("pdb.set_trace() on a terminal; q stops the macro with one line, not a traceback")
    func setTraceAndQuit() async throws {
        let space = try Workspace(files: [
            "trace.py": "import pdb\nitems = [1, 2, 3]\npdb.set_trace()\nprint('never printed')\n"
        ])
        defer { space.remove() }
        let terminal = try PseudoTerminal(["run", "trace.py"], in: space.url, environment: [:])
        defer { terminal.close() }
        try await terminal.expect(Self.prompt, timeout: 600)
        let shown = try await Self.enter("p sum(items)", on: terminal)
        #expect(shown.contains("6\r\n"), "\(shown)")
        terminal.type("q\r")
        #expect(try await terminal.waitForExit(timeout: 600) == 1)
        let output = try await terminal.finish()
        #expect(output.contains("apimacro: trace.py stopped in the debugger (q)"), "\(output)")
        // pdb shows the line it stopped before (`-> print('never printed')`); it never ran.
        #expect(!output.contains("Traceback") && !output.contains("\nnever printed"), "\(output)")
    }

    @Test("run --pdb: the redacted traceback, then pdb post-mortem at the frame that raised")
    func postMortem() async throws {
        let token = "ghp_postMortemSecret0123456789abcdefABCD"
        let space = try Workspace(files: [
            "fails.py": """
            import os

            def lookup(table, key):
                depth = len(table)
                return table[key]

            def main():
                lookup({"a": 1}, "missing " + os.environ["APIMACRO_GITHUB_TOKEN"])
            """
        ])
        defer { space.remove() }
        let terminal = try PseudoTerminal(
            ["run", "--pdb", "fails.py"], in: space.url, environment: ["APIMACRO_GITHUB_TOKEN": token])
        defer { terminal.close() }
        let promptEnd = try await terminal.expect(Self.prompt, timeout: 600)
        let before = String(decoding: Array(terminal.output.utf8)[..<promptEnd], as: UTF8.self)
        let traceback = try #require(before.range(of: "Traceback (most recent call last):"))
        let error = try #require(before.range(of: "KeyError: 'missing REDACTED'"))
        let stop = try #require(before.range(of: "fails.py(5)lookup()"))
        #expect(traceback.lowerBound < error.lowerBound && error.lowerBound < stop.lowerBound, "\(before)")
        #expect(!before.contains(token))
        let depth = try await Self.enter("p depth", on: terminal)
        #expect(depth.contains("1\r\n"), "\(depth)")
        let up = try await Self.enter("up", on: terminal)
        #expect(up.contains("main()"), "\(up)")
        terminal.type("q\r")
        #expect(try await terminal.waitForExit(timeout: 600) == 1)
    }

    @Test("breakpoint() at the REPL's prompt opens pdb there; c returns to the prompt")
    func breakpointInRepl() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let terminal = try PseudoTerminal(["repl"], in: space.url, environment: [:])
        defer { terminal.close() }
        try await terminal.expect(">>> ", timeout: 600)
        // It stops as the line returns, as in python3's REPL (not in apimacro's display hook).
        let stop = try await Self.enter("seen = 'in the repl'; breakpoint()", on: terminal)
        #expect(stop.contains("--Return--") && stop.contains("<repl>(1)<module>()"), "\(stop)")
        let shown = try await Self.enter("p seen", on: terminal)
        #expect(shown.contains("'in the repl'"), "\(shown)")
        try await terminal.waitUntilReadingInput()
        let start = terminal.count
        terminal.type("\u{03}")
        try await terminal.expect("--KeyboardInterrupt--", after: start, timeout: 600)
        try await terminal.expect(Self.prompt, after: start, timeout: 600)
        try await Self.enter("c", on: terminal, until: ">>> ")
        terminal.type("\u{04}")
        #expect(try await terminal.waitForExit(timeout: 600) == 0)
    }

    @Test("breakpoint() in a batch job is an error naming the job, not a hang; with stdin not a terminal too")
    func breakpointWithoutTerminal() async throws {
        let space = try Workspace(files: [
            "stops.py": "value = 1\nbreakpoint()\nprint('went on')\n",
            "fine.py": "print('fine')\n",
            "traced.py": "import pdb\npdb.set_trace()\nprint('went on')\n",
            "jobs.txt": "name=stopper stops.py\nname=fine fine.py\nname=tracer traced.py\n",
        ])
        defer { space.remove() }
        let batch = try await space.run("batch", "--file", "jobs.txt")
        #expect(batch.status == 1, "\(batch.stdout)\(batch.stderr)")
        let all = batch.stdout + batch.stderr
        #expect(all.contains("BreakpointError: breakpoint() at "), "\(all)")
        #expect(all.contains("stops.py:2 in batch job 'stopper': a batch job has no terminal for pdb"), "\(all)")
        #expect(!all.contains("\nwent on"), "\(all)")
        #expect(all.contains("fine"))
        // pdb.set_trace() itself reads the job's empty stdin and quits: no hang either.
        #expect(all.contains("traced.py stopped in pdb, which found no terminal on stdin"), "\(all)")

        let piped = try await space.run("run", "stops.py", stdin: "c\n")
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("stops.py:2 in macro "), "\(piped.stderr)")
        #expect(piped.stderr.contains("stops.py: stdin is not a terminal, so pdb cannot ask for commands"))
        #expect(piped.stderr.contains("set PYTHONBREAKPOINT=0 to skip breakpoints"))
        // The traceback ends at the macro's line, not inside apimacro.
        #expect(!piped.stderr.contains("_debugging.py"), "\(piped.stderr)")
        #expect(!piped.stdout.contains("went on"))

        let repl = try await space.run("repl", stdin: "breakpoint()\nprint('the session goes on')\n")
        #expect(repl.status == 1)
        #expect(repl.stderr.contains("breakpoint() at <repl>:1 in the REPL: stdin is not a terminal"), "\(repl.stderr)")
        #expect(repl.stdout == "the session goes on\n")
    }

    @Test("PYTHONBREAKPOINT=0 skips breakpoints; module.function is called instead; unimportable is a warning")
    func pythonBreakpointVariable() async throws {
        let space = try Workspace(files: [
            "stops.py": "value = 1\nbreakpoint('a', key='b')\nprint('went on')\n",
            "hooks.py": "def seen(*args, **kwargs):\n    print('hook called with', args, kwargs)\n",
        ])
        defer { space.remove() }
        let skipped = try await space.run("run", "stops.py", environment: ["PYTHONBREAKPOINT": "0"])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(skipped.stdout == "went on\n")
        let custom = try await space.run("run", "stops.py", environment: ["PYTHONBREAKPOINT": "hooks.seen"])
        #expect(custom.status == 0, "\(custom.stderr)")
        #expect(custom.stdout == "hook called with ('a',) {'key': 'b'}\nwent on\n")
        let missing = try await space.run("run", "stops.py", environment: ["PYTHONBREAKPOINT": "no_such.hook"])
        #expect(missing.status == 0)
        #expect(missing.stderr.contains("RuntimeWarning: Ignoring unimportable $PYTHONBREAKPOINT: \"no_such.hook\""))
        #expect(missing.stdout == "went on\n")
    }

    @Test("run --debugpy PORT --wait: a Debug Adapter Protocol client attaches and stops at a breakpoint")
    func debugAdapterClient() async throws {
        let venv = try await PythonTools.virtualEnvironment()
        let space = try Workspace(files: [
            "dap_client.py": Self.dapClient,
            "debugged.py": "first = 20\nsecond = first + 1\nprint('debugged', first + second)\n",
        ])
        defer { space.remove() }
        let port = try Self.freePort()
        let macro = space.url.appendingPathComponent("debugged.py").path
        let clientOutput = space.url.appendingPathComponent("client.txt")
        let result = try await space.run(
            "run", "--debugpy", "\(port)", "--wait", "debugged.py", environment: ["VIRTUAL_ENV": venv.path]
        ) { _ in
            let client = try Spawned(
                "/usr/bin/python3", [space.url.appendingPathComponent("dap_client.py").path, "\(port)", macro, "2"],
                environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], directory: space.url.path,
                stdout: .file(clientOutput.path), stderr: .file(clientOutput.path))
            let ended = await client.exit()
            let said = (try? String(contentsOf: clientOutput, encoding: .utf8)) ?? ""
            #expect(ended.status == 0, "\(said)")
        }
        let said = try String(contentsOf: clientOutput, encoding: .utf8)
        #expect(said.contains("breakpoints verified: [True]"), "\(said)")
        #expect(said.contains("stopped at \(macro):2 (breakpoint)"), "\(said)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "debugged 41\n")
        #expect(result.stderr.contains("debugpy listening on 127.0.0.1:\(port); waiting for a debugger"))
    }

    @Test("--debugpy: missing debugpy says how to install it, a port in use and a bad address are exit 2")
    func debugpyProblems() async throws {
        let space = try Workspace(files: ["m.py": "print('ran')\n"])
        defer { space.remove() }
        let missing = try await space.run("run", "--debugpy", "5678", "m.py")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--debugpy needs the debugpy package"), "\(missing.stderr)")
        #expect(missing.stderr.contains("pip install debugpy"))
        #expect(!missing.stdout.contains("ran"))

        let venv = try await PythonTools.virtualEnvironment()
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(bound == 0 && listen(holder, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(holder, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let inUse = try await space.run("run", "--debugpy", "\(port)", "m.py", environment: ["VIRTUAL_ENV": venv.path])
        #expect(inUse.status == 2)
        #expect(inUse.stderr.contains("--debugpy 127.0.0.1:\(port): the port is in use"), "\(inUse.stderr)")

        let bad = try await space.run("run", "--debugpy", "70000", "m.py")
        #expect(bad.status == 2 && bad.stderr.contains("--debugpy takes a port"), "\(bad.stderr)")
        let wait = try await space.run("run", "--wait", "m.py")
        #expect(wait.status == 2 && wait.stderr.contains("--wait goes with --debugpy"), "\(wait.stderr)")
    }

    @Test("run --watch: a save of an imported module reruns; a deleted macro is waited for; Ctrl-C ends it")
    func watchReruns() async throws {
        let space = try Workspace(files: [
            "helper.py": "VALUE = 1\n",
            "main.py": "import helper\nprint('ran', helper.VALUE)\nopen(f'ran-{helper.VALUE}', 'w').close()\n",
        ])
        defer { space.remove() }
        let errors = space.url.appendingPathComponent("watch-stderr.txt")
        let output = space.url.appendingPathComponent("watch-stdout.txt")
        let process = try Spawned(
            Binary.url.path, ["run", "--watch", "main.py"], environment: Binary.environment(home: space.url),
            directory: space.url.path, stdout: .file(output.path), stderr: .file(errors.path),
            defaultSignals: [SIGINT])
        let pid = process.processIdentifier
        let hangGuard = Task.detached {
            try await Task.sleep(for: .seconds(600))
            kill(pid, SIGKILL)
        }
        defer { hangGuard.cancel() }
        func said() -> String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
        try await space.waitFor("ran-1")
        try space.write("helper.py", "VALUE = 2\n")
        try await space.waitFor("ran-2")
        try await waitUntil("the second watching line") {
            said().components(separatedBy: "apimacro: watching").count > 2
        }
        try FileManager.default.removeItem(at: space.url.appendingPathComponent("main.py"))
        try await waitUntil("the deleted macro to be noticed") { said().contains("was deleted; waiting for it") }
        try space.write(
            "main.py", "import helper\nprint('back', helper.VALUE)\nopen(f'back-{helper.VALUE}', 'w').close()\n")
        try await space.waitFor("back-2")
        try await waitUntil("the third watching line") {
            said().components(separatedBy: "apimacro: watching").count > 3
        }
        kill(pid, SIGINT)
        let ended = await process.exit()
        #expect(ended.status == 0 && !ended.signalled, "\(said())")
        let printed = try String(contentsOf: output, encoding: .utf8)
        #expect(printed.hasPrefix("--- run 1, 20"), "\(printed)")
        #expect(printed.contains("ran 1\n\n--- run 2, "), "\(printed)")
        #expect(printed.contains(": helper.py changed\nran 2\n"), "\(printed)")
        #expect(printed.contains(": main.py changed\nback 2\n"), "\(printed)")
        #expect(said().contains("apimacro: watching main.py and 1 module it imports for changes (Ctrl-C stops)"))
        #expect(said().contains("main.py is back"), "\(said())")
    }

    @Test("--watch refuses -c and --every")
    func watchMisuse() async throws {
        let space = try Workspace(files: ["m.py": "print(1)\n"])
        defer { space.remove() }
        let code = try await space.run("run", "--watch", "-c", "print(1)")
        #expect(code.status == 2 && code.stderr.contains("--watch needs a macro file"), "\(code.stderr)")
        let every = try await space.run("run", "--watch", "--every", "1s", "m.py")
        #expect(every.status == 2 && every.stderr.contains("--watch and --every cannot go together"))
    }

    @Test(":reload re-imports a module a :run imported from the macro folder once it changed")
    func replReload() async throws {
        let space = try Workspace(files: [
            "macros/helper.py": "VALUE = 1\n",
            "macros/tool.py": "import helper\nprint('value', helper.VALUE)\n",
        ])
        defer { space.remove() }
        let session = """
            :reload
            :run tool
            _ = open('macros/helper.py', 'w').write('VALUE = 2\\n')
            :run tool
            :reload
            :run tool
            :reload

            """
        let result = try await space.run("repl", stdin: session)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == """
                nothing changed since the modules were imported
                value 1
                value 1
                reloaded helper
                value 2
                nothing changed since the modules were imported

                """)
    }

    /// A port nothing listens on now (the kernel's pick, released).
    static func freePort() throws -> Int {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0
            }
        }
        guard ok else { throw WorkspaceError("cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A small Debug Adapter Protocol client (the protocol over TCP, as VS Code speaks it):
    /// connects to debugpy (until it listens), initialize, attach, setBreakpoints, configurationDone,
    /// waits for the `stopped` event, asks where, continues and waits for the end.
    static let dapClient = #"""
        import json, socket, sys, time

        port, path, line = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        deadline = time.monotonic() + 600
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port))
                break
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    sys.exit("debugpy never listened")
                time.sleep(0.05)
        buffer = b""
        seq = 0

        def send(command, arguments=None):
            global seq
            seq += 1
            body = json.dumps({"seq": seq, "type": "request", "command": command,
                               "arguments": arguments or {}}).encode()
            sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            return seq

        def read_more():
            global buffer
            data = sock.recv(65536)
            if not data:
                raise EOFError
            buffer += data

        def receive():
            global buffer
            while b"\r\n\r\n" not in buffer:
                read_more()
            header, buffer = buffer.split(b"\r\n\r\n", 1)
            length = next(int(h.split(b":")[1]) for h in header.split(b"\r\n") if h.lower().startswith(b"content-length"))
            while len(buffer) < length:
                read_more()
            body, buffer = buffer[:length], buffer[length:]
            return json.loads(body)

        def wait(predicate):
            while True:
                message = receive()
                if message.get("type") == "response" and not message.get("success", True):
                    sys.exit(f"{message.get('command')} failed: {message.get('message')}")
                if predicate(message):
                    return message

        def event(name):
            return lambda m: m.get("type") == "event" and m.get("event") == name

        def response(number):
            return lambda m: m.get("type") == "response" and m.get("request_seq") == number

        wait(response(send("initialize", {"clientID": "apimacro-test", "adapterID": "debugpy",
                                          "pathFormat": "path", "linesStartAt1": True, "columnsStartAt1": True})))
        send("attach", {"justMyCode": True})
        wait(event("initialized"))
        reply = wait(response(send("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": line}]})))
        print("breakpoints verified:", [b.get("verified") for b in reply["body"]["breakpoints"]], flush=True)
        send("configurationDone")
        stopped = wait(event("stopped"))
        thread = stopped["body"]["threadId"]
        trace = wait(response(send("stackTrace", {"threadId": thread, "levels": 1})))
        frame = trace["body"]["stackFrames"][0]
        print(f"stopped at {frame['source']['path']}:{frame['line']} ({stopped['body'].get('reason')})", flush=True)
        send("continue", {"threadId": thread})
        try:
            wait(lambda m: m.get("type") == "event" and m.get("event") in ("terminated", "exited"))
        except EOFError:
            pass
        print("detached", flush=True)
        """#
}
