import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A virtualenv of Debian's `/usr/bin/python3` holding the pinned tools of
/// `Tests/python-requirements.txt` (mypy, pytest), made from PyPI on first use and kept under
/// `.build/python-tools/HASH/` (the file's hash: a new pin makes a new one).
///
/// One process makes it at a time (a lock file); a half-made one (a failed install) is made again.
enum PythonTools {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let requirements = root.appendingPathComponent("Tests/python-requirements.txt")

    /// The virtualenv's folder (its `bin/python` runs the tools: `python -m mypy`).
    static func virtualEnvironment() async throws -> URL {
        try await made.value
    }

    private static let made = Task<URL, any Error> {
        try await runBlocking { try make() }
    }

    private static func make() throws -> URL {
        let pins = try Data(contentsOf: requirements)
        // FNV-1a of the pins: a name that changes when they do.
        let hash = String(
            pins.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }, radix: 16)
        let parent = root.appendingPathComponent(".build/python-tools")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let lock = open(parent.appendingPathComponent("lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw ProcessFailure("cannot open the lock in \(parent.path)") }
        defer { close(lock) }
        flock(lock, LOCK_EX)
        defer { flock(lock, LOCK_UN) }
        let venv = parent.appendingPathComponent(hash)
        let ready = venv.appendingPathComponent(".ready")
        if FileManager.default.fileExists(atPath: ready.path) { return venv }
        try? FileManager.default.removeItem(at: venv)
        try run("/usr/bin/python3", ["-m", "venv", venv.path])
        try run(
            venv.appendingPathComponent("bin/python").path,
            ["-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", requirements.path])
        try Data().write(to: ready)
        return venv
    }

    /// Runs a command to its end; its output goes to a file shown when it fails.
    private static func run(_ executable: String, _ arguments: [String]) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("python-tools-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: log) }
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("PYTHON") || name == "VIRTUAL_ENV" {
            environment[name] = nil
        }
        let process = try Spawned(
            executable, arguments, environment: environment, stdout: .file(log.path), stderr: .file(log.path))
        let exit = process.waitUntilExit()
        guard exit.status == 0, !exit.signalled else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw ProcessFailure(
                "\(executable) \(arguments.joined(separator: " ")) failed (\(exit.status)): \(output.suffix(3000))")
        }
    }
}
