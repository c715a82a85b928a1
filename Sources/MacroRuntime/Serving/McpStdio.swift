import Clients
import Dispatch
import Platform
import PythonBridge
import Spawning
import Synchronization
import WebAPI

/// The MCP stdio transport: one JSON-RPC message per line on stdin, one per line on stdout.
///
/// Stdout carries only the protocol: the server writes its messages to a copy of descriptor 1
/// and points descriptor 1 at stderr, so nothing else (a macro's child process, a C library)
/// can write into the stream; it reads a copy of descriptor 0, pointed at /dev/null. Tool calls run on `jobs` worker threads, in parallel (each
/// releases the GIL while it waits on the network); other requests are answered in order.
public struct McpStdio {
    /// The longest line read: a longer one is answered with a parse error and skipped.
    public static let lineLimit = 16 << 20

    let server: McpServer

    public init(server: McpServer) {
        self.server = server
    }

    /// Serves until stdin ends (then waits for the calls still running); how it ended
    /// (`.interrupted` at once when Ctrl-C came while it waited for input).
    public func serve() -> ExitReport {
        let output = dup(STDOUT_FILENO)
        guard output >= 0 else { return .failure("mcp: cannot copy stdout: \(String(cString: strerror(errno)))") }
        _ = fcntl(output, F_SETFD, FD_CLOEXEC)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        // The same for stdin: the server reads a copy, and a macro reading stdin (or a child it
        // starts) gets /dev/null, never the client's messages.
        let source = dup(STDIN_FILENO)
        guard source >= 0 else { return .failure("mcp: cannot copy stdin: \(String(cString: strerror(errno)))") }
        _ = fcntl(source, F_SETFD, FD_CLOEXEC)
        let null = open("/dev/null", O_RDONLY)
        if null >= 0 {
            dup2(null, STDIN_FILENO)
            close(null)
        }
        defer { close(source) }
        let writer = LineWriter(descriptor: output)
        let pool: WorkerPool
        do {
            pool = try WorkerPool(threads: server.jobs)
        } catch {
            return .failure("mcp: \(error.description)")
        }
        var buffer: [UInt8] = []
        var skipping = false
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        // Ctrl-C bumps the interrupt counter, whichever thread the signal lands on.
        let generation = server.interruptBaseline
        var input = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
        while true {
            // Wait for input, looking at the counter at least every quarter second.
            let ready = poll(&input, 1, 250)
            if Interrupts.generation != generation {
                // Ctrl-C: the process ends now, calls still running with it.
                close(output)
                return .interrupted("apimacro mcp")
            }
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            let count = chunk.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                break
            }
            if count == 0 { break }
            var start = 0
            for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
                if !skipping { buffer.append(contentsOf: chunk[start..<index]) }
                if skipping {
                    skipping = false
                } else {
                    handle(buffer, writer: writer, pool: pool)
                }
                buffer.removeAll(keepingCapacity: buffer.count < 1 << 20)
                start = index + 1
            }
            if !skipping { buffer.append(contentsOf: chunk[start..<count]) }
            if buffer.count > Self.lineLimit {
                writer.write(
                    McpServer.error(.null, -32700, "parse error: a message longer than \(Self.lineLimit >> 20) MiB"))
                buffer.removeAll()
                skipping = true
            }
        }
        if !buffer.isEmpty, !skipping { handle(buffer, writer: writer, pool: pool) }
        pool.finish()
        close(output)
        return .success
    }

    private func handle(_ line: [UInt8], writer: LineWriter, pool: WorkerPool) {
        // A blank line (or a lone \r) is no message.
        guard line.contains(where: { ![UInt8(ascii: " "), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains($0) })
        else { return }
        guard let message = JSONValue.parse(Data(line)) else {
            writer.write(
                McpServer.error(.null, -32700, "parse error: the line is not JSON (one JSON-RPC object per line)"))
            return
        }
        let server = self.server
        if McpServer.isToolCall(message) {
            pool.run {
                if let answer = server.answer(message) { writer.write(answer) }
            }
        } else if let answer = server.answer(message) {
            writer.write(answer)
        }
    }
}

/// Writes whole lines to a descriptor, one writer at a time.
final class LineWriter: Sendable {
    private let descriptor: Int32
    private let lock = Mutex(())

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func write(_ message: JSONValue) {
        var bytes = [UInt8](message.text)
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // the client went away: nothing left to tell it
                }
                offset += written
            }
        }
    }
}

/// A fixed set of threads running jobs in order of arrival.
final class WorkerPool: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var finishing = false
        var running = 0
    }

    private let state = Mutex(State())
    private let work = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let threads: Int

    /// - Throws: `NativeThread.StartError` when a thread cannot be started.
    init(threads: Int) throws(NativeThread.StartError) {
        self.threads = threads
        for _ in 0..<threads {
            // Room for Python's recursion, as on the main thread.
            try NativeThread.start(name: "apimacro-mcp", stackSize: 8 << 20) { [self] in loop() }
        }
    }

    func run(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobs.append(job) }
        work.signal()
    }

    private func loop() {
        while true {
            work.wait()
            guard let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { break }
            job()
        }
        done.signal()
    }

    /// Runs the jobs queued, then ends the threads (waits for them).
    func finish() {
        // A wake with no job left ends a thread: one each, after every job queued.
        for _ in 0..<threads { work.signal() }
        for _ in 0..<threads { done.wait() }
    }
}
