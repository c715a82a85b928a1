import Foundation
import Synchronization
import Testing

@testable import Spawning

/// The one way apimacro starts programs: ends are events (a reaper thread, no polling), a
/// deadline is a bound on the wait, and an async wait holds no thread.
@Suite("Subprocess: spawn, wait by event, kill")
struct SubprocessTests {
    @Test("an exit status and a signal come back as they ended")
    func endings() throws {
        let ok = try Subprocess.spawn("/bin/sh", ["-c", "exit 3"], environment: [:])
        #expect(ok.wait() == .exited(3))
        #expect(ok.termination == .exited(3))
        let killed = try Subprocess.spawn("/bin/sh", ["-c", "kill -SEGV $$"], environment: [:])
        #expect(killed.wait() == .signaled(SIGSEGV))
    }

    @Test("a wait with a deadline returns nil while the child runs; kill ends it, its group too")
    func deadline() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        // The child starts a grandchild in its group that would write the marker after the kill.
        let sleeper = try Subprocess.spawn(
            "/bin/sh", ["-c", "(sleep 600; touch \(marker.path)) & sleep 600"], environment: ["PATH": "/bin:/usr/bin"],
            newProcessGroup: true)
        #expect(sleeper.wait(until: .now + .milliseconds(50)) == nil)
        sleeper.kill(SIGKILL, group: true)
        #expect(sleeper.wait() == .signaled(SIGKILL))
        // Reaped: a later kill does nothing (the id may be another process's by then).
        sleeper.kill(SIGKILL)
        #expect(!FileManager.default.fileExists(atPath: marker.path))
    }

    @Test("ended() suspends many tasks on a pool of two threads without starving it")
    func asyncWaits() async throws {
        // More waiting tasks than the pool has threads: a blocking wait would deadlock here.
        let gate = try Subprocess.spawn("/bin/sh", ["-c", "read line"], environment: [:], stdin: .null)
        let endings = try await withThrowingTaskGroup(of: Subprocess.Termination.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let child = try Subprocess.spawn("/bin/sh", ["-c", "exit 7"], environment: [:])
                    return await child.ended()
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(endings == Array(repeating: .exited(7), count: 16))
        #expect(await gate.ended() == .exited(1) || gate.termination != nil)
    }

    @Test("onEnd observers run once the child has ended; a missing program is a SpawnError naming it")
    func observersAndErrors() throws {
        let seen = DispatchSemaphore(value: 0)
        let child = try Subprocess.spawn("/bin/true", [], environment: [:])
        child.onEnd { seen.signal() }
        seen.wait()
        #expect(child.termination == .exited(0))
        #expect(throws: Subprocess.SpawnError.self) {
            _ = try Subprocess.spawn("/nonexistent/program", [], environment: [:])
        }
    }

    @Test("Blocking.run gives back a value and an error from its own thread")
    func blocking() async throws {
        #expect(try await Blocking.run { 42 } == 42)
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await Blocking.run { throw Boom() } }
    }
}
