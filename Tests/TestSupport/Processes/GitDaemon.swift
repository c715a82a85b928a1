public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's `git daemon` serving the bare repositories of a folder on a free loopback port,
/// started and stopped by a test (plugin installs from a real git server, never the internet),
/// with helpers to make a repository and push new commits to it.
public final class GitDaemon: Sendable {
    public let port: Int
    /// The folder of bare repositories (`NAME.git`) it serves.
    public let folder: URL
    private let process: Mutex<Spawned?>

    private init(port: Int, folder: URL, process: Spawned) {
        self.port = port
        self.folder = folder
        self.process = Mutex(process)
    }

    /// Debian's git-daemon (git's exec path, as `git --exec-path` names it).
    static let executable = "/usr/lib/git-core/git-daemon"

    /// `git://127.0.0.1:PORT/NAME.git`.
    public func url(_ name: String) -> String { "git://127.0.0.1:\(port)/\(name).git" }

    /// Starts the daemon and returns once its log says it listens (an event, not a pause).
    public static func start(limit: Double = 600) async throws -> GitDaemon {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-git-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var lastProblem = "no attempt"
        for _ in 0..<3 {
            let port = try LoopbackSocket.freePort()
            let log = folder.appendingPathComponent("daemon-\(port).log")
            // git-daemon itself, not `git daemon`: git runs it as a child of its own, which a
            // SIGKILL to `git` at `stop()` left running (three daemons left behind by every run).
            let process = try Spawned(
                Self.executable,
                [
                    "--reuseaddr", "--export-all", "--verbose", "--listen=127.0.0.1", "--port=\(port)",
                    "--base-path=\(folder.path)", folder.path,
                ], environment: ["PATH": "/usr/bin:/bin", "HOME": folder.path], stderr: .file(log.path))
            let deadline = Date().addingTimeInterval(limit)
            while Date() < deadline {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                if text.contains("Ready to rumble") { return GitDaemon(port: port, folder: folder, process: process) }
                if !process.isRunning {
                    lastProblem = "git daemon exited: \(text.suffix(300))"
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning {
                process.send(SIGKILL)
                process.waitUntilExit()
                lastProblem = "git daemon did not say it was ready in \(Int(limit)) s"
            }
        }
        throw SpawnError(description: lastProblem)
    }

    /// Makes `NAME.git` from `files` (one commit; a tag when `tag` is given) and returns the
    /// commit's id; git runs on a thread of its own, off the cooperative pool.
    @discardableResult
    public func create(_ name: String, files: [String: String], tag: String? = nil) async throws -> String {
        try await runBlocking { try self.createNow(name, files: files, tag: tag) }
    }

    private func createNow(_ name: String, files: [String: String], tag: String?) throws -> String {
        let work = folder.appendingPathComponent("work-\(name)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try Self.git(["init", "--quiet", "--initial-branch=main"], in: work)
        let commit = try commit(files, in: work, message: "first", tag: tag)
        try Self.git(
            ["clone", "--quiet", "--bare", work.path, folder.appendingPathComponent("\(name).git").path], in: folder)
        try Self.git(["remote", "add", "origin", folder.appendingPathComponent("\(name).git").path], in: work)
        return commit
    }

    /// Commits `files` in `NAME`'s work tree and pushes them (and `tag`); returns the new commit.
    @discardableResult
    public func push(_ name: String, files: [String: String], tag: String? = nil) async throws -> String {
        try await runBlocking { try self.pushNow(name, files: files, tag: tag) }
    }

    private func pushNow(_ name: String, files: [String: String], tag: String?) throws -> String {
        let work = folder.appendingPathComponent("work-\(name)")
        let commit = try commit(files, in: work, message: "update", tag: tag)
        try Self.git(["push", "--quiet", "--tags", "origin", "main"], in: work)
        return commit
    }

    private func commit(_ files: [String: String], in work: URL, message: String, tag: String?) throws -> String {
        for (path, text) in files {
            let file = work.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        try Self.git(["add", "--all"], in: work)
        try Self.git(["commit", "--quiet", "-m", message], in: work)
        if let tag { try Self.git(["tag", tag], in: work) }
        return try Self.git(["rev-parse", "HEAD"], in: work).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs git in `directory` with a fixed identity; its stdout, or an error with its stderr.
    @discardableResult
    static func git(_ arguments: [String], in directory: URL) throws -> String {
        let out = directory.appendingPathComponent(".git-out-\(UUID().uuidString)")
        let err = directory.appendingPathComponent(".git-err-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let process = try Spawned(
            "/usr/bin/git", ["-c", "user.name=Test", "-c", "user.email=test@example.com"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path, "GIT_CONFIG_NOSYSTEM": "1"],
            directory: directory.path, stdout: .file(out.path), stderr: .file(err.path))
        let ended = process.waitUntilExit()
        guard ended.status == 0, !ended.signalled else {
            let message = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            throw SpawnError(description: "git \(arguments.joined(separator: " ")) failed: \(message)")
        }
        return (try? String(contentsOf: out, encoding: .utf8)) ?? ""
    }

    /// Stops the daemon and removes its folder.
    public func stop() {
        if let running = process.withLock({ $0 }), running.isRunning {
            running.send(SIGKILL)
            running.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }
}
