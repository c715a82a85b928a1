import Foundation
import TestSupport
import Testing

/// What a run of the binary whose stdout went into a pipe printed before the reader closed it.
struct PipedRun {
    /// The lines the reader took before closing its end.
    let head: String
    let status: Int32
    let signalled: Bool
    let stderr: String
}

/// A real pipe whose reader leaves early (`apimacro ... | head -N`): no timing involved.
///
/// The pipe is made and read by a small single-threaded Python process, not by the test
/// process: there, a process another test spawns at the same moment inherits every open
/// descriptor until its `exec` (close-on-exec acts only then), so the reading end could
/// outlive the test's `close` for a moment and the next write succeed (a batch then went on
/// to its next job once at load 8). The helper spawns nothing else, and its child gets only
/// its three standard descriptors (`close_fds`).
enum ClosingReader {
    /// Runs `apimacro ARGS` in `space` with stdout into a pipe, reads `lines` lines, closes the
    /// reading end, creates `afterClose` (if given), and waits for the process to end.
    ///
    /// SIGPIPE starts with its default disposition in the child, as under a shell.
    static func run(
        _ arguments: [String], in space: Workspace, environment: [String: String] = [:], stdin: String? = nil,
        lines: Int, afterClose: URL? = nil
    ) async throws -> PipedRun {
        let request: [String: Any] = [
            "argv": [Binary.url.path] + arguments, "lines": lines, "after_close": afterClose?.path ?? "",
        ]
        let encoded = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        let helper = try await Binary.run(
            ["-c", script, encoded], in: space.url, environment: environment, stdin: stdin, limit: 600,
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        guard helper.status == 0,
            let answer = try JSONSerialization.jsonObject(with: Data(helper.stdout.utf8)) as? [String: Any],
            let head = answer["head"] as? String, let code = answer["returncode"] as? Int
        else { throw WorkspaceError("the pipe's reader failed (\(helper.status)): \(helper.stdout)\(helper.stderr)") }
        // Popen's return code is -N for a child a signal ended.
        return PipedRun(
            head: head, status: Int32(code < 0 ? -code : code), signalled: code < 0, stderr: helper.stderr)
    }

    /// The reader's program.
    ///
    /// A pipe, the child writing into it, `lines` lines read a byte at a time (nothing past
    /// them is taken), the reading end closed, then the marker file and the wait. A hang guard only: a child that never writes or never ends is killed after 240 s.
    static let script = """
        import json, os, signal, subprocess, sys
        request = json.loads(sys.argv[1])
        reader, writer = os.pipe()
        child = subprocess.Popen(request["argv"], stdout=writer)
        os.close(writer)
        signal.signal(signal.SIGALRM, lambda *_: child.kill())
        signal.alarm(240)
        head = b""
        while head.count(b"\\n") < request["lines"]:
            try:
                byte = os.read(reader, 1)
            except InterruptedError:
                continue
            if not byte:
                break
            head += byte
        os.close(reader)
        if request["after_close"]:
            open(request["after_close"], "wb").close()
        code = child.wait()
        signal.alarm(0)
        print(json.dumps({"head": head.decode("utf-8", "replace"), "returncode": code}))
        """
}

@Suite("a closed stdout ends the run quietly with 141")
struct ClosedOutputTests {
    @Test("run MACRO --format ndjson | head -2: no traceback, nothing on stderr, exit 141")
    func runWhoseWriteFails() async throws {
        let space = try Workspace(files: [
            "endless.py": """
            import apimacro, itertools
            for n in itertools.count():
                apimacro.output([{"n": n}])
            """
        ])
        defer { space.remove() }
        let result = try await ClosingReader.run(["run", "endless.py", "--format", "ndjson"], in: space, lines: 2)
        #expect(result.head == "{\"n\":0}\n{\"n\":1}\n")
        #expect(!result.signalled && result.status == 141, "\(result.status) \(result.signalled)")
        #expect(result.stderr == "", "\(result.stderr)")
    }

    @Test("a reader gone before the final flush: what stdout held is lost, so the run ends 141, quietly")
    func runWhoseFinalFlushFails() async throws {
        // Prints two lines, waits until its stdout's reader has gone (polling its own stdout for
        // the error a pipe without reader reports), then prints a line the flush at the end loses.
        let space = try Workspace(files: [
            "late.py": """
            import select, sys, time
            print("one")
            print("two", flush=True)
            poller = select.poll()
            poller.register(1, select.POLLOUT)
            while not any(events & select.POLLERR for _, events in poller.poll(0)):
                time.sleep(0.01)
            print("lost")
            """
        ])
        defer { space.remove() }
        let result = try await ClosingReader.run(["run", "late.py"], in: space, lines: 2)
        #expect(result.head == "one\ntwo\n")
        #expect(!result.signalled && result.status == 141, "\(result.status) \(result.signalled)")
        #expect(result.stderr == "", "\(result.stderr)")
    }

    @Test("a BrokenPipeError that is not stdout's is the macro's own error: traceback, exit 1")
    func otherBrokenPipe() async throws {
        let space = try Workspace(files: [
            "own.py": """
            import os
            print("before", flush=True)
            reader, writer = os.pipe()
            os.close(reader)
            os.write(writer, b"x")
            """
        ])
        defer { space.remove() }
        // The reader stays until the end (it waits for more lines than come): stdout is fine.
        let result = try await ClosingReader.run(["run", "own.py"], in: space, lines: 1000)
        #expect(result.head == "before\n")
        #expect(result.status == 1 && !result.signalled, "\(result.status)")
        #expect(result.stderr.hasSuffix("BrokenPipeError: [Errno 32] Broken pipe\n"), "\(result.stderr)")
        let toFile = try await space.run("run", "own.py")
        #expect(toFile.status == 1 && toFile.stderr.contains("BrokenPipeError"), "\(toFile.stderr)")
    }

    @Test("repl < session | head -2: the session ends at the closed pipe, quietly, exit 141")
    func repl() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let session = """
            import itertools
            for n in itertools.count():
                print(n)

            print("after the loop")
            """
        let result = try await ClosingReader.run(["repl"], in: space, stdin: session + "\n", lines: 2)
        #expect(result.head == "0\n1\n")
        #expect(!result.signalled && result.status == 141, "\(result.status) \(result.signalled)")
        #expect(result.stderr == "", "\(result.stderr)")
    }

    @Test(
        "batch | head -1: the batch stops (the next job never runs), removes its work folder, says nothing, exits 141")
    func batch() async throws {
        let space = try Workspace(files: [
            "first.py": "print('first')\n",
            // Ends only once the test has closed the pipe: its block is the write that fails.
            "second.py": "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\nprint('second')\n",
            "third.py": "open('third.ran', 'w').close()\n",
        ])
        defer { space.remove() }
        let temporary = space.url.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let go = space.url.appendingPathComponent("go")
        let result = try await ClosingReader.run(
            ["batch", "-j", "1", "--junit", "report.xml", "first.py", "second.py", "third.py"], in: space,
            environment: ["TMPDIR": temporary.path], lines: 1, afterClose: go)
        #expect(result.head == "==> first: ok, exit 0 <==\n")
        #expect(!result.signalled && result.status == 141, "\(result.status) \(result.signalled)")
        #expect(result.stderr == "", "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("third.ran").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [], "the work folder is removed")
        // Nothing lost that did not go to stdout: the JUnit report still says what happened.
        let report = try String(contentsOf: space.url.appendingPathComponent("report.xml"), encoding: .utf8)
        #expect(report.contains("tests=\"3\""), "\(report)")
    }
}
