import Platform

/// Macros' state in PostgreSQL (`APIMACRO_STATE=postgresql://…`): `_apimacro_state` holds each
/// macro's keys (values as JSON text), `_apimacro_state_versions` one version per macro.
///
/// A run remembers the version it read; its commit moves the version on only from that one
/// (compare-and-set), in the same transaction as its rows, so of two runs on different
/// machines that read the same state only the first commits, and the second writes nothing.
enum PostgresState {
    /// Makes the two tables unless they exist (under the lock every apimacro writer of them takes).
    static func prepare(_ connection: PostgresConnection) throws {
        try connection.transaction { session in
            try PostgresUpsert.lock(session, "_apimacro_state")
            try makeTables(session)
        }
    }

    /// Makes the tables unless they exist, in the open transaction of `session` (its lock taken).
    private static func makeTables(_ session: PostgresSession) throws {
        try session.execute(
            """
            CREATE TABLE IF NOT EXISTS _apimacro_state (macro text NOT NULL, key text NOT NULL,
                value text NOT NULL, updated double precision NOT NULL, PRIMARY KEY (macro, key))
            """)
        try session.execute(
            """
            CREATE TABLE IF NOT EXISTS _apimacro_state_versions (macro text PRIMARY KEY,
                version bigint NOT NULL)
            """)
    }

    /// The entries of `macro` (every macro's when nil) and the macro's version (0: never committed),
    /// read in one snapshot.
    static func read(_ connection: PostgresConnection, macro: String?) throws -> (
        entries: [StateDatabase.Entry], version: Int64
    ) {
        try prepare(connection)
        return try connection.transaction { session in
            try session.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            let sql = "SELECT macro, key, value, updated FROM _apimacro_state"
            let rows =
                try macro.map { try session.execute(sql + " WHERE macro = $1 ORDER BY key", [$0]).rows }
                ?? session.execute(sql + " ORDER BY macro, key").rows
            var version: Int64 = 0
            if let macro {
                let found = try session.execute(
                    "SELECT version FROM _apimacro_state_versions WHERE macro = $1", [macro]
                ).rows
                version = found.first?.first.flatMap { $0.flatMap { Int64($0) } } ?? 0
            }
            let entries = rows.map { row in
                StateDatabase.Entry(
                    macro: row[0] ?? "", key: row[1] ?? "", json: row[2] ?? "null",
                    updated: Double(row[3] ?? "0") ?? 0)
            }
            return (entries, version)
        }
    }

    /// Takes `macro`'s state lock for the rest of the open transaction of `session` and checks
    /// that its version is still `expected` (nil: whatever it is); returns the version now.
    ///
    /// `keys`: the keys this run changed, for the message.
    ///
    /// Held from here to the commit, so no other run commits the macro's state in between: what
    /// this transaction commits inside it (rows elsewhere) is committed only by the
    /// compare-and-set's winner. The lock is the macro's own (an advisory lock on its name, which
    /// also covers a first commit, whose version row does not exist yet to lock), so runs of other
    /// macros commit meanwhile. The tables exist: `prepare` made them when the run started.
    ///
    /// - Throws: `StoreError` (`.conflict`) when another run committed the state since `expected`.
    static func claim(_ session: PostgresSession, macro: String, expected: Int64?, keys: [String] = []) throws
        -> Int64
    {
        try PostgresUpsert.lock(session, "_apimacro_state:" + macro)
        let current =
            try session.execute(
                "SELECT version FROM _apimacro_state_versions WHERE macro = $1 FOR UPDATE", [macro]
            ).rows.first?.first.flatMap { $0.flatMap { Int64($0) } } ?? 0
        if let expected, current != expected {
            throw StateDatabase.conflict(macro: macro, expected: expected, current: current, keys: keys)
        }
        return current
    }

    /// Moves `macro`'s version on from `current` (what `claim` returned in the same transaction)
    /// and writes `changes`, in the open transaction of `session`; returns the new version.
    static func write(
        _ session: PostgresSession, macro: String, changes: [(key: String, json: String?)], current: Int64, now: Double
    ) throws -> Int64 {
        let next = current + 1
        try session.execute(
            """
            INSERT INTO _apimacro_state_versions (macro, version) VALUES ($1, $2)
            ON CONFLICT (macro) DO UPDATE SET version = EXCLUDED.version
            """, [macro, String(next)])
        for (key, json) in changes {
            if let json {
                try session.execute(
                    """
                    INSERT INTO _apimacro_state (macro, key, value, updated) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (macro, key) DO UPDATE SET value = EXCLUDED.value, updated = EXCLUDED.updated
                    """, [macro, key, json, "\(now)"])
            } else {
                try session.execute("DELETE FROM _apimacro_state WHERE macro = $1 AND key = $2", [macro, key])
            }
        }
        return next
    }

    /// Removes `macro`'s state (only `key` when given); returns how many entries went.
    ///
    /// Moves the version on, so a run that read the state before fails rather than write over the reset.
    static func reset(_ connection: PostgresConnection, macro: String, key: String?) throws -> Int {
        try prepare(connection)
        return try connection.transaction { session in
            let removed: Int
            if let key {
                removed = try session.execute(
                    "DELETE FROM _apimacro_state WHERE macro = $1 AND key = $2", [macro, key]
                ).affected
            } else {
                removed = try session.execute("DELETE FROM _apimacro_state WHERE macro = $1", [macro]).affected
            }
            if removed > 0 {
                let current = try claim(session, macro: macro, expected: nil)
                _ = try write(session, macro: macro, changes: [], current: current, now: Date().timeIntervalSince1970)
            }
            return removed
        }
    }
}
