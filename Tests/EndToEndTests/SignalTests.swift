import Foundation
import Synchronization
import TestSupport
import Testing

/// SIGTERM, SIGHUP and an ignored SIGINT, sent to the real binary after an event
/// it announced (a file it wrote), never after a guessed delay (issue 18, items 8 and 13).
@Suite("signals: SIGTERM, SIGHUP, an inherited SIG_IGN")
struct SignalTests {
    /// Whether `pid` is still a process (a zombie counts: it was not reaped).
    static func alive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// Runs `executable arguments` in `space` through `Binary.run`; `whileRunning` gets the pid.
    ///
    /// The status is 128 + n for a signal n, as a shell reports it.
    static func run(
        _ executable: String, _ arguments: [String], in space: Workspace, environment: [String: String] = [:],
        whileRunning: @escaping @Sendable (pid_t) async throws -> Void
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try await Binary.run(
            arguments, in: space.url, environment: environment, limit: 240,
            executable: URL(fileURLWithPath: executable)
        ) { process in try await whileRunning(process.processIdentifier) }
        return (result.signalled ? 128 + result.status : result.status, result.stdout, result.stderr)
    }

    @Test(
        "run --record killed by SIGTERM or SIGHUP writes the HAR and exits 143 / 129",
        arguments: [
            (SIGTERM, "apimacro.sleep(600)"), (SIGHUP, "apimacro.sleep(600)"), (SIGTERM, "time.sleep(600)"),
            (SIGHUP, "while True:\n    pass"),
        ])
    func runRecordSurvivesTermination(signal: Int32, wait: String) async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: [
            "wait.py": "import apimacro, sys, time\napimacro.get(sys.argv[1])\nopen('ready', 'w').close()\n\(wait)\n"
        ])
        defer { space.remove() }
        let har = space.url.appendingPathComponent("x.har")
        let ready = space.url.appendingPathComponent("ready")
        let result = try await Self.run(
            Binary.url.path, ["run", "--no-cache", "--record", har.path, "wait.py", server.baseURL + "/text"], in: space
        ) { pid in
            try await waitUntil("the macro's ready file") { FileManager.default.fileExists(atPath: ready.path) }
            kill(pid, signal)
        }
        #expect(result.status == 128 + signal, "\(result.stderr)")
        #expect(result.stderr.contains("stopped by \(signal == SIGTERM ? "SIGTERM" : "SIGHUP")"), "\(result.stderr)")
        let data = try Data(contentsOf: har)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require((json["log"] as? [String: Any])?["entries"] as? [Any])
        #expect(entries.count == 1)
        try await server.shutdown()
    }

    @Test(
        "batch stopped by SIGTERM or SIGHUP ends its children, removes its temporary folder, summarizes, exits 143 / 129",
        arguments: [SIGTERM, SIGHUP])
    func batchTermination(signal: Int32) async throws {
        let macro = """
            import os, time
            name = os.path.basename(__file__)
            with open(f'.pid-{name}', 'w') as handle:
                handle.write(str(os.getpid()))
            os.rename(f'.pid-{name}', f'pid-{name}')
            time.sleep(600)

            """
        let space = try Workspace(files: ["a.py": macro, "b.py": macro])
        defer { space.remove() }
        let temporary = space.url.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        @Sendable func batchFolders() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []).filter {
                $0.hasPrefix("apimacro-batch-")
            }
        }
        let pidFiles = ["pid-a.py", "pid-b.py"].map { space.url.appendingPathComponent($0) }
        let children = PidBox()
        let result = try await Self.run(
            Binary.url.path, ["batch", "-j", "2", "a.py", "b.py"], in: space, environment: ["TMPDIR": temporary.path]
        ) { pid in
            try await waitUntil("both children's pid files") {
                pidFiles.allSatisfy { FileManager.default.fileExists(atPath: $0.path) }
            }
            children.pids = try pidFiles.map { try #require(pid_t(String(contentsOf: $0, encoding: .utf8))) }
            #expect(batchFolders().count == 1, "the batch's temporary folder exists while it runs")
            #expect(children.pids.allSatisfy(Self.alive))
            kill(pid, signal)
        }
        #expect(result.status == 128 + signal, "\(result.stdout)\n\(result.stderr)")
        #expect(children.pids.count == 2)
        for child in children.pids { #expect(!Self.alive(child), "child \(child) still runs") }
        #expect(batchFolders().isEmpty, "left behind: \(batchFolders())")
        #expect(result.stdout.contains("2 macros: 0 ok, 2 interrupted"), "\(result.stdout)")
    }

    @Test("run started with SIGINT ignored keeps ignoring it (no crash), then ends normally")
    func ignoredInterrupt() async throws {
        let space = try Workspace(files: [
            "wait.py": """
            import os, time
            open('ready', 'w').close()
            while not os.path.exists('proceed'):
                time.sleep(0.02)
            print('survived', flush=True)

            """
        ])
        defer { space.remove() }
        let ready = space.url.appendingPathComponent("ready")
        let result = try await Self.run(
            "/bin/sh", ["-c", #"trap "" INT; exec "$0" run wait.py"#, Binary.url.path], in: space
        ) { pid in
            try await waitUntil("the macro's ready file") { FileManager.default.fileExists(atPath: ready.path) }
            kill(pid, SIGINT)
            // An ignored signal is dropped when sent; a caught one stays pending until a thread takes it.
            try await waitUntil("SIGINT no longer pending") { !Self.pending(SIGINT, in: pid) }
            try Data().write(to: space.url.appendingPathComponent("proceed"))
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("survived"))
    }

    /// Whether `signal` is pending for the process `pid` (false once it has ended).
    static func pending(_ signal: Int32, in pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        let bit = UInt64(1) << UInt64(signal - 1)
        return status.split(separator: "\n").contains { line in
            guard line.hasPrefix("ShdPnd:") || line.hasPrefix("SigPnd:") else { return false }
            let hex = line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)
            return (UInt64(hex, radix: 16) ?? 0) & bit != 0
        }
    }
}

/// The children's pids, handed out of the `whileRunning` closure.
final class PidBox: Sendable {
    private let stored = Mutex<[pid_t]>([])

    var pids: [pid_t] {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
