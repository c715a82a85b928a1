import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Debian's `tinyproxy`, a real forward proxy, run by a test on 127.0.0.1 (a free port) with a
/// config file of its own in a temporary folder: it accepts only 127.0.0.1, allows `CONNECT`
/// only to `connectPorts`, and with `credentials` requires `Proxy-Authorization: Basic`.
///
/// `stop()` ends it (the test's own process, by its id) and deletes the folder.
public final class Tinyproxy: Sendable {
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }
    private let process: Spawned
    private let folder: URL
    private let output: TinyproxyOutput
    private let stopped = Mutex(false)

    private init(port: Int, process: Spawned, folder: URL, output: TinyproxyOutput) {
        self.port = port
        self.process = process
        self.folder = folder
        self.output = output
    }

    /// Starts tinyproxy and returns once it accepts connections (its "Accepting connections"
    /// line, not a delay).
    ///
    /// Throws `ProcessFailure` saying what to do when it is not installed or does not start.
    /// A port taken between choosing and binding it is chosen again.
    public static func start(connectPorts: [Int], credentials: (user: String, password: String)? = nil) async throws
        -> Tinyproxy
    {
        var lastError: (any Error)?
        for _ in 0..<5 {
            do {
                return try await runBlocking { try launch(connectPorts: connectPorts, credentials: credentials) }
            } catch let failure as PortTaken {
                lastError = failure
            }
        }
        throw lastError ?? ProcessFailure("tinyproxy did not start")
    }

    private struct PortTaken: Error {}

    private static func launch(connectPorts: [Int], credentials: (user: String, password: String)?) throws -> Tinyproxy
    {
        guard
            let executable = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw ProcessFailure(
                "tinyproxy is not installed; the proxy tests need it: run scripts/setup-system (apt-get install tinyproxy)"
            )
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-tinyproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let port = try freePort()
        var config = [
            "Port \(port)", "Listen 127.0.0.1", "Timeout 60", "Allow 127.0.0.1", "MaxClients 50", "LogLevel Info",
            "PidFile \"\(folder.appendingPathComponent("tinyproxy.pid").path)\"",
        ]
        config += connectPorts.map { "ConnectPort \($0)" }
        if let credentials { config.append("BasicAuth \(credentials.user) \(credentials.password)") }
        let file = folder.appendingPathComponent("tinyproxy.conf")
        try (config.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        // Its log goes to a pipe, which stdio would buffer in blocks: coreutils' stdbuf makes it
        // line-buffered, so the "Accepting connections" line arrives when it is written (stdbuf
        // then executes tinyproxy itself: the process id stays tinyproxy's).
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting.fileDescriptor
        let process = try Spawned(
            "/usr/bin/stdbuf", ["-oL", "-eL", executable, "-d", "-c", file.path],
            environment: ProcessInfo.processInfo.environment, stdout: .descriptor(writer), stderr: .descriptor(writer))
        try pipe.fileHandleForWriting.close()
        let output = TinyproxyOutput()
        // Read its log until it accepts connections or exits (end of output).
        // Read with read(2), not FileHandle.availableData, whose `try!` ends the whole test
        // process on any read error (seen once under load). The descriptor is a duplicate this
        // code owns: the drain thread closes it at end of output.
        let reader = dup(pipe.fileHandleForReading.fileDescriptor)
        try pipe.fileHandleForReading.close()
        guard reader >= 0 else { throw ProcessFailure("dup: \(String(cString: strerror(errno)))") }
        var pending = ""
        while true {
            let chunk = Tinyproxy.readChunk(reader)
            if chunk.isEmpty {
                close(reader)
                let exit = process.waitUntilExit()
                try? FileManager.default.removeItem(at: folder)
                let log = output.text + pending
                if log.contains("Could not create listening sockets") { throw PortTaken() }
                throw ProcessFailure(
                    "tinyproxy exited (status \(exit.status)) before accepting connections: \(log)")
            }
            pending += String(decoding: chunk, as: UTF8.self)
            if pending.contains("Accepting connections") { break }
        }
        output.append(pending)
        // Keep draining its log so it never blocks on a full pipe.
        let drain = Thread {
            while true {
                let chunk = Tinyproxy.readChunk(reader)
                if chunk.isEmpty {
                    close(reader)
                    return
                }
                output.append(String(decoding: chunk, as: UTF8.self))
            }
        }
        drain.start()
        return Tinyproxy(port: port, process: process, folder: folder, output: output)
    }

    /// Up to 64 KiB from `descriptor`; empty at end of output or on an error other than EINTR.
    static func readChunk(_ descriptor: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { return Array(buffer[..<count]) }
            if count < 0 && errno == EINTR { continue }
            return []
        }
    }

    /// What tinyproxy logged so far (requests it served, refusals).
    public var log: String { output.text }

    /// Ends tinyproxy (SIGKILL to its process id, then waits for it) and deletes its folder.
    ///
    /// Not SIGTERM: a child started by Foundation's `Process` from the test runner inherits
    /// a signal mask that blocks it, and tinyproxy does not unblock it.
    public func stop() async throws {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if alreadyStopped { return }
        let (process, folder) = (self.process, self.folder)
        try await runBlocking {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// A port nobody listens on now: bound to 127.0.0.1:0 and released.
    public static func freePort() throws -> Int {
        try LoopbackSocket.freePort()
    }
}

/// tinyproxy's log as read so far.
final class TinyproxyOutput: Sendable {
    private let lines = Mutex("")
    func append(_ text: String) { lines.withLock { $0 += text } }
    var text: String { lines.withLock { $0 } }
}
