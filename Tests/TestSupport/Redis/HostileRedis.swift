import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server on a free loopback port that speaks just enough Redis to pass a client's
/// handshake (`+PONG` to its first command), then answers the second command the way a
/// hostile or broken Redis would: a reply that drips a byte at a time, or one far too large.
///
/// One connection; it records whether the client hung up before the reply was whole.
public final class HostileRedis: Sendable {
    /// What the second command gets.
    public enum Answer: Sendable {
        /// A bulk string of `bytes` bytes, one byte every `milliseconds`.
        case drip(bytes: Int, milliseconds: Int)
        /// A bulk string of `bytes` bytes, sent as fast as the client reads.
        case huge(bytes: Int)
        /// These bytes, then nothing until the client hangs up.
        case raw(String)
        /// `replies` bulk strings of `bytes` bytes each, one after another, every one dripped a
        /// byte every `milliseconds`: the replies of commands the client sent without waiting
        /// (the first is dripped as soon as a command arrives after the handshake).
        case dripEach(replies: Int, bytes: Int, milliseconds: Int)
        /// `replies` (RESP) for the next `commands` commands, written only once all have
        /// arrived: a client that waits for a reply before it sends the next command gets none.
        /// With `thenRead`, what the client sends next is kept (`Outcome.next`) before the
        /// outcome is published.
        case answerTogether(commands: Int, replies: String, thenRead: Bool)
        /// `reply` (RESP) to every command, until the client hangs up; `Outcome.sent` counts
        /// the commands answered.
        case every(reply: String)
    }

    /// What happened to the hostile reply.
    public struct Outcome: Sendable, Equatable {
        /// Bytes of the reply written before the client closed (or all of them).
        public var sent = 0
        /// Whether the client closed the connection before the reply was whole.
        public var hungUp = false
        /// Whether the client's second command arrived (the handshake passed).
        public var commandSeen = false
        /// `answerTogether`: whether all its commands arrived (none waited for a reply).
        public var allSeen = false
        /// `answerTogether` with `thenRead`: the bytes the client sent after the replies.
        public var next: [UInt8] = []
    }

    public let port: Int
    private let listener: Int32
    private let outcome = Mutex<Outcome?>(nil)
    private let done = NSCondition()

    private init(port: Int, listener: Int32) {
        self.port = port
        self.listener = listener
    }

    /// Listens on a free loopback port and serves one connection on its own thread.
    public static func start(_ answer: Answer) throws -> HostileRedis {
        let (descriptor, port) = try LoopbackSocket.bound()
        guard listen(descriptor, 4) == 0 else {
            close(descriptor)
            throw RedisServerError(description: "listen() failed: errno \(errno)")
        }
        let server = HostileRedis(port: port, listener: descriptor)
        let thread = Thread { server.serve(answer) }
        thread.start()
        return server
    }

    /// What happened, once the reply was whole or the client hung up; nil when that did not
    /// happen within `limit` seconds.
    public func result(limit: Double = 120) -> Outcome? {
        let deadline = Date().addingTimeInterval(limit)
        done.lock()
        defer { done.unlock() }
        while outcome.withLock({ $0 }) == nil {
            guard done.wait(until: deadline) else { break }
        }
        return outcome.withLock { $0 }
    }

    private func serve(_ answer: Answer) {
        var result = Outcome()
        defer {
            close(listener)
            publish(result)
        }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var lastRead: [UInt8] = []
        func readCommand() -> Bool {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            lastRead = count > 0 ? Array(buffer.prefix(count)) : []
            return count > 0
        }
        /// The last two bytes read before, so a `\r\n` split across two reads still counts.
        var carried: [UInt8] = [13, 10]
        /// Commands that start in `bytes`, the next read (each is an array: `*` at a line's start).
        func commands(in bytes: [UInt8]) -> Int {
            let seen = carried + bytes
            var count = 0
            for index in 2..<seen.count where seen[index] == UInt8(ascii: "*") {
                if seen[index - 2] == 13 && seen[index - 1] == 10 { count += 1 }
            }
            carried = Array(seen.suffix(2))
            return count
        }
        func write(_ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes {
                    send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        /// A bulk string's header, then its bytes one at a time; false when the client hung up.
        func drip(bytes: Int, milliseconds: Int) -> Bool {
            guard write(Array("$\(bytes)\r\n".utf8)) else { return false }
            for _ in 0..<bytes {
                guard write([UInt8(ascii: "x")]) else {
                    result.hungUp = true
                    return false
                }
                result.sent += 1
                usleep(UInt32(milliseconds * 1000))
            }
            return true
        }
        guard readCommand(), write(Array("+PONG\r\n".utf8)), readCommand() else { return }
        result.commandSeen = true
        switch answer {
        case .drip(let bytes, let milliseconds):
            guard drip(bytes: bytes, milliseconds: milliseconds) else { return }
        case .dripEach(let replies, let bytes, let milliseconds):
            for index in 0..<replies {
                guard drip(bytes: bytes, milliseconds: milliseconds) else { return }
                if index < replies - 1 {
                    guard write(Array("\r\n".utf8)) else {
                        result.hungUp = true
                        return
                    }
                }
            }
        case .answerTogether(let count, let replies, let thenRead):
            var seen = commands(in: lastRead)
            while seen < count {
                guard readCommand() else {
                    result.hungUp = true
                    return
                }
                seen += commands(in: lastRead)
            }
            result.allSeen = true
            guard write(Array(replies.utf8)) else { return }
            result.sent = replies.utf8.count
            if thenRead, readCommand() { result.next = lastRead }
            publish(result)
            _ = readCommand()
            return
        case .every(let reply):
            var seen = commands(in: lastRead)
            repeat {
                for _ in 0..<seen {
                    guard write(Array(reply.utf8)) else { break }
                    result.sent += 1
                }
                guard readCommand() else { break }
                seen = commands(in: lastRead)
            } while true
            result.hungUp = true
            return
        case .raw(let text):
            guard write(Array(text.utf8)) else { return }
            result.sent = text.utf8.count
            result.hungUp = !readCommand()
            return
        case .huge(let bytes):
            guard write(Array("$\(bytes)\r\n".utf8)) else { return }
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
            while result.sent < bytes {
                let part = Array(chunk.prefix(bytes - result.sent))
                guard write(part) else {
                    result.hungUp = true
                    return
                }
                result.sent += part.count
            }
        }
        // The reply is whole: said now, then its end, and the connection held until the client closes.
        _ = write(Array("\r\n".utf8))
        publish(result)
        _ = readCommand()
    }

    /// Makes `result` the outcome (the first one only) and wakes `result(limit:)`.
    private func publish(_ result: Outcome) {
        done.lock()
        outcome.withLock { $0 = $0 ?? result }
        done.broadcast()
        done.unlock()
    }
}
