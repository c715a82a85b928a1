import Foundation
import TestSupport
import Testing

/// What a run of the `apimacro` binary printed and how it ended.
struct RunResult: Sendable {
    let status: Int32
    /// Whether a signal ended the process (then `status` is the signal's number).
    let signalled: Bool
    let stdout: String
    let stderr: String
    let seconds: Double
    /// When the process ended, as seconds since 1970 (to compare with a macro's `time.time()`).
    let ended: Double
}

/// Runs the built `apimacro` binary the way a user would.
enum Binary {
    /// The binary next to the test bundle in `.build/<config>/`.
    static var url: URL {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("apimacro")
    }

    /// A clean environment: no credentials or Python variables from the developer's shell.
    static func environment(_ extra: [String: String] = [:], home: URL) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home.path, "LANG": "C.UTF-8"]
        environment.merge(extra) { $1 }
        return environment
    }

    /// Runs `apimacro ARGS` (or `executable ARGS`) in `directory`; `whileRunning` gets the
    /// process once it has started.
    ///
    /// If `whileRunning` throws, the process is killed, reaped, and the error rethrown.
    static func run(
        _ arguments: [String], in directory: URL, environment extra: [String: String] = [:],
        stdin: String? = nil, defaultSIGINT: Bool = false, limit: Double = 600, executable: URL? = nil,
        whileRunning: (@Sendable (Spawned) async throws -> Void)? = nil
    ) async throws -> RunResult {
        // Files, not pipes: a chatty process can never block on a full pipe.
        let outURL = directory.appendingPathComponent(".stdout-\(UUID().uuidString)")
        let errURL = directory.appendingPathComponent(".stderr-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        var input = Spawned.Stream.null
        if let stdin {
            let inURL = directory.appendingPathComponent(".stdin-\(UUID().uuidString)")
            try Data(stdin.utf8).write(to: inURL)
            input = .file(inURL.path)
        }
        let started = Date()
        // A test runner started from a script may have SIGINT ignored, and Python keeps an
        // ignored SIGINT ignored; `defaultSIGINT` gives the child the default disposition, as a
        // terminal would.
        let process = try Spawned(
            (executable ?? url).path, arguments, environment: environment(extra, home: directory),
            directory: directory.path, stdin: input, stdout: .file(outURL.path), stderr: .file(errURL.path),
            defaultSignals: defaultSIGINT ? [SIGINT] : [])
        // Never let a hung child hang the suite: end it after `limit` seconds (a hang guard only:
        // on a busy 2-core machine a 20-page macro once took over 60 s, so the margin is wide).
        let pid = process.processIdentifier
        let guardTask = Task.detached {
            try await Task.sleep(for: .seconds(limit))
            kill(pid, SIGKILL)
        }
        defer { guardTask.cancel() }
        if let whileRunning {
            do {
                try await whileRunning(process)
            } catch {
                kill(pid, SIGKILL)
                _ = await process.exit()
                throw error
            }
        }
        let exit = await process.exit()
        let seconds = Date().timeIntervalSince(started)
        let ended = Date().timeIntervalSince1970
        let result = RunResult(
            status: exit.status, signalled: exit.signalled,
            stdout: try String(contentsOf: outURL, encoding: .utf8),
            stderr: try String(contentsOf: errURL, encoding: .utf8),
            seconds: seconds, ended: ended)
        if executable == nil { RawErrorText.check(result, arguments: arguments) }
        return result
    }
}

/// Foundation's and Swift's own error text, which no error path may show a user (issue 36):
/// every run of the binary through `Binary.run` is checked, so each error path the suite
/// exercises is.
enum RawErrorText {
    /// What gives a raw error away.
    static let marks = ["NSCocoaErrorDomain", "Error Domain=", "The operation could not be completed"]

    /// The marks found in `text`.
    static func marks(in text: String) -> [String] {
        marks.filter { text.contains($0) }
    }

    /// Records an issue when `result`'s stderr holds raw error text.
    static func check(_ result: RunResult, arguments: [String]) {
        let found = marks(in: result.stderr)
        guard !found.isEmpty else { return }
        let what =
            "apimacro \(arguments.joined(separator: " ")) printed raw error text (\(found.joined(separator: ", "))) "
            + "on stderr:\n\(result.stderr)"
        Issue.record(Comment(rawValue: what))
    }
}

/// A temporary folder with files in it, removed by `remove()`.
struct Workspace {
    let url: URL

    init(files: [String: String] = [:]) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in files { try write(name, text) }
    }

    func write(_ name: String, _ text: String) throws {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
    }

    func run(
        _ arguments: String..., environment: [String: String] = [:], stdin: String? = nil, defaultSIGINT: Bool = false,
        whileRunning: (@Sendable (Spawned) async throws -> Void)? = nil
    ) async throws -> RunResult {
        try await Binary.run(
            arguments, in: url, environment: environment, stdin: stdin, defaultSIGINT: defaultSIGINT,
            whileRunning: whileRunning)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// Waits until the file `name` exists in the workspace (a macro creates it to say it has
    /// started): an event, not a duration.
    ///
    /// Throws after `limit` seconds, a margin load cannot eat.
    func waitFor(_ name: String, limit: Double = 600) async throws {
        let file = url.appendingPathComponent(name)
        try await waitUntil("\(name) to appear", limit: limit) { FileManager.default.fileExists(atPath: file.path) }
    }
}

/// Waits until `condition` holds (polled every 20 ms): an event, not a duration.
///
/// Throws after `limit` seconds, a margin load cannot eat.
func waitUntil(_ what: String, limit: Double = 600, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(limit)
    while !condition() {
        guard Date() < deadline else { throw WorkspaceError("gave up after \(Int(limit)) s waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// A test workspace's wait that never saw its event.
struct WorkspaceError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A line of Python that creates the file `name` in the working directory (see `Workspace.waitFor`).
func pythonTouch(_ name: String) -> String {
    "open(\(String(reflecting: name)), 'w').close()\n"
}

extension Workspace {
    /// A loopback test server and a workspace for `body`, both gone afterwards.
    static func withServer(
        files: [String: String] = [:], _ body: (TestServer, Workspace) async throws -> Void
    ) async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: files)
        defer { space.remove() }
        do {
            try await body(server, space)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }
}
