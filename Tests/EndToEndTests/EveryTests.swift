import Foundation
import TestSupport
import Testing

/// `apimacro run --every` (issue 38, "A watch mode") through the built binary: cycles are
/// counted by the lines a macro appends to a file, and the watch is stopped with SIGTERM once
/// enough were seen (events, never durations).
@Suite("run --every: the watch mode")
struct EveryTests {
    /// Appends the state's cycle count to ticks.txt; fails (exit 1) when fail.txt names that count.
    static let tick = """
        import apimacro, os
        n = apimacro.state.get("n", 0) + 1
        with open("ticks.txt", "a") as f:
            f.write(f"{n}\\n")
        print("tick", n)
        if os.path.exists("fail.txt") and open("fail.txt").read().strip() == str(n):
            os.remove("fail.txt")
            raise RuntimeError("cycle failed on purpose")
        apimacro.state["n"] = n
        """

    func ticks(_ space: Workspace) -> [String] {
        let text = (try? String(contentsOf: space.url.appendingPathComponent("ticks.txt"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// Runs `arguments` and sends SIGTERM once `enough` holds.
    func watch(
        _ space: Workspace, _ arguments: [String], environment: [String: String] = [:],
        until enough: @escaping @Sendable () -> Bool
    ) async throws -> RunResult {
        try await Binary.run(arguments, in: space.url, environment: environment, limit: 600) { process in
            try await waitUntil("the watch's cycles") { enough() }
            kill(process.processIdentifier, SIGTERM)
        }
    }

    @Test("cycles run start to start, each commits the state, stamped and separated; SIGTERM ends with 0")
    func cyclesAndStop() async throws {
        let space = try Workspace(files: ["tick.py": Self.tick])
        defer { space.remove() }
        let result = try await watch(space, ["run", "--every", "1s", "tick.py"]) { [space] in
            self.ticks(space).count >= 3
        }
        #expect(result.status == 0 && !result.signalled, "\(result.stderr)")
        let seen = ticks(space)
        #expect(Array(seen.prefix(3)) == ["1", "2", "3"], "state committed after each cycle: \(seen)")
        #expect(result.stdout.hasPrefix("--- cycle 1, 20"), "\(result.stdout)")
        #expect(result.stdout.contains("tick 1\n\n--- cycle 2, "), "\(result.stdout)")
        let before = ticks(space).count
        let quiet = try await watch(space, ["run", "-q", "--every", "1s", "tick.py"]) { [space] in
            self.ticks(space).count > before
        }
        #expect(quiet.status == 0 && quiet.stdout.hasPrefix("tick ") && !quiet.stdout.contains("---"))
    }

    @Test("a failed cycle is reported, commits nothing and backs off; the next cycle goes on")
    func failedCycle() async throws {
        let space = try Workspace(files: ["tick.py": Self.tick, "fail.txt": "2"])
        defer { space.remove() }
        let result = try await watch(space, ["run", "--every", "1s", "tick.py"]) { [space] in
            self.ticks(space).count >= 3
        }
        #expect(result.status == 0, "\(result.stderr)")
        // Cycle 2 failed: its n was not committed, so cycle 3 counts 2 again.
        #expect(Array(ticks(space).prefix(3)) == ["1", "2", "2"], "\(ticks(space))")
        #expect(result.stderr.contains("RuntimeError: cycle failed on purpose"), "\(result.stderr)")
        #expect(result.stderr.contains("apimacro: cycle 2 failed (exit 1); next in 2 s (backing off)"))
    }

    @Test("the macro file is read again when it changes")
    func reloads() async throws {
        let space = try Workspace(files: ["tick.py": Self.tick])
        defer { space.remove() }
        let result = try await watch(space, ["run", "-q", "--every", "1s", "tick.py"]) { [space] in
            let seen = self.ticks(space)
            let file = space.url.appendingPathComponent("tick.py")
            // After the first cycle (however many ran before this look), the file changes once.
            if !seen.isEmpty, (try? String(contentsOf: file, encoding: .utf8))?.contains("changed") == false {
                try? Data("open('ticks.txt', 'a').write('changed\\n')\n".utf8).write(to: file, options: .atomic)
            }
            return seen.contains("changed")
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(ticks(space).first == "1" && ticks(space).last == "changed")
    }

    @Test("X-Poll-Interval: the watch waits as long as the server asks, and says so")
    func pollInterval() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "poll.py": """
            import apimacro, sys
            apimacro.get(sys.argv[1] + "/cache/poll/2", cache=False)
            open("ticks.txt", "a").write("polled\\n")
            """
        ])
        defer { space.remove() }
        let result = try await watch(space, ["run", "--every", "1s", "poll.py", server.baseURL]) { [space] in
            self.ticks(space).count >= 2
        }
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("apimacro: the server asks to poll every 2 s (X-Poll-Interval)"), "\(result.stderr)")
    }

    @Test("--every below one second or unparsable is a usage error", arguments: ["0.5s", "0", "soon", "10x"])
    func badSpan(span: String) async throws {
        let space = try Workspace(files: ["tick.py": Self.tick])
        defer { space.remove() }
        let result = try await space.run("run", "--every", span, "tick.py")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--every takes a span of at least one second"), "\(result.stderr)")
        #expect(ticks(space).isEmpty)
    }
}
