import Dispatch
import Platform
import Spawning

/// One `batch` child: `apimacro run` started in a process group of its own (`Subprocess`).
///
/// Its stdin is from `/dev/null`, stdout and stderr each into a file (no pipe, so a chatty child never
/// blocks and its output stays whole) that the batch made owner-only before the child started
/// (`BatchWorkFolder`). Its end wakes the batch's loop (`wake`): no polling.
struct ChildProcess {
    /// How a child ended.
    typealias Termination = Subprocess.Termination

    /// Why a child could not be started.
    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    let process: Subprocess

    /// The process id, also the id of its process group.
    var pid: pid_t { process.pid }

    /// Starts `executable` with `arguments` (argv[1...]) and `environment`, its stdout and
    /// stderr on the descriptors `stdout` and `stderr` of this process (which stay open here);
    /// `wake` is signalled when it ends.
    ///
    /// SIGINT, SIGTERM, SIGALRM and SIGPIPE start with their default disposition
    /// and no signal is blocked, whatever the parent inherited.
    static func spawn(
        executable: String, arguments: [String], environment: [String: String], stdout: Int32, stderr: Int32,
        wake: DispatchSemaphore
    ) throws -> ChildProcess {
        let process: Subprocess
        do {
            process = try Subprocess.spawn(
                executable, arguments, environment: environment, stdout: .descriptor(stdout),
                stderr: .descriptor(stderr), defaultSignals: [SIGINT, SIGTERM, SIGALRM, SIGPIPE], newProcessGroup: true)
        } catch {
            throw SpawnError(description: error.description)
        }
        process.onEnd { wake.signal() }
        return ChildProcess(process: process)
    }

    /// How the child ended, or nil while it runs (does not block).
    func poll() -> Termination? { process.termination }

    /// Sends `signal` to the child's whole process group (its own children too).
    func send(_ signal: Int32) {
        process.kill(signal, group: true)
    }
}
