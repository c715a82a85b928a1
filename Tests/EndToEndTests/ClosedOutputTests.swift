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
enum ClosingReader {
    /// Runs `apimacro ARGS` in `space` with stdout into a pipe, reads `lines` lines, closes the
    /// reading end, calls `afterClose`, and waits for the process to end.
    ///
    /// SIGPIPE starts with its default disposition in the child, as under a shell.
    static func run(
        _ arguments: [String], in space: Workspace, environment: [String: String] = [:], stdin: String? = nil,
        lines: Int, afterClose: @Sendable () throws -> Void = {}
    ) async throws -> PipedRun {
        var ends: [Int32] = [0, 0]
        // Close-on-exec: a process another test starts meanwhile must not inherit the reading
        // end and keep the pipe open (the child gets its end through dup2, which clears it).
        guard closeOnExecPipe(&ends, O_CLOEXEC) == 0 else {
            throw WorkspaceError("pipe: \(String(cString: strerror(errno)))")
        }
        let errURL = space.url.appendingPathComponent(".stderr-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: errURL) }
        var input = Spawned.Stream.null
        if let stdin {
            let inURL = space.url.appendingPathComponent(".stdin-\(UUID().uuidString)")
            try Data(stdin.utf8).write(to: inURL)
            input = .file(inURL.path)
        }
        let process: Spawned
        do {
            process = try Spawned(
                Binary.url.path, arguments, environment: Binary.environment(environment, home: space.url),
                directory: space.url.path, stdin: input, stdout: .descriptor(ends[1]), stderr: .file(errURL.path),
                defaultSignals: [SIGPIPE])
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        close(ends[1])
        let pid = process.processIdentifier
        // A hang guard only: a process that never writes or never ends is killed (then EOF).
        let guardTask = Task.detached {
            try await Task.sleep(for: .seconds(240))
            kill(pid, SIGKILL)
        }
        defer { guardTask.cancel() }
        let reader = ends[0]
        let head = await readLines(reader, count: lines)
        close(reader)
        try afterClose()
        let exit = await process.exit()
        return PipedRun(
            head: head, status: exit.status, signalled: exit.signalled,
            stderr: try String(contentsOf: errURL, encoding: .utf8))
    }

    /// Reads from `descriptor` until `count` lines (or end of file), on a thread of its own: the
    /// blocking read holds no thread of the cooperative pool.
    static func readLines(_ descriptor: Int32, count: Int) async -> String {
        await withCheckedContinuation { continuation in
            Thread {
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 1)
                // One byte at a time: nothing past the last line is taken from the pipe.
                while bytes.lazy.filter({ $0 == 10 }).count < count, read(descriptor, &buffer, 1) == 1 {
                    bytes.append(buffer[0])
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }.start()
        }
    }
}

// glibc has pipe2, but Swift's Glibc module hides it (a GNU extension).
@_silgen_name("pipe2")
private func closeOnExecPipe(_ ends: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

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
            environment: ["TMPDIR": temporary.path], lines: 1
        ) { try Data().write(to: go) }
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
