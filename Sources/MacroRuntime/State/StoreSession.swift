import Platform
import Store
import Synchronization
import WebAPI

/// The state and rows of the macro running now: which state it has (its key), its state lock
/// once `apimacro.state` is first read, and a `RunTransaction` holding its changes until the run
/// commits (exit 0), or forgets them (any other ending).
final class StoreSession: Sendable {
    /// Every macro's state, under `$APIMACRO_HOME`.
    let state: StateDatabase
    /// How long the lock and a locked database are waited for: `--timeout`, else 60 s.
    let wait: Double
    /// `--timeout`, if given.
    let timeout: Double?
    /// `APIMACRO_DATABASE_URL`: the PostgreSQL database `apimacro.output(rows, table=…)` writes
    /// to without `to=`.
    let databaseURL: String?
    /// Why `APIMACRO_STATE` or `APIMACRO_DATABASE_URL` cannot be used, if they cannot.
    let locationProblem: String?

    /// Where state and rows live by `settings`: `APIMACRO_STATE` (unset, empty or `sqlite`:
    /// the home's SQLite file; a `postgresql://` URL; `redis`: the shared-state server,
    /// `APIMACRO_SHARED_STATE`) and `APIMACRO_DATABASE_URL` (a `postgresql://` URL), with the
    /// reason when either is not usable.
    static func location(_ settings: Settings) -> (
        state: String?, redis: SharedStateAddress?, database: String?, problem: String?
    ) {
        let environment = settings.environment
        var problem: String?
        var state: String?
        var redis: SharedStateAddress?
        let stateSetting = environment["APIMACRO_STATE"]?.trimmingWhitespace() ?? ""
        if PostgresURL.isPostgres(stateSetting) {
            state = stateSetting
        } else if stateSetting.lowercased() == "redis" {
            redis = settings.sharedState
            if redis == nil {
                problem =
                    "APIMACRO_STATE=redis keeps macros' state on the shared-state server, but none is set: set "
                    + "APIMACRO_SHARED_STATE (or [shared] redis in config.toml) to redis://host:port/db, "
                    + "or unset APIMACRO_STATE for the home's SQLite file"
            }
        } else if !stateSetting.isEmpty, stateSetting.lowercased() != "sqlite" {
            problem =
                "APIMACRO_STATE must be sqlite (the default: $APIMACRO_HOME/state.db), a postgresql:// URL or redis "
                + "(the shared-state server), not " + String(reflecting: PostgresURL.redacted(stateSetting))
        }
        var database: String?
        if let url = environment["APIMACRO_DATABASE_URL"]?.trimmingWhitespace(), !url.isEmpty {
            if PostgresURL.isPostgres(url) {
                database = url
            } else {
                problem =
                    problem
                    ?? "APIMACRO_DATABASE_URL must be a postgresql://user:password@host:port/database URL, not "
                    + String(reflecting: PostgresURL.redacted(url))
            }
        }
        return (state, redis, database, problem)
    }

    /// Checks, before the macro runs (and so before any request), that `APIMACRO_STATE` and
    /// `APIMACRO_DATABASE_URL` are usable and their servers (PostgreSQL, Redis) answer.
    ///
    /// - Throws: `MacroError` naming the setting and the server (its password redacted).
    func checkLocations() throws {
        if let locationProblem { throw MacroError(locationProblem) }
        do {
            try state.check(wait: wait)
        } catch let error as StoreError {
            throw MacroError("APIMACRO_STATE: \(error.description)")
        }
        do {
            if let databaseURL { _ = try PostgresConnection.shared(databaseURL, timeout: wait) }
        } catch let error as StoreError {
            throw MacroError("APIMACRO_DATABASE_URL: \(error.description)")
        }
    }

    /// `run --output FILE`'s destination.
    struct RunOutput: Sendable {
        let destination: Destination
        let key: [String]
        let mode: RunTransaction.Mode
    }

    private struct Current: Sendable {
        /// The state key, or why there is none (a message naming `--state-key`).
        var key: Result<String, MacroError> = .failure(MacroError(StoreSession.missingKey))
        var lock: MacroLock?
        /// How long a commit waits for the database.
        let wait: Double
        /// The run's pending changes, made by their first use: a run that stages and commits
        /// nothing makes none (and the next run's `begin` has none to destroy, whose generic
        /// parts the Swift runtime would first have to look up: 0.44 M instructions).
        var made: RunTransaction?
        var started = Date()
        var runOutput: RunOutput?

        /// The run's pending changes, made now if not yet.
        mutating func transaction() -> RunTransaction {
            if let made { return made }
            let transaction = RunTransaction(wait: wait)
            made = transaction
            return transaction
        }
    }

    private let current: Mutex<Current>

    /// What `apimacro.state` says without a key.
    static let missingKey =
        "apimacro.state needs a name for this macro's state: code from -c, standard input or the REPL has none; "
        + "give one with --state-key NAME"

    /// A session over `settings`' home.
    init(settings: Settings) {
        let location = Self.location(settings)
        state = StateDatabase(home: settings.home, postgres: location.state, redis: location.redis)
        databaseURL = location.database
        locationProblem = location.problem
        wait = settings.timeout ?? 60
        timeout = settings.timeout
        current = Mutex(Current(wait: settings.timeout ?? 60))
    }

    /// `run --output FILE`'s destination for the macro `name`: SQLite files take the macro's
    /// name as the table (characters that cannot be in an identifier become `_`), and `key`.
    ///
    /// - Throws: `MacroError` (exit 2) for an extension apimacro cannot write, a file that is not
    ///   SQLite or cannot be written, a key that is not an identifier.
    static func runOutput(path: String, key: String?, macro name: String, settings: Settings) throws -> RunOutput {
        do {
            var table = String(name.map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII ? $0 : "_" })
            if table.first?.isNumber ?? true { table = "_" + table }
            let destination = try Destination.parse(
                path: path, table: table, relativeTo: settings.workingDirectory, allowJSON: true)
            try destination.checkWritable()
            var keys: [String] = []
            if let key {
                guard destination.isTable else {
                    throw MacroError("--key is for a SQLite --output (FILE.db); \(path) is written whole")
                }
                try Identifier.check(key, what: "--key")
                keys = [key]
            }
            if destination.isTable {
                return RunOutput(destination: destination, key: keys, mode: .append)
            }
            return RunOutput(destination: destination, key: [], mode: .replace)
        } catch let error as StoreError {
            throw MacroError("--output \(PostgresURL.redacted(path)): \(error.description)")
        }
    }

    /// Starts a run with state key `key` (nil: none, and `apimacro.state` says `missing`) and
    /// `--output` destination `runOutput`, forgetting anything a previous run left.
    func begin(key: String?, runOutput: RunOutput? = nil, missing: String = StoreSession.missingKey) {
        current.withLock { current in
            current = Current(wait: wait, runOutput: runOutput)
            current.key = key.map { .success($0) } ?? .failure(MacroError(missing))
        }
    }

    /// Where `apimacro.output` writes when `run --output FILE` is given, with its upsert key.
    var runOutput: RunOutput? { current.withLock { $0.runOutput } }

    /// The run's state key, or the error that says how to give one.
    func key() throws -> String {
        try current.withLock { try $0.key.get() }
    }

    /// Takes the state lock (once per run, waiting for another run of the macro) and reads the
    /// stored state: each key's JSON text.
    ///
    /// Call with the GIL released.
    ///
    /// `waiting` is told once when another run holds the lock.
    func open(waiting: @escaping @Sendable (String) -> Void) async throws -> [(key: String, json: String)] {
        let key = try self.key()
        if current.withLock({ $0.lock == nil }) {
            let lock = try await MacroLock.acquire(macro: key, folder: state.folder, wait: lockWait()) {
                waiting(key)
            }
            current.withLock { $0.lock = lock }
        }
        let read = try state.read(macro: key, wait: wait)
        if state.isShared { transaction.readStateVersion(read.version) }
        return read.entries.map { ($0.key, $0.json) }
    }

    /// How long to wait for the state lock now: 60 s; with `--timeout`, until a little before the
    /// run's deadline, so that the run ends with the lock's message rather than the timeout's.
    private func lockWait() -> Double {
        guard let timeout else { return wait }
        let margin = min(1.0, timeout / 4)
        return max(0.05, timeout - margin - Date().timeIntervalSince(started))
    }

    /// The run's pending changes.
    var transaction: RunTransaction { current.withLock { $0.transaction() } }

    /// Whether the run staged nothing to commit (making no transaction to find out).
    var isEmpty: Bool { current.withLock { $0.made?.isEmpty ?? true } }

    /// Commits what is staged (an early `apimacro.state.commit()`, or the end of a successful
    /// run, when `run` is the run's record).
    @discardableResult
    func commit(run: RunTransaction.RunRecord? = nil) throws -> Int {
        let (transaction, key) = current.withLock { ($0.transaction(), try? $0.key.get()) }
        return try transaction.commit(state: state, macro: key, run: run)
    }

    /// When the run started.
    var started: Date { current.withLock { $0.started } }

    /// Ends the run: forgets what was not committed and lets the state lock go.
    func end() {
        current.withLock { current in
            current.made?.discard()
            current.lock = nil
        }
    }
}

extension StoreSession {
    /// The state key of a run of `source`: `--state-key`, else a macro file's name without `.py`
    /// (`plugin/macro` for a macro in a plugin's `macros/` folder); nil for `-c`, standard
    /// input and `-m` without `--state-key`.
    ///
    /// A REPL's `:run` (`inSession`) runs a macro file with the file's own state, not the
    /// session's `--state-key`.
    static func key(for source: MacroSource, settings: Settings, inSession: Bool = false) -> String? {
        if let key = settings.stateKey, !inSession || !source.isFile { return key }
        guard case .file(let file) = source else { return nil }
        let name = file.deletingPathExtension().lastPathComponent
        let folder = file.deletingLastPathComponent()
        let plugin = folder.deletingLastPathComponent()
        let manifest = plugin.appendingPathComponent("plugin.toml")
        guard folder.lastPathComponent == "macros",
            let text = try? String(contentsOf: manifest, encoding: .utf8)
        else { return name }
        // The manifest's `name = "..."` (checked by PluginHost when it loaded), else its folder's name.
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
            if parts.count == 2, parts[0] == "name", parts[1].count > 2, parts[1].hasPrefix("\""),
                let end = parts[1].dropFirst().firstIndex(of: "\"")
            {
                return "\(parts[1][parts[1].index(after: parts[1].startIndex)..<end])/\(name)"
            }
        }
        return "\(plugin.lastPathComponent)/\(name)"
    }
}
