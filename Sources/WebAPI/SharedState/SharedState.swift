import Crypto
import Platform
import Synchronization

/// The state every apimacro process shares through one Redis server
/// (`APIMACRO_SHARED_STATE`): the rate-limit governor's budgets, leases and pacing, and
/// the second cache tier.
///
/// Built only when the setting names a server.
///
/// Redis is a help, never a dependency of a macro: when it cannot be reached (at start or
/// later), one warning goes to stderr, every caller gets nil and carries on with local
/// state, and the connection is tried again at most every `retryInterval` seconds. A
/// wrong password or a port that does not speak Redis is a configuration error at start
/// (`connect()` throws).
///
/// Each connection has a thread of its own that does its socket I/O (`RedisWorker`; only a
/// posted write the socket takes at once is done by the caller): a task waiting for Redis is
/// suspended, it does not hold a thread of the cooperative pool. Each
/// command is bounded by `timeout` (`APIMACRO_SHARED_STATE_TIMEOUT`, 1 s by default), so a
/// dead server costs a caller at most that long. A command the server answers with an error
/// fails alone: the connection stays in use. Until a connection has worked (at start, and
/// after Redis was lost and `retryInterval` has passed), one caller tries to connect and
/// the others wait for its outcome instead of all trying at once.
public final class SharedState: Sendable {
    public let address: SharedStateAddress
    /// Where the address came from, for messages (`APIMACRO_SHARED_STATE`, or the config.toml key).
    public let source: String
    let timeout: Double
    let retryInterval: Double
    let warn: @Sendable (String) -> Void
    /// The thread that waits on the call now, if it waits on sockets itself (the transport's
    /// hook): a script's reply is then waited for there, with the call's transfers, instead
    /// of on the connection's own thread (two thread switches fewer per call).
    let caller: (@Sendable () -> (any TransferCaller)?)?
    private let pool = Mutex(Pool())
    /// The digests of the scripts sent to this Redis (forgotten when it is lost: a restarted
    /// server knows none).
    private let scripts = Mutex<Set<String>>([])
    /// The keys derived from recently seen credential material (a process uses a few).
    ///
    /// Keyed by the material's bytes: String's == takes canonically equivalent text as equal (a
    /// Kelvin sign and K), and two such credentials are two credentials to the server.
    private let derived = Mutex<[[UInt8]: SharedCredential]>([:])

    private struct Pool {
        var idle: [RedisWorker] = []
        /// While set and in the future, no connection is tried.
        var retryAt: ContinuousClock.Instant?
        /// Whether a connection has opened since the start or since Redis was lost; until one
        /// has, one caller at a time tries (`trying`) and the others wait for its outcome.
        var verified = false
        var trying = false
        /// The callers waiting for that try: resumed with whether it connected.
        var waiting: [CheckedContinuation<Bool, Never>] = []
        var warned = false
        /// Whether the warning about an error reply was written.
        var warnedReply = false

        /// What a caller wanting a connection does now.
        mutating func turn(now: ContinuousClock.Instant) -> Turn {
            if let retryAt {
                guard now >= retryAt else { return .unavailable }
                self.retryAt = nil
            }
            if let worker = idle.popLast() { return .pooled(worker) }
            if trying { return .wait }
            if !verified {
                trying = true
                return .open(trial: true)
            }
            return .open(trial: false)
        }
    }

    private enum Turn {
        case pooled(RedisWorker)
        /// Redis was lost and the retry pause has not passed.
        case unavailable
        /// Connect; a trial is the one try while no connection is known to work.
        case open(trial: Bool)
        /// Another caller is trying to connect: wait for its outcome.
        case wait
    }

    /// Idle connections kept for reuse; more may exist while many requests are in flight.
    static let idleLimit = 8

    /// - Parameters:
    ///   - address: the Redis server, database and credentials.
    ///   - source: where the address came from, for messages.
    ///   - timeout: bounds each connect and each command (written and answered), in seconds.
    ///   - retryInterval: after a failure, how long no connection is tried, in seconds.
    ///   - warn: writes one line to stderr (the one warning per process when Redis is lost).
    ///   - caller: the thread that waits on the call now, if it waits on sockets itself
    ///     (`CurlTransport`'s hook of the same name); nil: replies are waited for on each
    ///     connection's own thread.
    ///   - holdLimit: the longest an update posted `holding` waits for a command to go out with.
    public init(
        address: SharedStateAddress, source: String = "APIMACRO_SHARED_STATE", timeout: Double = 1,
        retryInterval: Double = 1,
        warn: @escaping @Sendable (String) -> Void,
        caller: (@Sendable () -> (any TransferCaller)?)? = nil,
        holdLimit: Duration = SharedState.defaultHoldLimit
    ) {
        self.address = address
        self.source = source
        self.timeout = timeout
        self.retryInterval = retryInterval
        self.warn = warn
        self.caller = caller
        self.holdLimit = holdLimit
    }

    /// How long a held update may wait by default: 50 ms.
    public static let defaultHoldLimit = Duration.milliseconds(50)
    let holdLimit: Duration

    /// Whether an idle connection holds an update back (the tests' view of `post(holding:)`).
    var holdsUpdates: Bool {
        pool.withLock { $0.idle }.contains { $0.isHolding }
    }

    /// Connects once at start: a server that rejects the address (a wrong password, no Redis
    /// on that port) is an error that names the setting; one that does not answer is a warning,
    /// and the process goes on with local state.
    /// - Throws: `APIError` (`.invalidRequest`, a usage error) naming `source`, the password redacted.
    public func connect() throws {
        let worker = RedisWorker()
        do {
            try worker.connectWaiting(address, timeout: timeout).get()
            pool.withLock { $0.verified = true }
            release(worker)
        } catch .rejected(let reason) {
            throw APIError(
                .invalidRequest,
                "\(source): \(address) cannot be used: \(shown(reason)); check the address, user and password "
                    + "(redis://[user:password@]host:port/db), or unset \(source) to run without shared state")
        } catch {
            lost(error)
        }
    }

    /// Runs `body` on a pooled connection, on its thread; nil when Redis is unavailable now
    /// (the warning, once per process, is written here).
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (RedisConnection) throws(RedisFailure) -> T) async
        -> T?
    {
        guard let worker = await checkOut() else { return nil }
        return finish(worker, await worker.run(body))
    }

    /// `withConnection` for a caller that cannot suspend: its thread waits (and it does not
    /// wait for another caller's try to connect: it goes on without Redis then).
    func withConnectionWaiting<T: Sendable>(_ body: @escaping @Sendable (RedisConnection) throws(RedisFailure) -> T)
        -> T?
    {
        guard let worker = checkOutWaiting() else { return nil }
        return finish(worker, worker.runWaiting(body))
    }

    /// The connection back to the pool, or forgotten with Redis lost when it failed (an
    /// error reply alone keeps it).
    private func finish<T>(_ worker: RedisWorker, _ result: Result<T, RedisFailure>) -> T? {
        switch result {
        case .success(let value):
            release(worker)
            return value
        case .failure(let error):
            if !worker.isBroken, case .reply = error { release(worker) } else { lost(error) }
            return nil
        }
    }

    /// Runs a Lua script by its digest, sending its text once when the server does not know
    /// it (`NOSCRIPT`, after a restart or `SCRIPT FLUSH`).
    ///
    /// Nil when Redis is unavailable or the script failed (the failure is reported once).
    func evaluate(_ script: RedisScript, keys: [String], arguments: [[UInt8]]) async -> RedisReply? {
        await evaluate(script, encodedKeys: keys.map { Array($0.utf8) }, arguments: arguments)
    }

    /// `evaluate` with the keys as bytes.
    func evaluate(_ script: RedisScript, encodedKeys keys: [[UInt8]], arguments: [[UInt8]]) async -> RedisReply? {
        let tail = SharedState.tail(keys, arguments)
        guard let driver = callerDriver() else {
            return answered(
                await withConnection { connection throws(RedisFailure) in try connection.evaluate(script, tail) })
        }
        guard let worker = await checkOut() else { return nil }
        return answered(finish(worker, await evaluate(script, tail, on: worker, waitingWith: driver)))
    }

    /// The driver of the thread that waits on the call now, when that thread waits on
    /// sockets itself (a Python thread): installed now if the call has none yet, as its first
    /// transfer would.
    private func callerDriver() -> CurlCallDriver? {
        guard let caller = caller?(), let library = try? CurlLibrary.shared(),
            let worker = CurlThreadWorker.forThisThread(library),
            let driver = caller.driver(make: { CurlCallDriver(worker) }), driver.worker === worker
        else { return nil }
        return driver
    }

    /// `connection.evaluate` done from this thread without ever blocking it: commands written
    /// when the socket takes them at once, the replies read as they arrive, and between
    /// them the task suspended while the thread waits on the socket with the call's
    /// transfers (`driver`).
    ///
    /// What cannot go on without waiting (a command the socket did not take whole, a call
    /// given up) ends on the connection's thread.
    private func evaluate(
        _ script: RedisScript, _ tail: [[UInt8]], on worker: RedisWorker, waitingWith driver: CurlCallDriver
    ) async -> Result<RedisReply, RedisFailure> {
        let descriptor: Int32
        switch worker.runAtOnce({ connection throws(RedisFailure) in
            connection.beginEvaluation(script, tail)
            return connection.descriptor
        }) {
        case .success(let value): descriptor = value
        case .failure(let error): return .failure(error)
        }
        while true {
            switch worker.runAtOnce({ connection throws(RedisFailure) in try connection.evaluationProgress() }) {
            case .failure(let error):
                return .failure(error)
            case .success(.reply(let reply)):
                return .success(reply)
            case .success(.readable(let deadline)):
                if await driver.readable(descriptor, until: deadline) { continue }
                handedOff.add(1, ordering: .relaxed)
                return await worker.run { connection throws(RedisFailure) in try connection.finishEvaluation() }
            case .success(.blocked):
                handedOff.add(1, ordering: .relaxed)
                return await worker.run { connection throws(RedisFailure) in try connection.finishEvaluation() }
            }
        }
    }

    /// `evaluate` for a caller that cannot suspend (its thread waits): the tests' helpers; the
    /// product's callers all await the other one.
    func evaluate(_ script: RedisScript, keys: [String], arguments: [[UInt8]]) -> RedisReply? {
        let tail = SharedState.tail(keys.map { Array($0.utf8) }, arguments)
        return answered(
            withConnectionWaiting { connection throws(RedisFailure) in try connection.evaluate(script, tail) })
    }

    /// A script's arguments after its digest or text: the key count, the keys, the arguments.
    private static func tail(_ keys: [[UInt8]], _ arguments: [[UInt8]]) -> [[UInt8]] {
        var tail: [[UInt8]] = [Array(String(keys.count).utf8)]
        tail.reserveCapacity(1 + keys.count + arguments.count)
        tail += keys
        tail += arguments
        return tail
    }

    /// `reply`, or nil (reported once) when the server answered with an error: one command
    /// failed, not the connection (still pooled), so no retry pause and no lost state.
    private func answered(_ reply: RedisReply?) -> RedisReply? {
        if case .error(let text) = reply {
            refused("a command failed: \(text)")
            return nil
        }
        return reply
    }

    /// Runs a Lua script without waiting for its answer (it is read before the connection's
    /// next command): for updates whose result nobody needs, one round trip fewer.
    ///
    /// Returns once the command is written.
    func post(_ script: RedisScript, keys: [String], arguments: [[UInt8]], holding: Bool = false) async {
        await post(script, encodedKeys: keys.map { Array($0.utf8) }, arguments: arguments, holding: holding)
    }

    /// `post` with the keys as bytes.
    ///
    /// `holding`: the command may wait, unwritten, for the next command on its connection (one
    /// write and one wake-up of Redis for both), at most `holdLimit`, or the end of
    /// the process (`RedisWorker.hold`). For an update other processes need not see at once.
    func post(_ script: RedisScript, encodedKeys keys: [[UInt8]], arguments: [[UInt8]], holding: Bool = false) async {
        let tail = SharedState.tail(keys, arguments)
        // A script this process has not seen Redis run goes in full: its answer is read only
        // before the connection's next command, and a process that ends first would lose a
        // NOSCRIPT update (a short run's only record, on a fresh or restarted Redis).
        let known = scripts.withLock { known in !known.insert(script.digest).inserted }
        let head = known ? script.evalsha : [RedisConnection.eval, Array(script.text.utf8)]
        guard let worker = await checkOut() else { return }
        if holding, known {
            _ = finish(worker, worker.hold(head + tail, script: script, tail: tail, within: holdLimit))
            return
        }
        // Written from this thread when the socket takes the command at once (it never waits
        // here); what is left, if any, is written on the connection's thread.
        var result = worker.runAtOnce { connection throws(RedisFailure) in
            try connection.send(head + tail, script: known ? script : nil, tail: tail, waiting: false)
        }
        if case .success(false) = result {
            result = await worker.run { connection throws(RedisFailure) in
                try connection.flush()
                return true
            }
        }
        _ = finish(worker, result)
    }

    /// Runs one plain command; nil when Redis is unavailable or answered with an error.
    func command(_ arguments: [[UInt8]]) async -> RedisReply? {
        answered(await withConnection { connection throws(RedisFailure) in try connection.command(arguments) })
    }

    /// `command` for a caller that cannot suspend (its thread waits): the tests' helpers; the
    /// product's callers all await the other one.
    func command(_ arguments: [[UInt8]]) -> RedisReply? {
        answered(withConnectionWaiting { connection throws(RedisFailure) in try connection.command(arguments) })
    }

    /// The keys derived from `material` (HKDF runs once per credential, not per request).
    func credential(material: String) -> SharedCredential {
        let key = Array(material.utf8)
        if let known = derived.withLock({ $0[key] }) { return known }
        let fresh = SharedCredential(material: material)
        derived.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[key] = fresh
        }
        return fresh
    }

    /// Whether a connection may be tried now.
    public var isAvailable: Bool {
        pool.withLock { state in state.retryAt.map { ContinuousClock.now >= $0 } ?? true }
    }

    /// A connection: a pooled one, else a new one (or, while another caller is trying to
    /// connect, whatever its try gives).
    ///
    /// Nil when Redis is unavailable.
    private func checkOut() async -> RedisWorker? {
        while true {
            switch pool.withLock({ $0.turn(now: .now) }) {
            case .pooled(let worker): return worker
            case .unavailable: return nil
            case .open(let trial):
                let worker = RedisWorker()
                return opened(worker, await worker.connect(address, timeout: timeout), trial: trial)
            case .wait:
                guard await outcomeOfTry() else { return nil }
            }
        }
    }

    /// `checkOut` for a caller that cannot suspend: it does not wait for another caller's try.
    private func checkOutWaiting() -> RedisWorker? {
        switch pool.withLock({ $0.turn(now: .now) }) {
        case .pooled(let worker): return worker
        case .unavailable, .wait: return nil
        case .open(let trial):
            let worker = RedisWorker()
            return opened(worker, worker.connectWaiting(address, timeout: timeout), trial: trial)
        }
    }

    /// Whether the try under way connected; true at once when it has already ended (the
    /// caller looks at the pool again).
    private func outcomeOfTry() async -> Bool {
        await withCheckedContinuation { continuation in
            let ended = pool.withLock { state -> Bool in
                guard state.trying else { return true }
                state.waiting.append(continuation)
                return false
            }
            if ended { continuation.resume(returning: true) }
        }
    }

    /// The worker once it connected, or nil (Redis lost); a trial's waiters learn its outcome.
    private func opened(_ worker: RedisWorker, _ result: Result<Void, RedisFailure>, trial: Bool) -> RedisWorker? {
        var failure: RedisFailure?
        if case .failure(let error) = result {
            failure = error
            lost(error)
        }
        let waiting = pool.withLock { state -> [CheckedContinuation<Bool, Never>] in
            if failure == nil { state.verified = true }
            guard trial else { return [] }
            state.trying = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.resume(returning: failure == nil) }
        return failure == nil ? worker : nil
    }

    /// How many scripts called on a caller thread (`evaluate` with a caller driver) were
    /// finished on the connection's thread instead: a command the socket did not take whole,
    /// or a reply not in by the deadline (for tests: the replies are read on the caller's
    /// thread, whether or not it had to wait for them).
    var evaluationsHandedOff: Int { handedOff.load(ordering: .relaxed) }
    private let handedOff = Atomic<Int>(0)

    /// The number of callers waiting for another's try to connect (for tests).
    var waitingForTry: Int { pool.withLock { $0.waiting.count } }

    private func release(_ worker: RedisWorker) {
        guard !worker.isBroken else { return }
        pool.withLock { state in
            if state.idle.count < SharedState.idleLimit { state.idle.append(worker) }
        }
    }

    /// Warns once that Redis answered a command with an error (a full memory, a script the
    /// server refuses): that command's caller gets nil, Redis stays in use for the next ones.
    private func refused(_ reason: String) {
        let first = pool.withLock { state -> Bool in
            defer { state.warnedReply = true }
            return !state.warnedReply
        }
        guard first else { return }
        warn(
            "apimacro: warning: the shared state \(address) (\(source)) refused a command (\(shown(reason))); "
                + "that request goes on with this process's own state, and Redis stays in use")
    }

    /// Text that came from the Redis server (an error reply, a rejection), as it may be shown:
    /// the password redacted in every form the project's `Redactor` knows (a hostile server can
    /// echo it in any reply, `SELECT`'s included), control characters replaced, at most 200
    /// characters (a reply may be megabytes).
    private func shown(_ text: String) -> String {
        let redacted = address.password.map { Redactor(secrets: [$0.revealed]).redact(text) } ?? text
        let printable = String(
            String.UnicodeScalarView(
                redacted.unicodeScalars.prefix(200).map { scalar in
                    scalar.properties.generalCategory == .control ? "?" : scalar
                }))
        return redacted.unicodeScalars.count > 200 ? printable + "…" : printable
    }

    /// Forgets every pooled connection, waits `retryInterval` before the next try and warns once.
    private func lost(_ failure: RedisFailure) {
        scripts.withLock { $0.removeAll() }
        let first = pool.withLock { state -> Bool in
            state.idle.removeAll()
            state.verified = false
            state.retryAt = ContinuousClock.now + Seconds.duration(retryInterval)
            defer { state.warned = true }
            return !state.warned
        }
        guard first else { return }
        let reason = shown(failure.description)
        warn(
            "apimacro: warning: the shared state \(address) (\(source)) is not usable (\(reason)); "
                + "this process goes on with its own rate-limit state and cache, and uses Redis again when it answers")
    }
}
