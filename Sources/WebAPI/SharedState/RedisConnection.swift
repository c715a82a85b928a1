import CHiredis
import Platform

/// One synchronous connection to Redis through hiredis: connect with a timeout,
/// `AUTH`, `SELECT`, then commands.
///
/// Each command — writing it and reading its whole reply — is bounded by the timeout, and
/// its reply by `maximumReplyBytes`, so a dead, stalled, dripping or hostile server costs at
/// most that long and that much memory, never a hang. hiredis parses; this class writes and
/// reads the socket itself, to keep those bounds per command rather than per `recv`.
///
/// Used by one caller at a time: `SharedState` checks connections out of its pool and
/// drops one that failed.
final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    /// The reader's reply functions, with array sizes bounded (`apimacro_bound_reader`).
    private let functions: UnsafeMutablePointer<redisReplyObjectFunctions>
    /// Bounds each command, from its first byte written to its reply's last byte read.
    private let timeout: Duration
    /// The most bytes one reply may take.
    let maximumReplyBytes: Int
    /// Set once a command failed on the socket: the connection is not used again.
    private(set) var isBroken = false
    /// The pipelining rules, pure: this class does the I/O they ask for.
    ///
    /// Replies due, held and unwritten commands, the script call under way (`beginEvaluation`).
    private var machine: StateMachine
    /// Where `recv` puts bytes before hiredis's reader takes them.
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// Bytes received for the reply now being read (bounded by `maximumReplyBytes`).
    private var received = 0

    /// What `evaluationProgress` came to.
    enum EvaluationStep: Equatable {
        /// The script's reply.
        case reply(RedisReply)
        /// Nothing more to read now: call again once the socket is readable, or `deadline` has passed.
        case readable(deadline: ContinuousClock.Instant)
        /// The socket did not take a whole command: `finishEvaluation` ends the call, waiting.
        case blocked
    }

    /// The largest reply read by default: the shared cache's entries are at most 1 MB.
    static let defaultMaximumReplyBytes = 8 * 1024 * 1024

    /// Connects and says who we are.
    /// - Parameters:
    ///   - address: the server, database and credentials.
    ///   - timeout: bounds the connect, and each command as a whole, in seconds.
    ///   - maximumReplyBytes: a longer reply fails its command (and the connection is dropped).
    /// - Throws: `RedisFailure.unreachable` when nothing answers in `timeout` seconds;
    ///   `.rejected` for a wrong password, a server that needs one, or a port that does not speak Redis.
    init(
        address: SharedStateAddress, timeout: Double, maximumReplyBytes: Int = RedisConnection.defaultMaximumReplyBytes
    ) throws(RedisFailure) {
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
        functions = .allocate(capacity: 1)
        apimacro_bound_reader(context.pointee.reader, functions)
        self.timeout = Seconds.duration(min(max(Seconds.clamped(timeout), 0.001), 86_400))
        machine = StateMachine(timeout: self.timeout)
        self.maximumReplyBytes = maximumReplyBytes
        try handshake(address)
    }

    deinit {
        redisFree(context)
        functions.deallocate()
    }

    /// `AUTH` (or `PING` when there is no password, so that a server that is not Redis, or
    /// that wants a password, is found now), then `SELECT` for another database.
    private func handshake(_ address: SharedStateAddress) throws(RedisFailure) {
        var hello: [String] = ["PING"]
        if let password = address.password {
            hello = ["AUTH"] + (address.user.map { [$0] } ?? []) + [password.revealed]
        }
        let answer = try command(hello.map { Array($0.utf8) })
        if case .error(let text) = answer {
            let shown = address.password.map { text.replacingLiteral($0.revealed, with: "REDACTED") } ?? text
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
    ///
    /// The command has one deadline, `timeout` from now: reading the replies still due for
    /// what `send` sent before (each also within `timeout` of its own sending), writing it and
    /// reading its reply all fit in it, however many replies were due.
    /// - Throws: `RedisFailure.unreachable` when the socket fails, the command takes longer
    ///   than the timeout or its reply is larger than `maximumReplyBytes` (the connection is
    ///   then broken); `.rejected` when the reply is not Redis's protocol.
    func command(_ arguments: [[UInt8]]) throws(RedisFailure) -> RedisReply {
        let deadline = ContinuousClock.now + timeout
        try drain(until: deadline)
        return try exchange(arguments, until: deadline)
    }

    /// Runs `script` by its digest (`EVALSHA`), with `tail` (the key count, keys and
    /// arguments); sends its text when the server does not know it (`NOSCRIPT`, after a
    /// restart or `SCRIPT FLUSH`).
    ///
    /// One deadline, as for `command`.
    func evaluate(_ script: RedisScript, _ tail: [[UInt8]]) throws(RedisFailure) -> RedisReply {
        let deadline = ContinuousClock.now + timeout
        try drain(until: deadline)
        let reply = try exchange(script.evalsha + tail, until: deadline)
        return try inFull(script, tail, unless: reply, until: deadline)
    }

    /// The connection's socket, to wait on for `evaluationProgress`.
    var descriptor: Int32 { context.pointee.fd }

    /// Starts `evaluate` for a thread that waits on many sockets at once and must never block
    /// on this one (the Python thread waiting on its call): `evaluationProgress` then does
    /// what it can without waiting, and is called again each time the socket is readable.
    ///
    /// The same commands, in the same order, under the same one deadline as `evaluate`.
    func beginEvaluation(_ script: RedisScript, _ tail: [[UInt8]]) {
        machine.beginEvaluation(script, tail, now: ContinuousClock.now)
    }

    /// Reads what has arrived and writes what is due, never waiting: the script by its digest
    /// first, written at once even while replies of the commands `send` sent are still due
    /// (they and this one come back together: one wait for all, not one each); then those
    /// replies, then its own.
    ///
    /// A `NOSCRIPT` keeps the order Redis would have run them in without that: when this
    /// script's reply is `NOSCRIPT` too (Redis restarted, or `SCRIPT FLUSH`), the earlier
    /// scripts are sent again in full, in their order, and then this one; when only an earlier
    /// one's is (another client loaded this script in the microseconds between them), that
    /// one is sent again after this one's reply, as if it had reached Redis a moment later.
    /// - Throws: as `evaluate`: the deadline passed, the socket failed, or the reply is not Redis's.
    func evaluationProgress() throws(RedisFailure) -> EvaluationStep {
        guard !isBroken else { throw .unreachable("the connection was lost") }
        guard machine.evaluation != nil else { throw .unreachable("no script call under way") }
        var action = machine.evaluation(.progress, now: ContinuousClock.now)
        while true {
            switch action {
            case .write(let bytes):
                let written = try write(bytes, until: nil)
                action = machine.evaluation(.wrote(written), now: ContinuousClock.now)
            case .read:
                let reply = try replyIfArrived()
                action = machine.evaluation(reply.map { .arrived($0) } ?? .nothingArrived, now: ContinuousClock.now)
            case .finish(let step):
                return step
            case .fail(let reason):
                throw fail(reason)
            }
        }
    }

    /// Ends what `beginEvaluation` started, waiting on the socket (within the same deadline):
    /// for a thread that may wait, when `evaluationProgress` could not go on without it.
    func finishEvaluation() throws(RedisFailure) -> RedisReply {
        guard var call = machine.evaluation else { throw .unreachable("no script call under way") }
        machine.evaluation = nil
        guard call.sent else {
            // Replies of earlier commands still due: read as `evaluate` reads them.
            try drain(until: call.deadline)
            let reply = try exchange(call.script.evalsha + call.tail, until: call.deadline)
            return try inFull(call.script, call.tail, unless: reply, until: call.deadline)
        }
        // Sent (whole or in part), `ahead` earlier replies due before its own: the steps of
        // `progress`, each write and read waiting.
        try flush()
        if let answer = call.answer {
            // Behind the ones `progress` already wrote, whose replies are still due: written
            // in turn, every reply read and dropped before the next command's, in order.
            for command in call.again { try send(command, script: nil, tail: [], waiting: true) }
            return answer
        }
        while call.ahead > 0, let sent = machine.nextUnanswered() {
            call.ahead -= 1
            let reply = try readReply(until: min(sent.deadline, call.deadline))
            if let command = StateMachine.again(sent.script, sent.tail, after: reply) { call.again.append(command) }
        }
        let full = [RedisConnection.eval, Array(call.script.text.utf8)] + call.tail
        if call.inFull, !call.fullSent {
            for command in call.again { _ = try exchange(command, until: call.deadline) }
            return try exchange(full, until: call.deadline)
        }
        let reply = try readReply(until: call.deadline)
        for command in call.again { _ = try exchange(command, until: call.deadline) }
        guard !call.inFull, StateMachine.isNoScript(reply) else { return reply }
        return try exchange(full, until: call.deadline)
    }

    /// Writes a command now without waiting for its reply, which the next `command` or
    /// `evaluate` reads (and discards; a `NOSCRIPT` for `script` sends its text, with `tail`, then).
    ///
    /// One round trip saved. With `waiting` false it never waits: it writes what the socket
    /// takes at once and returns false when part of the command is left, for `flush`.
    @discardableResult
    func send(_ arguments: [[UInt8]], script: RedisScript?, tail: [[UInt8]], waiting: Bool = true)
        throws(RedisFailure) -> Bool
    {
        try flushUnwritten()
        let now = ContinuousClock.now
        let deadline = now + timeout
        let bytes = machine.takeHeld(before: RedisConnection.format(arguments), now: now)
        let written = try write(bytes, until: waiting ? deadline : nil)
        return machine.wrote(
            bytes, written: written, due: StateMachine.Unanswered(script: script, tail: tail, deadline: deadline))
    }

    /// Writes what `send` left of a command, then what `hold` kept back, before their deadline.
    func flush() throws(RedisFailure) {
        try flushUnwritten()
        guard machine.isHolding else { return }
        let now = ContinuousClock.now
        let bytes = machine.takeHeld(before: [], now: now)
        try write(bytes, until: machine.writeDeadline(now: now))
    }

    /// Writes what `send` left of a command, before that command's deadline.
    private func flushUnwritten() throws(RedisFailure) {
        guard !isBroken else { throw .unreachable("the connection was lost") }
        guard let unwritten = machine.takeUnwritten() else { return }
        try write(unwritten.bytes, from: unwritten.offset, until: machine.writeDeadline(now: ContinuousClock.now))
    }

    /// Keeps a command back, without writing it: it goes out with the next command written on
    /// this connection (one `send` for both, and Redis woken once), or with `writeHeld`.
    ///
    /// Its reply is read, as `send`'s, before the next command's (a `NOSCRIPT` for `script`
    /// sends its text, with `tail`, then).
    ///
    /// For an update nobody waits on and that may reach Redis a moment later (the governor's
    /// record of a routine answer); `RedisWorker.hold` bounds how long.
    func hold(_ arguments: [[UInt8]], script: RedisScript?, tail: [[UInt8]]) throws(RedisFailure) {
        guard !isBroken else { throw .unreachable("the connection was lost") }
        machine.hold(RedisConnection.format(arguments), script: script, tail: tail, now: ContinuousClock.now)
    }

    /// Whether commands are held back (`hold`).
    var isHolding: Bool { machine.isHolding }

    /// When the oldest held command was held.
    var heldSince: ContinuousClock.Instant? { machine.heldSince }

    /// Writes the held commands if nothing else is being written, without waiting: what the
    /// socket does not take whole is left for the next write (`flush`).
    ///
    /// For the worker's thread, when a held command has waited long enough.
    func writeHeld() throws(RedisFailure) {
        guard !isBroken, machine.unwritten == nil, machine.isHolding else { return }
        let bytes = machine.takeHeld(before: [], now: ContinuousClock.now)
        machine.wrote(bytes, written: try write(bytes, until: nil), due: nil)
    }

    /// Writes one command and reads its reply before `deadline`.
    private func exchange(_ arguments: [[UInt8]], until deadline: ContinuousClock.Instant) throws(RedisFailure)
        -> RedisReply
    {
        guard !isBroken else { throw .unreachable("the connection was lost") }
        // Its callers read every reply due first; held commands would answer before it.
        if machine.isHolding { try drain(until: deadline) }
        try write(RedisConnection.format(arguments), until: deadline)
        return try readReply(until: deadline)
    }

    /// `reply` itself, or, when it says the server does not know `script` (`NOSCRIPT`), the
    /// reply to the script sent in full (`EVAL`): the one place a script is sent again.
    private func inFull(
        _ script: RedisScript?, _ tail: [[UInt8]], unless reply: RedisReply, until deadline: ContinuousClock.Instant
    ) throws(RedisFailure) -> RedisReply {
        guard let command = StateMachine.again(script, tail, after: reply) else { return reply }
        return try exchange(command, until: deadline)
    }

    /// Reads the replies of what `send` sent, each before its own deadline and all before
    /// `deadline`; scripts the server did not know are sent again in full once every reply
    /// due is read (their replies come after those).
    private func drain(until deadline: ContinuousClock.Instant) throws(RedisFailure) {
        try flush()
        var replies: [(StateMachine.Unanswered, RedisReply)] = []
        while let sent = machine.nextUnanswered() {
            replies.append((sent, try readReply(until: min(sent.deadline, deadline))))
        }
        for (sent, reply) in replies {
            _ = try inFull(sent.script, sent.tail, unless: reply, until: deadline)
        }
    }

    static let eval = Array("EVAL".utf8)

    /// A command in Redis's protocol (RESP): `*N`, then `$length` and the bytes of each argument.
    ///
    /// One buffer, filled by copies of whole arguments.
    static func format(_ arguments: [[UInt8]]) -> [UInt8] {
        var size = 24
        for argument in arguments { size += argument.count + 24 }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            // Plain stores through `base` and `at`: no closure captures them (a captured `var`
            // was checked for exclusive access at every use, ~10 k instructions a request).
            var at = line(UInt8(ascii: "*"), arguments.count, into: base, at: 0)
            for argument in arguments {
                at = line(UInt8(ascii: "$"), argument.count, into: base, at: at)
                argument.withUnsafeBufferPointer { bytes in
                    if let source = bytes.baseAddress, !bytes.isEmpty {
                        (base + at).update(from: source, count: bytes.count)
                    }
                }
                at += argument.count
                base[at] = 13
                base[at + 1] = 10
                at += 2
            }
            count = at
        }
    }

    /// Writes `marker`, `number` in decimal and CR LF at `at`; returns the offset after them.
    private static func line(_ marker: UInt8, _ number: Int, into base: UnsafeMutablePointer<UInt8>, at start: Int)
        -> Int
    {
        base[start] = marker
        var at = start + 1
        let first = at
        var rest = max(number, 0)
        repeat {
            base[at] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            at += 1
        } while rest > 0
        var (low, high) = (first, at - 1)
        while low < high {
            (base[low], base[high]) = (base[high], base[low])
            low += 1
            high -= 1
        }
        base[at] = 13
        base[at + 1] = 10
        return at + 2
    }

    /// Writes `bytes` from `start`, straight from the buffer `format` filled (hiredis's output
    /// buffer is not used: it would be one more copy): in full before `deadline`, or, without
    /// one, what the socket takes at once.
    ///
    /// Returns the offset reached.
    @discardableResult
    private func write(_ bytes: [UInt8], from start: Int = 0, until deadline: ContinuousClock.Instant?)
        throws(RedisFailure) -> Int
    {
        var offset = start
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { whole in
                Glibc.send(context.pointee.fd, whole.baseAddress.map { $0 + offset }, whole.count - offset, flags)
            }
            if count > 0 {
                offset += count
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno != EAGAIN, errno != EWOULDBLOCK { throw fail(String(cString: strerror(errno))) }
            guard let deadline else { break }
            try wait(for: Int16(POLLOUT), until: deadline)
        }
        return offset
    }

    /// Every `send` and `recv` returns at once (`MSG_DONTWAIT`: `wait` polls, bounded by the
    /// deadline) and a closed peer is an error, not a `SIGPIPE`.
    private let flags = Int32(MSG_DONTWAIT | MSG_NOSIGNAL)

    /// Reads one whole reply before `deadline`, of at most `maximumReplyBytes`.
    private func readReply(until deadline: ContinuousClock.Instant) throws(RedisFailure) -> RedisReply {
        received = 0
        guard let reply = try nextReply(waitingUntil: deadline) else { throw fail("no answer in time") }
        return reply
    }

    /// The next whole reply if its bytes have arrived, read without waiting; nil when more
    /// must come (the bytes so far count against `maximumReplyBytes` on the next call).
    private func replyIfArrived() throws(RedisFailure) -> RedisReply? {
        try nextReply(waitingUntil: nil)
    }

    /// Reads one whole reply: waiting until `deadline`, or with none only what has arrived.
    private func nextReply(waitingUntil deadline: ContinuousClock.Instant?) throws(RedisFailure) -> RedisReply? {
        guard let reader = context.pointee.reader else { throw fail("the connection has no reader") }
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
                var reason = RedisConnection.text(of: reader.pointee.errstr)
                if reader.pointee.err == REDIS_ERR_OOM {
                    reason = "an array reply of more than \(apimacro_REDIS_MAX_ELEMENTS) elements, or no memory"
                }
                isBroken = true
                throw .rejected("the server does not speak Redis (\(reason))")
            }
            if let raw {
                defer { freeReplyObject(raw) }
                received = 0
                return RedisConnection.copy(raw.assumingMemoryBound(to: redisReply.self))
            }
            if let deadline { try wait(for: Int16(POLLIN), until: deadline) }
            let count = buffer.withUnsafeMutableBytes { recv(context.pointee.fd, $0.baseAddress, $0.count, flags) }
            if count == 0 { throw fail("the server closed the connection") }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    if deadline == nil { return nil }
                    continue
                }
                throw fail(String(cString: strerror(errno)))
            }
            received += count
            guard received <= maximumReplyBytes else {
                throw fail("a reply larger than \(maximumReplyBytes) bytes")
            }
            let fed = buffer.withUnsafeBytes { bytes in
                redisReaderFeed(reader, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), count)
            }
            guard fed == REDIS_OK else { throw fail("cannot hold the reply") }
        }
    }

    /// Waits until the socket is ready for `events`, or throws once `deadline` has passed.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) throws(RedisFailure) {
        while true {
            // Past the deadline, one look without waiting: a reply that arrived long ago (a
            // posted command's, on a connection idle in the pool) is still read.
            let left = max(deadline - ContinuousClock.now, .zero)
            let (seconds, attoseconds) = left.components
            let milliseconds =
                left == .zero ? 0 : Int32(min(seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1, 86_400_000))
            var descriptor = pollfd(fd: context.pointee.fd, events: events, revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw fail(String(cString: strerror(errno))) }
            if ready == 0, left == .zero { throw fail("no answer in time") }
        }
    }

    /// Marks the connection broken and says why.
    private func fail(_ reason: String) -> RedisFailure {
        isBroken = true
        if context.pointee.err == REDIS_ERR_PROTOCOL { return .rejected("the server does not speak Redis (\(reason))") }
        return .unreachable(reason)
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
        let text = RedisConnection.text(of: context.pointee.errstr)
        if text.isEmpty { return "error \(context.pointee.err)" }
        // hiredis 0.14 says "Resource temporarily unavailable" when a read times out.
        if text == "Resource temporarily unavailable" { return "no answer in time" }
        return text
    }

    /// A C string held in a fixed-size array (hiredis's `errstr`).
    private static func text<T>(of characters: T) -> String {
        var characters = characters
        return withUnsafeBytes(of: &characters) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// `seconds` as hiredis's `timeval`: `APIMACRO_SHARED_STATE_TIMEOUT=1e300` trapped here (issue 24).
    private static func limit(seconds: Double) -> timeval {
        let (whole, microseconds) = Seconds.secondsAndMicroseconds(seconds)
        return timeval(tv_sec: whole, tv_usec: microseconds)
    }
}
