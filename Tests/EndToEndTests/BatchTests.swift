import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("apimacro batch, end to end", .serialized)
struct BatchTests {
    /// A macro that makes one request and prints numbered lines to both
    /// streams, slowly enough that four of them run side by side.
    static func okMacro(_ name: String) -> String {
        """
        import sys, time
        from apimacro import github
        for i in range(40):
            print("\(name) out", i, flush=True)
            if i % 4 == 0:
                print("\(name) err", i, file=sys.stderr, flush=True)
            time.sleep(0.002)
        print("\(name)", github.user("octocat")["login"])
        """
    }

    static func expectedOut(_ name: String) -> [String] {
        (0..<40).map { "\(name) out \($0)" } + ["\(name) octocat"]
    }

    static func expectedErr(_ name: String) -> [String] {
        stride(from: 0, to: 40, by: 4).map { "\(name) err \($0)" }
    }

    /// Each macro's block under its `==> NAME: ... <==` header, up to the next header or the summary.
    static func blocks(_ text: String) -> [String: [String]] {
        var blocks: [String: [String]] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("==> "), let colon = line.firstIndex(of: ":") {
                current = String(line[line.index(line.startIndex, offsetBy: 4)..<colon])
                #expect(blocks[current ?? ""] == nil, "two blocks for \(line)")
                blocks[current ?? ""] = []
            } else if line.hasPrefix("MACRO ") {
                current = nil
            } else if let name = current, !line.isEmpty {
                blocks[name, default: []].append(line)
            }
        }
        return blocks
    }

    /// Counts elements and keeps the attributes of the first of each kind while parsing XML.
    final class JUnitReader: NSObject, XMLParserDelegate {
        var counts: [String: Int] = [:]
        var attributes: [String: [String: String]] = [:]
        var errorTypes: [String] = []

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String]
        ) {
            counts[name, default: 0] += 1
            if self.attributes[name] == nil { self.attributes[name] = attributes }
            if name == "error" { errorTypes.append(attributes["type"] ?? "") }
        }
    }

    @Test(
        "20 macros with -j 4: 16 succeed, 2 fail, one hangs past --timeout, one segfaults; nothing lost or interleaved")
    func twentyMacros() async throws {
        let server = try await TestServer.start()
        let okNames = (1...16).map { String(format: "ok%02d", $0) }
        var files: [String: String] = [:]
        for name in okNames { files["\(name).py"] = Self.okMacro(name) }
        files["raises.py"] = "print('about to fail', flush=True)\nraise ValueError('boom')\n"
        files["exits3.py"] = "import sys\nprint('exiting 3')\nsys.exit(3)\n"
        files["hangs.py"] =
            "import time\nwhile True:\n    try:\n        time.sleep(100)\n    except BaseException:\n        pass\n"
        files["segfault.py"] = "import ctypes\nprint('crashing', flush=True)\nctypes.string_at(0)\n"
        let space = try Workspace(files: files)
        defer { space.remove() }
        let order =
            Array(okNames[0..<5]) + ["raises", "hangs"] + Array(okNames[5..<10]) + ["segfault", "exits3"]
            + Array(okNames[10...])
        // --timeout applies to every macro: a minute is a margin load cannot eat for the quick
        // ones (on a 2-core box at load 17, even a two-line macro took over 7 s to end).
        let arguments =
            ["batch", "-j", "4", "--timeout", "60", "--no-cache", "--junit", "report.xml"] + order.map { "\($0).py" }
        let result = try await Binary.run(
            arguments, in: space.url, environment: ["APIMACRO_GITHUB_URL": server.baseURL], limit: 600)
        try await server.shutdown()

        #expect(result.status == 1, "\(result.stderr)")
        // The summary: one row per macro in the order given, then the tally.
        let summary = try #require(result.stdout.range(of: "MACRO ").map { String(result.stdout[$0.lowerBound...]) })
        let rows = summary.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        }
        try #require(rows.count == 22, "\(summary)")
        #expect(rows[0] == ["MACRO", "STATUS", "EXIT", "SECONDS", "REQUESTS", "CACHE", "HITS"])
        for (row, name) in zip(rows[1...20], order) {
            #expect(row.first == name)
            switch name {
            case "raises": #expect(row[1...2] == ["failed", "1"], "\(row)")
            case "exits3": #expect(row[1...2] == ["failed", "3"], "\(row)")
            // Stopped by its own deadline (exit 1), or, when its start was slowed by load past the
            // batch's grace, killed by the batch (no exit code): a timeout either way.
            case "hangs": #expect(row[1] == "timeout" && ["1", "-"].contains(row[2]), "\(row)")
            case "segfault":
                #expect(Array(row[1...]).filter { $0 != row[4] } == ["crashed", "(SIGSEGV)", "-", "-", "-"], "\(row)")
            default:
                #expect(row[1...2] == ["ok", "0"], "\(row)")
                #expect(row[4...5] == ["1", "0"], "\(name): one request, no cache hit: \(row)")
            }
        }
        #expect(
            rows[21].joined(separator: " ").hasPrefix("20 macros: 16 ok, 2 failed, 1 timeout, 1 crashed (SIGSEGV) in "))

        // Every macro's output whole and in order under its own header, on each stream.
        let out = Self.blocks(
            String(result.stdout[..<(result.stdout.range(of: "MACRO ")?.lowerBound ?? result.stdout.endIndex)]))
        let err = Self.blocks(result.stderr)
        for name in okNames {
            #expect(out[name] == Self.expectedOut(name), "\(name) stdout: \(out[name] ?? [])")
            #expect(err[name] == Self.expectedErr(name), "\(name) stderr: \(err[name] ?? [])")
        }
        #expect(out["raises"] == ["about to fail"])
        #expect(err["raises"]?.last == "ValueError: boom")
        #expect(out["exits3"] == ["exiting 3"])
        #expect(out["segfault"] == ["crashing"])
        if rows.first(where: { $0.first == "hangs" })?[2] == "1" {
            #expect(err["hangs"]?.contains { $0.contains("ran longer than its --timeout of 60 s") } == true)
        }

        // The JUnit report says the same.
        let reader = JUnitReader()
        let xml = try Data(contentsOf: space.url.appendingPathComponent("report.xml"))
        #expect(JUnitSchemaCheck.problems(in: xml) == [], "report.xml does not validate against junit-10.xsd")
        let parser = XMLParser(data: xml)
        parser.delegate = reader
        #expect(parser.parse(), "report.xml is not well-formed XML")
        let suite = reader.attributes["testsuite"] ?? [:]
        #expect(suite["tests"] == "20")
        #expect(suite["failures"] == "2")
        #expect(suite["errors"] == "2")
        #expect(suite["skipped"] == "0")
        #expect(reader.attributes["testsuites"]?["skipped"] == nil)
        #expect(reader.attributes["testcase"]?["file"] == nil)
        #expect(reader.counts["testcase"] == 20)
        #expect(reader.counts["failure"] == 2)
        #expect(reader.errorTypes.sorted() == ["crashed", "timeout"])
    }

    @Test("a macro that stops itself (SIGSTOP) past --timeout is killed by the batch and reported as timeout")
    func stoppedChildIsKilled() async throws {
        let space = try Workspace(files: [
            "stops.py": "import os, signal\nprint('stopping', flush=True)\nos.kill(os.getpid(), signal.SIGSTOP)\n",
            "fine.py": "print('fine')\n",
        ])
        defer { space.remove() }
        // fine.py must end within --timeout (+3 s) on a loaded machine too: a minute, where it
        // takes a fraction of a second, is a margin load cannot eat.
        let result = try await space.run(
            "batch", "-j", "2", "--timeout", "60", "--output-dir", "out", "stops.py", "fine.py")
        #expect(result.status == 1)
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.first { $0.first == "stops" }?[1...2] == ["timeout", "-"], "\(result.stdout)")
        #expect(rows.first { $0.first == "fine" }?[1...2] == ["ok", "0"], "\(result.stdout)")
        // --output-dir: nothing printed but the summary; the files hold each stream.
        #expect(!result.stdout.contains("==>"))
        #expect(
            try String(contentsOf: space.url.appendingPathComponent("out/stops.out"), encoding: .utf8) == "stopping\n")
        #expect(try String(contentsOf: space.url.appendingPathComponent("out/fine.out"), encoding: .utf8) == "fine\n")
    }

    @Test("--fail-fast stops at the first failure; a missing macro is a usage error before any runs")
    func failFastAndUsage() async throws {
        let space = try Workspace(files: [
            "bad.py": "raise SystemExit(4)\n", "later.py": "print('should not run')\n",
        ])
        defer { space.remove() }
        let result = try await space.run(
            "batch", "-j", "1", "--fail-fast", "--junit", "report.xml", "bad.py", "later.py")
        #expect(result.status == 1)
        #expect(!result.stdout.contains("should not run"))
        #expect(result.stdout.contains("2 macros: 0 ok, 1 failed, 1 not run in "), "\(result.stdout)")
        let xml = try Data(contentsOf: space.url.appendingPathComponent("report.xml"))
        #expect(
            JUnitSchemaCheck.problems(in: xml) == [], "a report with a skipped macro validates against junit-10.xsd")
        let missing = try await space.run("batch", "later.py", "nosuch")
        #expect(missing.status == 2)
        #expect(missing.stderr.hasPrefix("apimacro: no macro named 'nosuch'"), "\(missing.stderr)")
        #expect(missing.stdout.isEmpty)
    }

    @Test("on a terminal a live progress line counts done, running and failed, and is erased before the summary")
    func progressLine() async throws {
        // Both wait for the file `go`, which the test creates once it has seen the progress line.
        let wait = "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.02)\n"
        let space = try Workspace(files: ["slow1.py": wait, "slow2.py": wait + "raise SystemExit(2)\n"])
        defer { space.remove() }
        let terminal = try PseudoTerminal(
            ["batch", "-j", "2", "slow1.py", "slow2.py"], in: space.url, environment: [:])
        defer { terminal.close() }
        try await terminal.expect("batch: 0 done, 2 running, 0 failed, ", timeout: 60)
        try space.write("go", "")
        let end = try await terminal.expect("2 macros: 1 ok, 1 failed in ", timeout: 60)
        #expect(try await terminal.waitForExit() == 1)
        let output = String(decoding: Array(terminal.output.utf8)[..<end], as: UTF8.self)
        #expect(output.contains("\r\u{1B}[KMACRO "), "the progress line is erased before the summary: \(output)")
    }

    @Test("Ctrl-C interrupts the running macros, skips the rest, still summarizes, and exits 130")
    func interrupt() async throws {
        // Each says it has started with a file; Ctrl-C comes once two have (an event, not a delay).
        func slow(_ name: String) -> String {
            "import time\nprint('start', flush=True)\n" + pythonTouch("\(name).started") + "time.sleep(600)\n"
        }
        let space = try Workspace(files: ["s1.py": slow("s1"), "s2.py": slow("s2"), "s3.py": slow("s3")])
        defer { space.remove() }
        let result = try await space.run("batch", "-j", "2", "s1.py", "s2.py", "s3.py", defaultSIGINT: true) {
            [space] process in
            try? await space.waitFor("s1.started")
            try? await space.waitFor("s2.started")
            kill(process.processIdentifier, SIGINT)
        }
        #expect(result.status == 130, "\(result.stderr)")
        #expect(result.stdout.contains("3 macros: 0 ok, 2 interrupted, 1 not run in "), "\(result.stdout)")
        #expect(result.stderr.contains("apimacro: s1.py interrupted"))
    }

    /// The permission bits of `path` (not following a symbolic link).
    static func mode(_ path: URL) -> mode_t {
        var status = stat()
        guard lstat(path.path, &status) == 0 else { return 0o7777 }
        return status.st_mode & 0o777
    }

    /// The batch work folders in `folder`.
    static func workFolders(in folder: URL) -> [URL] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix("apimacro-batch-") }.map { folder.appendingPathComponent($0) }
    }

    @Test(
        "the work folder is 0700 and each child's output 0600 while the macro runs, under umask 000; a killed batch's folder stays private and the next batch removes it"
    )
    func privateWorkFolder() async throws {
        let token = "ghp_batchWorkFolderToken0123456789"
        // Prints the token on both streams, says it runs (its pid in `started`), then waits
        // on the FIFO `gate` until the test opens it: an event, not a delay.
        let blocks = """
            import os, sys
            print("token", os.environ["APIMACRO_GITHUB_TOKEN"], flush=True)
            print("token", os.environ["APIMACRO_GITHUB_TOKEN"], file=sys.stderr, flush=True)
            with open("started.new", "w") as note:
                note.write(str(os.getpid()))
            os.rename("started.new", "started")
            with open("gate") as gate:
                gate.read()
            """
        let space = try Workspace(files: ["blocks.py": blocks, "quick.py": "print('quick')\n"])
        defer { space.remove() }
        let temporary = space.url.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let gate = space.url.appendingPathComponent("gate")
        #expect(mkfifo(gate.path, 0o600) == 0)
        let environment = ["TMPDIR": temporary.path, "APIMACRO_GITHUB_TOKEN": token]
        // umask 000: modes asked for are modes given, so nothing but the code keeps others out.
        let shell = ["-c", "umask 000; exec \"$0\" \"$@\"", Binary.url.path]
        let sh = URL(fileURLWithPath: "/bin/sh")

        /// Waits for the macro, then checks the folder and the files while it runs.
        @Sendable func checkWhileRunning() async throws -> URL {
            try await space.waitFor("started")
            let folders = Self.workFolders(in: temporary)
            try #require(folders.count == 1, "\(folders)")
            let folder = folders[0]
            #expect(Self.mode(folder) == 0o700, "the work folder: \(String(Self.mode(folder), radix: 8))")
            for name in ["0.out", "0.err"] {
                let file = folder.appendingPathComponent(name)
                #expect(Self.mode(file) == 0o600, "\(name): \(String(Self.mode(file), radix: 8))")
                // These are the files that hold the unredacted token.
                #expect(try String(contentsOf: file, encoding: .utf8) == "token \(token)\n")
            }
            return folder
        }

        // 1. A batch that ends: the folder is private while it runs and gone after.
        let ended = try await Binary.run(
            shell + ["batch", "blocks.py"], in: space.url, environment: environment, executable: sh
        ) { _ in
            _ = try await checkWhileRunning()
            let writer = open(gate.path, O_WRONLY | O_CLOEXEC)
            if writer >= 0 { close(writer) }
        }
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(ended.stdout.contains("token REDACTED") && !ended.stdout.contains(token), "\(ended.stdout)")
        #expect(Self.workFolders(in: temporary).isEmpty)

        // 2. A batch killed with SIGKILL (and its child): what it leaves is readable by its owner only.
        try FileManager.default.removeItem(at: space.url.appendingPathComponent("started"))
        let killed = try await Binary.run(
            shell + ["batch", "blocks.py"], in: space.url, environment: environment, executable: sh
        ) { process in
            _ = try await checkWhileRunning()
            kill(process.processIdentifier, SIGKILL)
            let child = try String(contentsOf: space.url.appendingPathComponent("started"), encoding: .utf8)
            if let pid = pid_t(child), pid > 1 { kill(pid, SIGKILL) }
        }
        #expect(killed.signalled && killed.status == SIGKILL)
        let leftovers = Self.workFolders(in: temporary)
        try #require(leftovers.count == 1)
        #expect(Self.mode(leftovers[0]) == 0o700)
        #expect(Self.mode(leftovers[0].appendingPathComponent("0.out")) == 0o600)
        #expect(Self.mode(leftovers[0].appendingPathComponent("0.err")) == 0o600)

        // 3. The next batch removes the killed one's folder; an older apimacro's folder (no lock)
        // is made owner-only, and a symbolic link of that name is left alone, as is its target.
        let old = temporary.appendingPathComponent("apimacro-batch-old")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: false)
        chmod(old.path, 0o755)
        let target = space.url.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        chmod(target.path, 0o755)
        let link = temporary.appendingPathComponent("apimacro-batch-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let next = try await Binary.run(
            shell + ["batch", "quick.py"], in: space.url, environment: environment, executable: sh)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(!FileManager.default.fileExists(atPath: leftovers[0].path), "the killed batch's folder is removed")
        #expect(Self.mode(old) == 0o700)
        #expect(Self.mode(target) == 0o755 && FileManager.default.fileExists(atPath: target.path))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == target.path)
        #expect(
            Self.workFolders(in: temporary).map(\.lastPathComponent).sorted() == [
                "apimacro-batch-link", "apimacro-batch-old",
            ])
    }

    @Test("--shard 1/3, 2/3 and 3/3 together run every job exactly once, each with its own JUnit file")
    func threeShards() async throws {
        let lines = (1...7).map { "name=job\($0) echo.py \($0)" }.joined(separator: "\n") + "\n"
        let space = try Workspace(files: ["echo.py": "import sys\nprint('ran', sys.argv[1])\n", "jobs.txt": lines])
        defer { space.remove() }
        async let first = space.run("batch", "--file", "jobs.txt", "--shard", "1/3", "--junit", "report.xml")
        async let second = space.run("batch", "--file", "jobs.txt", "--shard", "2/3", "--junit", "report.xml")
        async let third = space.run("batch", "--file", "jobs.txt", "--shard", "3/3", "--junit", "report.xml")
        let results = try await [first, second, third]
        var ran: [Int] = []
        for (offset, result) in results.enumerated() {
            let shard = offset + 1
            #expect(result.status == 0, "\(result.stderr)")
            let mine = result.stdout.split(separator: "\n").compactMap {
                $0.hasPrefix("ran ") ? Int($0.dropFirst(4)) : nil
            }
            #expect(
                mine.sorted() == Array(stride(from: shard, through: 7, by: 3)),
                "shard \(shard) runs jobs \(shard), \(shard)+3, ...")
            ran += mine
            #expect(
                result.stderr.contains("apimacro: shard \(shard)/3: \(mine.count) of the batch's 7 jobs"),
                "\(result.stderr)")
            let report = space.url.appendingPathComponent("report.shard-\(shard)-of-3.xml")
            let xml = try Data(contentsOf: report)
            #expect(JUnitSchemaCheck.problems(in: xml) == [])
            let reader = JUnitReader()
            let parser = XMLParser(data: xml)
            parser.delegate = reader
            #expect(parser.parse())
            #expect(reader.attributes["testsuite"]?["name"] == "apimacro batch shard \(shard)/3")
            #expect(reader.counts["testcase"] == mine.count)
        }
        #expect(ran.sorted() == Array(1...7), "every job ran exactly once: \(ran)")
        #expect(!FileManager.default.fileExists(atPath: space.url.appendingPathComponent("report.xml").path))
    }

    @Test(
        "--shard auto reads JOB_COMPLETION_INDEX and JOB_COMPLETIONS, and says which is missing; a bad K/N says the form"
    )
    func autoShard() async throws {
        let space = try Workspace(files: ["a.py": "print('a')\n", "b.py": "print('b')\n", "c.py": "print('c')\n"])
        defer { space.remove() }
        let pod = try await Binary.run(
            ["batch", "--shard", "auto", "a.py", "b.py", "c.py"], in: space.url,
            environment: ["JOB_COMPLETION_INDEX": "1", "JOB_COMPLETIONS": "3"])
        #expect(pod.status == 0, "\(pod.stderr)")
        #expect(
            pod.stdout.hasPrefix("==> b: ok, exit 0 <==\nb\n"), "the pod with index 1 runs shard 2/3: \(pod.stdout)")
        #expect(pod.stdout.contains("1 macro: 1 ok in "))
        let outside = try await space.run("batch", "--shard", "auto", "a.py", "b.py")
        #expect(outside.status == 2)
        #expect(
            outside.stderr.hasPrefix(
                "apimacro: JOB_COMPLETION_INDEX and JOB_COMPLETIONS are not set: --shard auto reads"),
            "\(outside.stderr)")
        #expect(outside.stdout.isEmpty, "nothing runs")
        let half = try await Binary.run(
            ["batch", "--shard", "auto", "a.py"], in: space.url, environment: ["JOB_COMPLETION_INDEX": "0"])
        #expect(half.status == 2)
        #expect(half.stderr.hasPrefix("apimacro: JOB_COMPLETIONS is not set"), "\(half.stderr)")
        let bad = try await space.run("batch", "--shard", "3", "a.py")
        #expect(bad.status == 2)
        #expect(
            bad.stderr == "apimacro: --shard 3 is not of the form K/N (shard K of N, 1 <= K <= N, e.g. 2/3) or auto\n")
        let help = try await space.run("batch", "--help")
        #expect(help.stdout.contains("--shard <K/N|auto>"), "\(help.stdout)")
    }
}
