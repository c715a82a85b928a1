import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real `redis-server` (Debian's package, installed by scripts/setup-system) on a free
/// loopback port, started and stopped by a test: no persistence, its own folder.
public final class RedisServer: Sendable {
    public let port: Int
    public let password: String?
    private let folder: URL
    private let process: Mutex<Spawned?>

    /// `redis://[:password@]127.0.0.1:PORT/0`.
    public var url: String {
        "redis://" + (password.map { ":\($0)@" } ?? "") + "127.0.0.1:\(port)/0"
    }

    private init(port: Int, password: String?, folder: URL, process: Spawned) {
        self.port = port
        self.password = password
        self.folder = folder
        self.process = Mutex(process)
    }

    /// Starts a server on a free port (or `port`) and returns once it accepts connections
    /// (its log says so: an event, not a pause); gives up after `limit` seconds.
    public static func start(password: String? = nil, port: Int? = nil, limit: Double = 600) async throws -> RedisServer
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            let (chosen, process) = try await launchReady(port: port, password: password, folder: folder, limit: limit)
            return RedisServer(port: chosen, password: password, folder: folder, process: process)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// Starts a server again on the same port and in the same folder (after `kill`), with the
    /// same password.
    public func restart(limit: Double = 600) async throws {
        let (_, started) = try await RedisServer.launchReady(
            port: port, password: password, folder: folder, limit: limit)
        process.withLock { $0 = started }
    }

    /// Launches `redis-server` in `folder` and waits until its log says it accepts connections;
    /// on a free port unless `port` is given (then a port taken meanwhile is tried again).
    private static func launchReady(port: Int?, password: String?, folder: URL, limit: Double) async throws -> (
        Int, Spawned
    ) {
        var lastProblem = "no attempt"
        for _ in 0..<3 {
            let chosen = try port ?? freePort()
            let (process, log) = try launch(port: chosen, password: password, folder: folder)
            let deadline = Date().addingTimeInterval(limit)
            while Date() < deadline {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                if text.contains("Ready to accept connections") { return (chosen, process) }
                if !process.isRunning {
                    lastProblem = "redis-server exited: \(text.suffix(300))"
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning {
                process.send(SIGTERM)
                process.waitUntilExit()
                lastProblem = "redis-server did not say it was ready in \(Int(limit)) s"
            }
            if port != nil { break }
        }
        throw RedisServerError(description: lastProblem)
    }

    /// Ends the server at once (SIGKILL), as a crash would, and waits until it is gone.
    public func kill() {
        guard
            let running = process.withLock({ current -> Spawned? in
                defer { current = nil }
                return current
            })
        else { return }
        if running.isRunning {
            Glibc.kill(running.processIdentifier, SIGKILL)
            running.waitUntilExit()
        }
    }

    /// Stops the server and removes its folder.
    public func stop() {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A server a test did not `stop` is stopped with it, and its folder removed.
    deinit {
        if let running = process.withLock({ $0 }), running.isRunning {
            Glibc.kill(running.processIdentifier, SIGKILL)
            running.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    private static func launch(port: Int, password: String?, folder: URL) throws -> (Spawned, URL) {
        let log = folder.appendingPathComponent("redis-\(port)-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        var arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder.path,
            "--logfile", log.path, "--daemonize", "no", "--protected-mode", "yes",
        ]
        if let password { arguments += ["--requirepass", password] }
        let process = try Spawned(executable, arguments, environment: ProcessInfo.processInfo.environment)
        return (process, log)
    }

    /// `redis-server` on the PATH of the machine (Debian puts it in /usr/bin).
    static var executable: String {
        for folder in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
            let path = folder + "/redis-server"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/usr/bin/redis-server"
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago.
    static func freePort() throws -> Int {
        try LoopbackSocket.freePort()
    }
}

/// `RedisServer` could not start.
public struct RedisServerError: Error, CustomStringConvertible {
    public let description: String
}
