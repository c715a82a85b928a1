import CHiredis
import Foundation

/// One synchronous connection to Redis through hiredis: connect with a timeout,
/// `AUTH`, `SELECT`, then commands, each bounded by the same timeout (a dead server
/// costs at most that long, never a hang).
///
/// Used by one caller at a time: `SharedState` checks connections out of its pool and
/// drops one that failed.
final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    /// Set once a command failed on the socket: the connection is not used again.
    private(set) var isBroken = false
    /// Commands sent by `send` whose replies are not read yet (read before the next command),
    /// with their script, to send it in full when the server does not know its digest.
    private var unanswered: [(script: RedisScript?, arguments: [[UInt8]])] = []

    /// Connects and says who we are.
    /// - Throws: `RedisFailure.unreachable` when nothing answers in `timeout` seconds;
    ///   `.rejected` for a wrong password, a server that needs one, or a port that does not speak Redis.
    init(address: SharedStateAddress, timeout: Double) throws(RedisFailure) {
        let limit = RedisConnection.limit(seconds: timeout)
        guard let context = redisConnectWithTimeout(address.host, Int32(address.port), limit) else {
            throw .unreachable("cannot allocate a Redis connection")
        }
        guard context.pointee.err == 0, redisSetTimeout(context, limit) == REDIS_OK else {
            let reason = RedisConnection.errorText(context)
            redisFree(context)
            throw .unreachable(reason)
        }
        // From here `deinit` frees the context, also when the handshake throws.
        self.context = context
        try handshake(address)
    }

    deinit { redisFree(context) }

    /// `AUTH` (or `PING` when there is no password, so that a server that is not Redis, or
    /// that wants a password, is found now), then `SELECT` for another database.
    private func handshake(_ address: SharedStateAddress) throws(RedisFailure) {
        var hello: [String] = ["PING"]
        if let password = address.password {
            hello = ["AUTH"] + (address.user.map { [$0] } ?? []) + [password.revealed]
        }
        let answer = try command(hello.map { Array($0.utf8) })
        if case .error(let text) = answer {
            let shown = address.password.map { text.replacingOccurrences(of: $0.revealed, with: "REDACTED") } ?? text
            if shown.hasPrefix("WRONGPASS") || shown.contains("invalid password") || shown.contains("invalid username")
            {
                throw .rejected("wrong user or password (\(shown))")
            }
            if shown.hasPrefix("NOAUTH") { throw .rejected("the server needs a password (\(shown))") }
            if shown.contains("without any password configured") || shown.contains("no password is set") {
                throw .rejected("the server has no password set, but the address gives one (\(shown))")
            }
            throw .rejected(shown)
        }
        if address.database != 0 {
            if case .error(let text) = try command([Array("SELECT".utf8), Array(String(address.database).utf8)]) {
                throw .rejected("cannot use database \(address.database) (\(text))")
            }
        }
    }

    /// Sends one command and reads its reply (an error reply is a value, not a throw).
    /// - Throws: `RedisFailure.unreachable` when the socket fails or times out (the
    ///   connection is then broken), or the reply cannot be read.
    func command(_ arguments: [[UInt8]]) throws(RedisFailure) -> RedisReply {
        guard !isBroken else { throw .unreachable("the connection was lost") }
        try drain()
        let lengths = arguments.map(\.count)
        // hiredis copies the arguments into its output buffer before returning.
        let raw: UnsafeMutableRawPointer? = RedisConnection.withPointers(arguments) { pointers in
            lengths.withUnsafeBufferPointer { sizes in
                var values = pointers
                return values.withUnsafeMutableBufferPointer { values in
                    redisCommandArgv(context, Int32(arguments.count), values.baseAddress, sizes.baseAddress)
                }
            }
        }
        guard let raw else { throw fail() }
        defer { freeReplyObject(raw) }
        return RedisConnection.copy(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Writes a command now without waiting for its reply, which the next `command` reads
    /// (and discards; a `NOSCRIPT` for `script` sends its text then).
    ///
    /// One round trip saved.
    func send(_ arguments: [[UInt8]], script: RedisScript?) throws(RedisFailure) {
        guard !isBroken else { throw .unreachable("the connection was lost") }
        let lengths = arguments.map(\.count)
        let appended = RedisConnection.withPointers(arguments) { pointers in
            lengths.withUnsafeBufferPointer { sizes in
                var values = pointers
                return values.withUnsafeMutableBufferPointer { values in
                    redisAppendCommandArgv(context, Int32(arguments.count), values.baseAddress, sizes.baseAddress)
                }
            }
        }
        guard appended == REDIS_OK else { throw fail() }
        unanswered.append((script, arguments))
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw fail() }
        }
    }

    /// Reads the replies of what `send` sent; scripts the server did not know are sent again in full.
    private func drain() throws(RedisFailure) {
        var again: [(RedisScript, [[UInt8]])] = []
        while !unanswered.isEmpty {
            let sent = unanswered.removeFirst()
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw fail() }
            let reply = RedisConnection.copy(raw.assumingMemoryBound(to: redisReply.self))
            freeReplyObject(raw)
            if case .error(let text) = reply, text.hasPrefix("NOSCRIPT"), let script = sent.script {
                again.append((script, Array(sent.arguments.dropFirst(2))))
            }
        }
        for (script, tail) in again {
            _ = try command([Array("EVAL".utf8), Array(script.text.utf8)] + tail)
        }
    }

    /// Marks the connection broken and says why.
    private func fail() -> RedisFailure {
        isBroken = true
        let reason = RedisConnection.errorText(context)
        if context.pointee.err == REDIS_ERR_PROTOCOL { return .rejected("the server does not speak Redis (\(reason))") }
        return .unreachable(reason)
    }

    /// Calls `body` with C pointers to every argument's bytes (valid only inside it).
    private static func withPointers<T>(
        _ arguments: [[UInt8]], _ body: ([UnsafePointer<CChar>?]) -> T
    ) -> T {
        var buffers: [UnsafeMutablePointer<CChar>] = []
        buffers.reserveCapacity(arguments.count)
        defer { for buffer in buffers { buffer.deallocate() } }
        for argument in arguments {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, argument.count))
            argument.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress {
                    UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count)
                }
            }
            buffers.append(buffer)
        }
        return body(buffers.map { UnsafePointer($0) })
    }

    /// A Swift copy of a hiredis reply tree.
    private static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        func text() -> String {
            guard let pointer = value.str else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: value.len), as: UTF8.self)
        }
        switch value.type {
        case apimacro_REDIS_REPLY_STRING:
            guard let pointer = value.str else { return .string([]) }
            return .string(Array(UnsafeRawBufferPointer(start: pointer, count: value.len)))
        case apimacro_REDIS_REPLY_STATUS: return .status(text())
        case apimacro_REDIS_REPLY_ERROR: return .error(text())
        case apimacro_REDIS_REPLY_INTEGER: return .integer(value.integer)
        case apimacro_REDIS_REPLY_ARRAY:
            guard let elements = value.element else { return .array([]) }
            return .array((0..<value.elements).map { index in elements[index].map { copy($0) } ?? .null })
        default: return .null
        }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        var errorText = context.pointee.errstr
        let text = withUnsafeBytes(of: &errorText) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        if text.isEmpty { return "error \(context.pointee.err)" }
        // hiredis 0.14 says "Resource temporarily unavailable" when a read times out.
        if text == "Resource temporarily unavailable" { return "no answer in time" }
        return text
    }

    private static func limit(seconds: Double) -> timeval {
        let whole = max(0, seconds.rounded(.down))
        return timeval(tv_sec: Int(whole), tv_usec: Int((seconds - whole) * 1_000_000))
    }
}
