import Crypto
import Foundation
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
/// Calls are synchronous loopback-or-LAN round trips on a pool of connections, each
/// bounded by `timeout` (`APIMACRO_SHARED_STATE_TIMEOUT`, 1 s by default), so a dead server
/// holds a cooperative thread at most that long. A command the server answers with an error
/// fails alone: the connection stays in use.
public final class SharedState: Sendable {
    public let address: SharedStateAddress
    /// Where the address came from, for messages (`APIMACRO_SHARED_STATE`, or the config.toml key).
    public let source: String
    let timeout: Double
    let retryInterval: Double
    let warn: @Sendable (String) -> Void
    private let pool = Mutex(Pool())
    /// The digests of the scripts sent to this Redis (forgotten when it is lost: a restarted
    /// server knows none).
    private let scripts = Mutex<Set<String>>([])
    /// The keys derived from recently seen credential material (a process uses a few).
    private let derived = Mutex<[String: SharedCredential]>([:])

    private struct Pool {
        var idle: [RedisConnection] = []
        /// While set and in the future, no connection is tried.
        var retryAt: ContinuousClock.Instant?
        var warned = false
        /// Whether the warning about an error reply was written.
        var warnedReply = false
    }

    /// Idle connections kept for reuse; more may exist while many requests are in flight.
    static let idleLimit = 8

    /// - Parameters:
    ///   - address: the Redis server, database and credentials.
    ///   - source: where the address came from, for messages.
    ///   - timeout: bounds each connect and each command (written and answered), in seconds.
    ///   - retryInterval: after a failure, how long no connection is tried, in seconds.
    ///   - warn: writes one line to stderr (the one warning per process when Redis is lost).
    public init(
        address: SharedStateAddress, source: String = "APIMACRO_SHARED_STATE", timeout: Double = 1,
        retryInterval: Double = 1,
        warn: @escaping @Sendable (String) -> Void
    ) {
        self.address = address
        self.source = source
        self.timeout = timeout
        self.retryInterval = retryInterval
        self.warn = warn
    }

    /// Connects once at start: a server that rejects the address (a wrong password, no Redis
    /// on that port) is an error that names the setting; one that does not answer is a warning,
    /// and the process goes on with local state.
    /// - Throws: `APIError` (`.invalidRequest`, a usage error) naming `source`, the password redacted.
    public func connect() throws {
        do {
            let connection = try RedisConnection(address: address, timeout: timeout)
            release(connection)
        } catch .rejected(let reason) {
            throw APIError(
                .invalidRequest,
                "\(source): \(address) cannot be used: \(shown(reason)); check the address, user and password "
                    + "(redis://[user:password@]host:port/db), or unset \(source) to run without shared state")
        } catch {
            lost(error)
        }
    }

    /// Runs `body` on a pooled connection; nil when Redis is unavailable now (the warning,
    /// once per process, is written here).
    func withConnection<T>(_ body: (RedisConnection) throws(RedisFailure) -> T) -> T? {
        guard let connection = checkOut() else { return nil }
        do {
            let result = try body(connection)
            release(connection)
            return result
        } catch {
            if !connection.isBroken, case .reply = error { release(connection) } else { lost(error) }
            return nil
        }
    }

    /// Runs a Lua script by its digest, sending its text once when the server does not know
    /// it (`NOSCRIPT`, after a restart or `SCRIPT FLUSH`).
    ///
    /// Nil when Redis is unavailable or the script failed (the failure is reported once).
    func evaluate(_ script: RedisScript, keys: [String], arguments: [[UInt8]]) -> RedisReply? {
        evaluate(script, encodedKeys: keys.map { Array($0.utf8) }, arguments: arguments)
    }

    /// `evaluate` with the keys as bytes.
    func evaluate(_ script: RedisScript, encodedKeys keys: [[UInt8]], arguments: [[UInt8]]) -> RedisReply? {
        var tail: [[UInt8]] = [Array(String(keys.count).utf8)]
        tail.reserveCapacity(1 + keys.count + arguments.count)
        tail += keys
        tail += arguments
        let reply = withConnection { connection throws(RedisFailure) in try connection.evaluate(script, tail) }
        if case .error(let text) = reply {
            // One command failed, not the connection (still pooled): no retry pause, no lost state.
            refused("a script failed: \(text)")
            return nil
        }
        return reply
    }

    /// Runs a Lua script without waiting for its answer (it is read before the connection's
    /// next command): for updates whose result nobody needs, one round trip fewer.
    func post(_ script: RedisScript, keys: [String], arguments: [[UInt8]]) {
        post(script, encodedKeys: keys.map { Array($0.utf8) }, arguments: arguments)
    }

    /// `post` with the keys as bytes.
    func post(_ script: RedisScript, encodedKeys keys: [[UInt8]], arguments: [[UInt8]]) {
        var tail: [[UInt8]] = [Array(String(keys.count).utf8)]
        tail.reserveCapacity(1 + keys.count + arguments.count)
        tail += keys
        tail += arguments
        // A script this process has not seen Redis run goes in full: its answer is read only
        // before the connection's next command, and a process that ends first would lose a
        // NOSCRIPT update (a short run's only record, on a fresh or restarted Redis).
        let known = scripts.withLock { known in !known.insert(script.digest).inserted }
        let head = known ? script.evalsha : [RedisConnection.eval, Array(script.text.utf8)]
        _ = withConnection { connection throws(RedisFailure) in
            try connection.send(head + tail, script: known ? script : nil, tail: tail)
        }
    }

    /// Runs one plain command; nil when Redis is unavailable or answered with an error.
    func command(_ arguments: [[UInt8]]) -> RedisReply? {
        let reply = withConnection { connection throws(RedisFailure) in try connection.command(arguments) }
        if case .error(let text) = reply {
            refused("a command failed: \(text)")
            return nil
        }
        return reply
    }

    /// The keys derived from `material` (HKDF runs once per credential, not per request).
    func credential(material: String) -> SharedCredential {
        if let known = derived.withLock({ $0[material] }) { return known }
        let fresh = SharedCredential(material: material)
        derived.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[material] = fresh
        }
        return fresh
    }

    /// Whether a connection may be tried now.
    public var isAvailable: Bool {
        pool.withLock { state in state.retryAt.map { ContinuousClock.now >= $0 } ?? true }
    }

    private func checkOut() -> RedisConnection? {
        let taken: RedisConnection?? = pool.withLock { state in
            if let retryAt = state.retryAt {
                guard ContinuousClock.now >= retryAt else { return .some(nil) }
                state.retryAt = nil
            }
            return state.idle.popLast().map { .some($0) } ?? nil
        }
        switch taken {
        case .some(.some(let connection)): return connection
        case .some(.none): return nil
        case .none:
            do {
                return try RedisConnection(address: address, timeout: timeout)
            } catch {
                lost(error)
                return nil
            }
        }
    }

    private func release(_ connection: RedisConnection) {
        guard !connection.isBroken else { return }
        pool.withLock { state in
            if state.idle.count < SharedState.idleLimit { state.idle.append(connection) }
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
            state.retryAt = ContinuousClock.now + .milliseconds(Int(retryInterval * 1000))
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
