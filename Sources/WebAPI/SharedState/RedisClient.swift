import Platform
import Synchronization

/// A connection to the shared-state server for a caller that needs Redis rather than merely
/// uses it when it is there (macros' state with `APIMACRO_STATE=redis`): every failure is thrown,
/// none turned into "carry on without Redis" as `SharedState` does.
///
/// One connection, used by one caller at a time (its lock is held for each command); opened
/// again for the next command when the last one broke it.
public final class RedisClient: Sendable {
    /// The server, its password redacted when shown.
    public let address: SharedStateAddress
    private let timeout: Double
    private let connection: Mutex<RedisConnection?>

    /// Connects to `address` now, each connect and command bounded by `timeout` seconds.
    ///
    /// - Throws: `RedisFailure`: `.unreachable` when nothing answers, `.rejected` for a wrong
    ///   password or a port that does not speak Redis.
    public init(address: SharedStateAddress, timeout: Double) throws(RedisFailure) {
        self.address = address
        self.timeout = timeout
        connection = Mutex(try RedisConnection(address: address, timeout: timeout))
    }

    /// Runs one command; an error reply is thrown as `.reply`.
    public func command(_ arguments: [String]) throws(RedisFailure) -> RedisReply {
        try run { connection throws(RedisFailure) in try connection.command(arguments.map { Array($0.utf8) }) }
    }

    /// Runs the Lua script `script` (by its digest, its text sent once when the server does not
    /// know it) with `keys` and `arguments`; an error reply is thrown as `.reply`.
    public func evaluate(_ script: String, keys: [String], arguments: [String]) throws(RedisFailure) -> RedisReply {
        let compiled = RedisScript(script)
        let tail = [Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + arguments.map { Array($0.utf8) }
        return try run { connection throws(RedisFailure) in try connection.evaluate(compiled, tail) }
    }

    private func run(_ body: (RedisConnection) throws(RedisFailure) -> RedisReply) throws(RedisFailure) -> RedisReply {
        let result: Result<RedisReply, RedisFailure> = connection.withLock { held in
            do {
                if held == nil || held?.isBroken == true {
                    held = nil
                    held = try RedisConnection(address: address, timeout: timeout)
                }
                guard let open = held else { return .failure(.unreachable("no connection")) }
                return .success(try body(open))
            } catch let failure as RedisFailure {
                return .failure(failure)
            } catch {
                return .failure(.unreachable("\(error)"))
            }
        }
        let reply = try result.get()
        if case .error(let text) = reply { throw .reply(text) }
        return reply
    }
}
