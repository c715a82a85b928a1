import Platform
import Synchronization
import WebAPI

/// Macros' state on the shared-state Redis server (`APIMACRO_STATE=redis`): one hash per
/// macro, `apimacro:state:<macro>`, holding each key's JSON text (`v:<key>`), when it was
/// committed (`u:<key>`) and the state's version (`#version`); the set `apimacro:state-macros`
/// names the macros that have committed state.
///
/// A run remembers the version it read; its commit (one Lua script, so atomic) moves the
/// version on only from that one (compare-and-set), so of two runs on different machines that
/// read the same state only the first commits. Only what macros put in `apimacro.state` is
/// stored: never a token.
enum RedisState {
    /// The hash of `macro`'s state.
    static func key(_ macro: String) -> String { "apimacro:state:" + macro }
    /// The set of the macros with state.
    static let macrosKey = "apimacro:state-macros"

    /// The process's connection to `address`, opened now when there is none.
    ///
    /// - Throws: `StoreError` (`.unreachable`) naming the server (its password redacted) and what to do.
    static func client(_ address: SharedStateAddress, timeout: Double) throws -> RedisClient {
        if let open = pool.withLock({ $0.first { $0.address == address } }) { return open }
        do {
            let client = try RedisClient(address: address, timeout: timeout)
            pool.withLock { $0.append(client) }
            return client
        } catch {
            throw failure(error, address: address)
        }
    }

    private static let pool = Mutex<[RedisClient]>([])

    /// The `StoreError` for a failed command on `address`.
    ///
    /// `committed` (the last step of a commit whose rows are already committed) makes the
    /// message say so, and what running again does.
    static func failure(_ error: RedisFailure, address: SharedStateAddress, committed: CommittedRows? = nil)
        -> StoreError
    {
        if let committed {
            return .io(
                "the shared-state Redis at \(address) failed committing the state (\(error.description)): the state "
                    + "is as the last run left it, but \(committed)")
        }
        switch error {
        case .unreachable(let reason):
            return .unreachable(
                "cannot reach the shared-state Redis at \(address) (\(reason)); nothing was sent or written. "
                    + "Start the server, or fix APIMACRO_SHARED_STATE, or unset APIMACRO_STATE to keep state in "
                    + "the home's SQLite file")
        case .rejected(let reason):
            return .unreachable(
                "the shared-state Redis at \(address) cannot be used: \(reason); nothing was written. "
                    + "Check the address, user and password in APIMACRO_SHARED_STATE")
        case .reply(let text):
            return .io("the shared-state Redis at \(address) refused a state command (\(text)); nothing was written")
        }
    }

    /// Runs `body` against the server, its failures as `StoreError`s.
    private static func with<T>(
        _ address: SharedStateAddress, timeout: Double, committed: CommittedRows? = nil,
        _ body: (RedisClient) throws(RedisFailure) -> T
    ) throws -> T {
        let client: RedisClient
        do {
            client = try self.client(address, timeout: timeout)
        } catch let error as StoreError {
            guard let committed else { throw error }
            let reason = error.description.prefix { $0 != ";" }
            throw StoreError.io("\(reason): the state is as the last run left it, but \(committed)")
        }
        do {
            return try body(client)
        } catch {
            throw failure(error, address: address, committed: committed)
        }
    }

    /// Checks that the server answers.
    static func check(_ address: SharedStateAddress, timeout: Double) throws {
        _ = try with(address, timeout: timeout) { client throws(RedisFailure) in try client.command(["PING"]) }
    }

    /// The entries of `macro` (every macro's when nil, by macro then key) and the macro's version
    /// (0: never committed), each macro read in one command.
    static func read(_ address: SharedStateAddress, timeout: Double, macro: String?) throws -> (
        entries: [StateDatabase.Entry], version: Int64
    ) {
        try with(address, timeout: timeout) { client throws(RedisFailure) in
            var macros: [String]
            if let macro {
                macros = [macro]
            } else {
                macros = try client.command(["SMEMBERS", macrosKey]).elements.compactMap(\.text).sorted()
            }
            var entries: [StateDatabase.Entry] = []
            var version: Int64 = 0
            for name in macros {
                let fields = try client.command(["HGETALL", key(name)]).elements.map { $0.text ?? "" }
                var values: [String: String] = [:]
                var updated: [String: Double] = [:]
                var index = 0
                while index + 1 < fields.count {
                    let field = fields[index]
                    let value = fields[index + 1]
                    if field.hasPrefix("v:") {
                        values[String(field.dropFirst(2))] = value
                    } else if field.hasPrefix("u:") {
                        updated[String(field.dropFirst(2))] = Double(value) ?? 0
                    } else if field == "#version" {
                        version = Int64(value) ?? 0
                    }
                    index += 2
                }
                for entryKey in values.keys.sorted() {
                    entries.append(
                        StateDatabase.Entry(
                            macro: name, key: entryKey, json: values[entryKey] ?? "null",
                            updated: updated[entryKey] ?? 0))
                }
            }
            return (entries, version)
        }
    }

    /// The version of `macro`'s state now (0: never committed).
    static func version(_ address: SharedStateAddress, timeout: Double, macro: String) throws -> Int64 {
        try with(address, timeout: timeout) { client throws(RedisFailure) in
            try client.command(["HGET", key(macro), "#version"]).integer ?? 0
        }
    }

    /// The commit, one Lua script.
    ///
    /// ARGV: the expected version (empty: any), now, the macro, then per change the key and
    /// either `s` and the JSON text or `d` (delete). Returns {1, new version}, or {0, current
    /// version} when the version is not the expected one (nothing written).
    static let commitScript = """
        local current = tonumber(redis.call('HGET', KEYS[1], '#version') or '0')
        if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= current then
          return {0, current}
        end
        local i = 4
        while i <= #ARGV do
          local name, op = ARGV[i], ARGV[i + 1]
          if op == 's' then
            redis.call('HSET', KEYS[1], 'v:' .. name, ARGV[i + 2], 'u:' .. name, ARGV[2])
            i = i + 3
          else
            redis.call('HDEL', KEYS[1], 'v:' .. name, 'u:' .. name)
            i = i + 2
          end
        end
        redis.call('HSET', KEYS[1], '#version', current + 1)
        redis.call('SADD', KEYS[2], ARGV[3])
        return {1, current + 1}
        """

    /// Moves `macro`'s version on from `expected` (nil: whatever it is) and writes `changes`, at
    /// once; returns the new version.
    ///
    /// - Throws: `StoreError` (`.conflict`) when another run committed the state since `expected`
    ///   (`committed`: the rows this run committed before, for the message).
    static func write(
        _ address: SharedStateAddress, timeout: Double, macro: String, changes: [(key: String, json: String?)],
        expected: Int64?, now: Double, committed: CommittedRows? = nil
    ) throws -> Int64 {
        var arguments = [expected.map(String.init) ?? "", "\(now)", macro]
        for (name, json) in changes {
            if let json { arguments += [name, "s", json] } else { arguments += [name, "d"] }
        }
        let reply = try with(address, timeout: timeout, committed: committed) { client throws(RedisFailure) in
            try client.evaluate(commitScript, keys: [key(macro), macrosKey], arguments: arguments)
        }
        let parts = reply.elements.map(\.integer)
        guard parts.count == 2, let done = parts[0], let version = parts[1] else {
            throw StoreError.io(
                "the shared-state Redis at \(address) answered the state commit oddly; nothing was written")
        }
        guard done == 1 else {
            throw StateDatabase.conflict(
                macro: macro, expected: expected ?? 0, current: version, keys: changes.map(\.key), committed: committed)
        }
        return version
    }

    /// Removes `macro`'s state (only `key` when given); returns how many entries went.
    ///
    /// Moves the version on, so a run that read the state before fails rather than write over the reset.
    static func reset(_ address: SharedStateAddress, timeout: Double, macro: String, key entryKey: String?) throws
        -> Int
    {
        let existing = try read(address, timeout: timeout, macro: macro).entries
        let gone = existing.filter { entryKey == nil || $0.key == entryKey }
        guard !gone.isEmpty else { return 0 }
        _ = try write(
            address, timeout: timeout, macro: macro, changes: gone.map { ($0.key, nil) }, expected: nil,
            now: Date().timeIntervalSince1970)
        return gone.count
    }
}

extension RedisReply {
    /// A bulk string or status as text.
    var text: String? {
        switch self {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }
}
