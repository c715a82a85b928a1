import Synchronization
import WebAPI

#if canImport(Glibc)
    import Glibc
#endif

/// Copies what the jq child prints to this process's stdout a line at a time, each line
/// redacted: the child prints text jq decoded (`"\u0067hp_…"` as `ghp_…`), which no redaction
/// of its input can catch.
///
/// A line is written whole once its line feed arrives (a secret holds none), the last one at
/// the end.
final class ResultPrinter: Sendable {
    /// What each line is redacted with.
    let redactor: Redactor
    private let state = Mutex<(finished: Bool, closed: Bool, failure: String?)>((false, false, nil))

    init(redactor: Redactor) {
        self.redactor = redactor
    }

    /// Whether the child's results have all been read (its end of the pipe closed) or printing stopped.
    var isFinished: Bool { state.withLock { $0.finished } }
    /// Whether stdout's reader went away (`| head`).
    var outputClosed: Bool { state.withLock { $0.closed } }
    /// Why a write to stdout failed otherwise, if one did.
    var failure: String? { state.withLock { $0.failure } }

    /// Reads `descriptor` to its end, printing each line redacted, then closes it.
    ///
    /// When stdout cannot be written it stops reading, so that the child's next write ends it
    /// (SIGPIPE).
    func copy(from descriptor: Int32) {
        defer {
            close(descriptor)
            state.withLock { $0.finished = true }
        }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending += chunk[0..<count]
            guard let last = pending.lastIndex(of: 0x0A) else { continue }
            let lines = Array(pending[...last])
            pending.removeSubrange(...last)
            guard write(lines) else { return }
        }
        if !pending.isEmpty { _ = write(pending) }
    }

    /// Writes `lines` redacted; false when stdout cannot take them.
    private func write(_ lines: [UInt8]) -> Bool {
        let bytes = redactor.redact(bytes: lines)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let problem = errno
                state.withLock { state in
                    if problem == EPIPE {
                        state.closed = true
                    } else {
                        state.failure = String(cString: strerror(problem))
                    }
                }
                return false
            }
            offset += written
        }
        return true
    }
}
