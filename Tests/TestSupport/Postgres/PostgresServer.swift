public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real PostgreSQL server (Debian's `postgresql` package, installed by scripts/setup-system)
/// on a free loopback port, started and stopped by a test: its own cluster made by `initdb` in a
/// temporary folder, password authentication, no fsync.
///
/// PostgreSQL refuses to run as root: when the tests do, the cluster belongs to the `postgres`
/// user (else `nobody`) and the server and `initdb` run as that user through `setpriv`.
public final class PostgresServer: Sendable {
    public let port: Int
    /// The superuser's name and password.
    public let user = "apimacro"
    public let password: String
    private let folder: URL
    private let process: Mutex<Spawned?>

    /// `postgresql://apimacro:PASSWORD@127.0.0.1:PORT/DATABASE`.
    public func url(database: String = "postgres") -> String {
        "postgresql://\(user):\(password)@127.0.0.1:\(port)/\(database)"
    }

    private init(port: Int, password: String, folder: URL, process: Spawned) {
        self.port = port
        self.password = password
        self.folder = folder
        self.process = Mutex(process)
    }

    /// A loopback port nothing listened on a moment ago (an unreachable server's).
    public static func unusedPort() throws -> Int { try LoopbackSocket.freePort() }

    /// Debian's PostgreSQL programs folder (`/usr/lib/postgresql/VERSION/bin`, the newest).
    public static var binaries: URL {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted()
        if let newest = versions.last { return URL(fileURLWithPath: "\(root)/\(newest)/bin") }
        return URL(fileURLWithPath: "/usr/lib/postgresql/15/bin")
    }

    /// Makes a cluster and starts its server on a free port; returns once the server says it
    /// accepts connections (its log: an event, not a pause); gives up after `limit` seconds.
    public static func start(limit: Double = 600) async throws -> PostgresServer {
        let owner = try Owner.current()
        // /tmp, not $TMPDIR: another user must reach the folder when the tests run as root.
        let base = owner.switches ? URL(fileURLWithPath: "/tmp") : FileManager.default.temporaryDirectory
        let folder = base.appendingPathComponent("apimacro-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let password = "pg-\(UUID().uuidString.prefix(12))"
        let passwordFile = folder.appendingPathComponent("password")
        try Data(password.utf8).write(to: passwordFile)
        if owner.switches {
            for path in [folder.path, passwordFile.path] { chown(path, owner.uid, owner.gid) }
        }
        chmod(folder.path, 0o700)
        let data = folder.appendingPathComponent("data")
        let initLog = folder.appendingPathComponent("initdb.log")
        let initdb = try owner.spawn(
            binaries.appendingPathComponent("initdb").path,
            [
                "-D", data.path, "-U", "apimacro", "--auth=scram-sha-256", "--pwfile", passwordFile.path,
                "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
            ], log: initLog)
        let made = await initdb.exit()
        guard made.status == 0, !made.signalled else {
            let text = (try? String(contentsOf: initLog, encoding: .utf8)) ?? ""
            throw PostgresServerError(description: "initdb failed: \(text.suffix(600))")
        }
        var lastProblem = "no attempt"
        for _ in 0..<3 {
            let port = try LoopbackSocket.freePort()
            let log = folder.appendingPathComponent("server-\(port).log")
            let server = try owner.spawn(
                binaries.appendingPathComponent("postgres").path,
                [
                    "-D", data.path, "-k", folder.path, "-p", String(port), "-h", "127.0.0.1", "-c", "fsync=off",
                    "-c", "max_connections=40",
                ], log: log)
            let deadline = Date().addingTimeInterval(limit)
            while Date() < deadline {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                if text.contains("database system is ready to accept connections") {
                    return PostgresServer(port: port, password: password, folder: folder, process: server)
                }
                if !server.isRunning {
                    lastProblem = "postgres exited: \(text.suffix(600))"
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            if server.isRunning {
                server.send(SIGQUIT)
                _ = await server.exit()
                lastProblem = "postgres did not say it was ready in \(Int(limit)) s"
            }
        }
        try? FileManager.default.removeItem(at: folder)
        throw PostgresServerError(description: lastProblem)
    }

    /// Stops the server (fast shutdown), waits until it is gone and removes its folder.
    public func stop() async {
        if let running = process.withLock({ current -> Spawned? in
            defer { current = nil }
            return current
        }), running.isRunning {
            running.send(SIGINT)
            _ = await running.exit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    deinit {
        if let running = process.withLock({ $0 }), running.isRunning {
            running.send(SIGQUIT)
            _ = running.waitUntilExit()
        }
    }

    /// Runs `sql` with Debian's `psql` and returns its rows, one line each with fields joined by
    /// `|` (unaligned, no headers).
    public func query(_ sql: String, database: String = "postgres") async throws -> String {
        let out = folder.appendingPathComponent("psql-\(UUID().uuidString).out")
        let process = try Spawned(
            "/usr/bin/psql",
            ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url(database: database), "-c", sql],
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], stdout: .file(out.path),
            stderr: .file(out.path + ".err"))
        let ended = await process.exit()
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(atPath: out.path + ".err")
        }
        guard ended.status == 0 else {
            let text = (try? String(contentsOfFile: out.path + ".err", encoding: .utf8)) ?? ""
            throw PostgresServerError(description: "psql failed: \(text)")
        }
        return (try String(contentsOf: out, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Who runs the server: this process, or (as root) the `postgres` or `nobody` user.
    private struct Owner {
        var switches: Bool
        var uid: uid_t
        var gid: gid_t

        static func current() throws -> Owner {
            guard getuid() == 0 else { return Owner(switches: false, uid: getuid(), gid: getgid()) }
            for name in ["postgres", "nobody"] {
                if let entry = getpwnam(name) {
                    return Owner(switches: true, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
                }
            }
            throw PostgresServerError(
                description: "running as root, and there is no postgres or nobody user to run PostgreSQL as")
        }

        /// Starts `program` as this owner, its output into `log`.
        func spawn(_ program: String, _ arguments: [String], log: URL) throws -> Spawned {
            let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"]
            guard switches else {
                return try Spawned(
                    program, arguments, environment: environment, stdout: .file(log.path + ".out"),
                    stderr: .file(log.path))
            }
            return try Spawned(
                "/usr/bin/setpriv",
                ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", program] + arguments,
                environment: environment, directory: "/tmp", stdout: .file(log.path + ".out"), stderr: .file(log.path))
        }
    }
}

/// `PostgresServer` could not start.
public struct PostgresServerError: Error, CustomStringConvertible {
    public let description: String
}
