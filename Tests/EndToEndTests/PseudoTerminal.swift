import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The `apimacro` binary on a real pseudo-terminal, as a user at a terminal
/// runs it: the child is a session leader whose controlling terminal is the
/// pty, so typed Ctrl-C reaches it as SIGINT through the line discipline and
/// readline edits lines.
///
/// The test types into the master side and reads everything the child draws.
final class PseudoTerminal: Sendable {
    /// Why the terminal could not be set up.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let pid: pid_t
    private let master: Int32
    /// The test's own copy of the slave side, open until `close()`.
    ///
    /// The master never sees the hang-up of the child's exit, which on Linux can come before the child's last bytes
    /// (still in the pty's flip buffer, pushed by a work queue) reach the master. `finish()`
    /// writes a marker through it instead: the pty keeps order, so once the marker is read,
    /// so is everything the child wrote.
    private let slaveCopy: Int32
    private let buffer = Mutex<[UInt8]>([])
    private let status = Mutex<Int32?>(nil)

    /// glibc's POSIX_SPAWN_SETSID (behind _GNU_SOURCE, so not imported).
    private static let setSessionFlag: Int32 = 0x80

    /// Starts `apimacro ARGS` in `directory` on a new pty with SIGINT at its default.
    init(_ arguments: [String], in directory: URL, environment: [String: String]) throws {
        let pty = try PTYCalls()
        master = pty.openpt(O_RDWR | O_NOCTTY)
        var name = [CChar](repeating: 0, count: 128)
        guard master >= 0, pty.grantpt(master) == 0, pty.unlockpt(master) == 0,
            pty.ptsnameR(master, &name, name.count) == 0
        else {
            throw Failure(description: "cannot open a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let slave = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        slaveCopy = open(slave, O_RDWR | O_NOCTTY)
        guard slaveCopy >= 0 else {
            throw Failure(description: "cannot open \(slave): \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Opened after setsid(), so the pty becomes the controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, slave, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        posix_spawn_file_actions_addclose(&actions, master)
        posix_spawn_file_actions_addclose(&actions, slaveCopy)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(
            &attributes, Int16(Self.setSessionFlag | Int32(POSIX_SPAWN_SETSIGDEF) | Int32(POSIX_SPAWN_SETSIGMASK)))
        // `env -C DIR`: posix_spawn has no portable working-directory action.
        let executable = "/usr/bin/env"
        var environment = Binary.environment(environment, home: directory)
        // A plain terminal unless the test asks for another (colours need one that is not dumb).
        environment["TERM"] = environment["TERM"] ?? "dumb"
        environment["COLUMNS"] = environment["COLUMNS"] ?? "200"
        let argv = ([executable, "-C", directory.path, Binary.url.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = argv.withUnsafeBufferPointer { argvPointer in
            envp.withUnsafeBufferPointer { envpPointer in
                guard let argv = argvPointer.baseAddress, let envp = envpPointer.baseAddress else { return EINVAL }
                return posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            }
        }
        guard result == 0 else {
            throw Failure(description: "cannot start apimacro: \(String(cString: strerror(result)))")
        }
        self.pid = pid
        let master = self.master
        let thread = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(master, &chunk, chunk.count)
                if count > 0 {
                    buffer.withLock { $0.append(contentsOf: chunk[0..<count]) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // EIO: every copy of the slave is gone (close())
                }
            }
        }
        thread.start()
    }

    /// Everything the child wrote so far (terminal line endings are `\r\n`).
    var output: String { String(decoding: buffer.withLock { $0 }, as: UTF8.self) }

    /// Types `text` (`\r` is Enter, `\u{03}` Ctrl-C, `\u{04}` Ctrl-D, `\t` Tab).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Waits until `needle` appears at or after byte `offset` of the output and
    /// returns the offset just past it; throws after `timeout` seconds.
    @discardableResult
    func expect(_ needle: String, after offset: Int = 0, timeout: Double = 30) async throws -> Int {
        let pattern = Array(needle.utf8)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let found: Int? = buffer.withLock { bytes in
                guard bytes.count >= pattern.count, offset <= bytes.count - pattern.count else { return nil }
                for start in offset...(bytes.count - pattern.count)
                where bytes[start..<(start + pattern.count)].elementsEqual(pattern) {
                    return start + pattern.count
                }
                return nil
            }
            if let found { return found }
            guard Date() < deadline else {
                throw Failure(
                    description:
                        "no \(String(reflecting: needle)) after byte \(offset) within \(timeout) s; output:\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The number of bytes read so far.
    var count: Int { buffer.withLock { $0.count } }

    /// Waits until one of the child's threads is blocked waiting for a key the way readline
    /// does (`select`/`pselect6` on the terminal, fd 0: `nfds` 1), as `/proc` shows it.
    ///
    /// A test types Ctrl-C at a prompt only then. CPython's readline looks at signals only
    /// when its `select` is interrupted: one that came after the prompt was drawn but before
    /// the wait began is seen at the next key, so pdb would not say `--KeyboardInterrupt--`
    /// until then (python3 at a terminal does the same). An event to wait for, not a pause.
    func waitUntilReadingInput(timeout: Double = 600) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            for task in tasks {
                let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)) ?? ""
                let fields = text.split(separator: " ")
                // x86-64's select is 23 and pselect6 270; the first argument is nfds.
                if fields.count > 1, fields[0] == "270" || fields[0] == "23", fields[1] == "0x1" { return }
            }
            guard Date() < deadline else {
                throw Failure(description: "apimacro did not wait for a key within \(timeout) s; output:\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits for the child to end and returns its exit status (-signal when a signal ended it).
    func waitForExit(timeout: Double = 30) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid {
                let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : -(raw & 0x7f)
                status.withLock { $0 = code }
                return code
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure(description: "apimacro did not exit within \(timeout) s; output:\n\(output)")
    }

    /// The marker `finish()` writes after the child's output.
    private static let endMarker = "\u{1F}apimacro-pty-end\u{1F}"

    /// Everything the child wrote, once it has exited (after `waitForExit`): a marker written
    /// through the test's copy of the slave comes after the child's last byte, so when it has
    /// been read the output is whole (an event, not a guess at how long the pty takes).
    func finish(timeout: Double = 120) async throws -> String {
        let marker = Array(Self.endMarker.utf8)
        let written = marker.withUnsafeBytes { write(slaveCopy, $0.baseAddress, $0.count) }
        guard written == marker.count else {
            throw Failure(description: "cannot write to the terminal: \(String(cString: strerror(errno)))")
        }
        let end = try await expect(Self.endMarker, timeout: timeout)
        let bytes = buffer.withLock { Array($0[..<(end - marker.count)]) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Kills the child if it still runs and closes the terminal.
    func close() {
        if status.withLock({ $0 }) == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
        Glibc.close(slaveCopy)
        Glibc.close(master)
    }
}

/// libc's pty calls, looked up at run time: Swift's Glibc module leaves out
/// the X/Open declarations (`posix_openpt`, `grantpt`, `unlockpt`, `ptsname_r`).
private struct PTYCalls {
    let openpt: @convention(c) (Int32) -> Int32
    let grantpt: @convention(c) (Int32) -> Int32
    let unlockpt: @convention(c) (Int32) -> Int32
    let ptsnameR: @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

    init() throws {
        func symbol(_ name: String) throws -> UnsafeMutableRawPointer {
            guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                throw PseudoTerminal.Failure(description: "libc has no \(name)")
            }
            return pointer
        }
        openpt = unsafeBitCast(try symbol("posix_openpt"), to: (@convention(c) (Int32) -> Int32).self)
        grantpt = unsafeBitCast(try symbol("grantpt"), to: (@convention(c) (Int32) -> Int32).self)
        unlockpt = unsafeBitCast(try symbol("unlockpt"), to: (@convention(c) (Int32) -> Int32).self)
        ptsnameR = unsafeBitCast(
            try symbol("ptsname_r"), to: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)
    }
}
