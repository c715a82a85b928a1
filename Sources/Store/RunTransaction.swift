public import Platform
import Spawning
import Synchronization
import WebAPI

/// What one run changes, held until it commits: its state's changed keys and the rows bound
/// for each destination.
///
/// `commit` writes them, the rows first and the state last (see `commit`); until then no file
/// is touched, so a run that fails leaves neither rows nor an advanced bookmark.
public final class RunTransaction: Sendable {
    /// How rows meet what a destination holds.
    public enum Mode: String, Sendable {
        /// Upsert by the key (SQLite) or add at the end (CSV, JSON Lines).
        case append
        /// Replace the table's rows or the file's content.
        case replace
    }

    /// A run's line in `_apimacro_runs`.
    public struct RunRecord: Sendable {
        public var macro: String
        public var started: Date
        public var finished: Date
        public var exit: Int32
        public var requests: Int
        public var cacheHits: Int

        /// A run record.
        public init(macro: String, started: Date, finished: Date, exit: Int32, requests: Int, cacheHits: Int) {
            self.macro = macro
            self.started = started
            self.finished = finished
            self.exit = exit
            self.requests = requests
            self.cacheHits = cacheHits
        }
    }

    private struct Staged {
        var state: [String: String?] = [:]
        var stateOrder: [String] = []
        var tables: [PendingTable] = []
        var postgresTables: [PendingPostgresTable] = []
        var files: [PendingFile] = []
        var rowsWritten = 0
    }

    private let staged = Mutex(Staged())
    private let connections = Mutex<[URL: SQLiteDatabase]>([:])
    /// The version of the macro's state this run read from PostgreSQL (compare-and-set at the commit).
    private let stateVersion = Mutex<Int64?>(nil)
    /// How long a commit waits for another writer's lock.
    public let wait: Double

    /// An empty transaction whose commit waits up to `wait` seconds for a locked database.
    public init(wait: Double) {
        self.wait = wait
    }

    /// Whether anything waits to be committed.
    public var isEmpty: Bool {
        staged.withLock { $0.state.isEmpty && $0.tables.isEmpty && $0.postgresTables.isEmpty && $0.files.isEmpty }
    }

    /// Remembers the version of the macro's state read from PostgreSQL: the commit writes the
    /// state only if it is still that version.
    public func readStateVersion(_ version: Int64?) {
        stateVersion.withLock { $0 = version }
    }

    /// Rows committed so far by this run.
    public var rowsWritten: Int { staged.withLock { $0.rowsWritten } }

    /// Sets the state changes to commit: each key's JSON text, nil to delete it (replacing what
    /// was staged for the same keys).
    public func stageState(_ changes: [(key: String, json: String?)]) {
        staged.withLock { staged in
            for (key, json) in changes {
                if staged.state.updateValue(json, forKey: key) == nil, !staged.stateOrder.contains(key) {
                    staged.stateOrder.append(key)
                }
            }
        }
    }

    /// Adds `rows` for `destination`, checked now against what the file holds and the rows
    /// staged before, so a bad row fails where it was given, before anything is written.
    ///
    /// - Parameters:
    ///   - rows: the rows.
    ///   - destination: where they go.
    ///   - key: SQLite only: the key columns (upsert); empty appends.
    ///   - mode: append (upsert) or replace.
    /// - Throws: `StoreError`: a key or column that is not usable, a type clash naming its column,
    ///   a file that cannot be written or is not SQLite, a CSV column its header lacks.
    public func stage(_ rows: [Row], to destination: Destination, key: [String] = [], mode: Mode = .append) throws {
        for name in key { try Identifier.check(name, what: "key") }
        // Each name once: most rows share theirs.
        var checked: Set<String> = []
        for (index, row) in rows.enumerated() {
            for field in row.fields where checked.insert(field.name).inserted {
                if field.name.isEmpty || field.name.utf8.contains(0) {
                    throw StoreError.invalid("row \(index + 1) has a field with an empty name or a NUL in its name")
                }
            }
        }
        try destination.checkWritable()
        switch destination {
        case .sqlite(let file, let table):
            try stageTable(rows, file: file, table: table, key: key, mode: mode)
        case .postgres(let url, let table):
            try stagePostgres(rows, url: url, table: table, key: key, mode: mode)
        case .csv, .jsonLines, .json:
            guard key.isEmpty else {
                throw StoreError.invalid("key= is for SQLite tables; \(destination.file.lastPathComponent) has none")
            }
            let isJSON = destination == .json(file: destination.file)
            try stageFile(rows, destination: destination, mode: isJSON ? .replace : mode)
        }
    }

    private func stageTable(_ rows: [Row], file: URL, table: String, key: [String], mode: Mode) throws {
        // Checked against the file now without waiting: the macro holds the GIL here. A file
        // another process holds locked is checked at the commit instead, which waits for it.
        var existing: [(name: String, type: ColumnType)]?
        do {
            existing = try Self.columns(of: table, in: file, wait: 0)
        } catch let error as StoreError where error.kind == .locked {
            existing = nil
        }
        try staged.withLock { staged in
            try PendingTable.add(
                rows, to: &staged.tables, place: file, table: table, key: key, mode: mode, existing: existing,
                shownPlace: "in \(file.lastPathComponent)")
        }
    }

    /// Checks `rows` against the PostgreSQL table as it is now (connecting, so that a server that
    /// cannot be reached fails here, before the run goes on) and the rows staged before.
    private func stagePostgres(_ rows: [Row], url: String, table: String, key: [String], mode: Mode) throws {
        let connection = try PostgresConnection.shared(url, timeout: wait)
        let existing = try connection.withSession { try PostgresUpsert.columns($0, table: table) }
        try staged.withLock { staged in
            try PendingPostgresTable.add(
                rows, to: &staged.postgresTables, place: url, table: table, key: key, mode: mode, existing: existing,
                shownPlace: "at \(connection.shown)")
        }
    }

    private func stageFile(_ rows: [Row], destination: Destination, mode: Mode) throws {
        var header: [String]?
        if case .csv(let file) = destination, mode == .append { header = try CSVText.header(of: file) }
        try staged.withLock { staged in
            var pending: PendingFile
            let index = staged.files.firstIndex(where: { $0.destination == destination })
            if let index {
                pending = staged.files[index]
                if mode == .replace { pending.mode = .replace }
            } else {
                pending = PendingFile(
                    destination: destination, mode: mode, columns: header ?? [], fixedColumns: header != nil)
            }
            var known = Set(pending.columns)
            for row in rows {
                for field in row.fields where !known.contains(field.name) {
                    if pending.fixedColumns {
                        throw StoreError.invalid(
                            "column \(String(reflecting: field.name)) is not in the header of \(destination.file.path); "
                                + "nothing was written. Write to a new file, or use mode=\"replace\"")
                    }
                    known.insert(field.name)
                    pending.columns.append(field.name)
                }
            }
            pending.rows += rows
            if let index { staged.files[index] = pending } else { staged.files.append(pending) }
        }
    }

    /// Forgets everything staged (a failed run).
    public func discard() {
        staged.withLock { staged in
            let written = staged.rowsWritten
            staged = Staged()
            staged.rowsWritten = written
        }
    }

    /// Writes everything staged: the state changes of `macro` into `state` and the rows into
    /// their destinations, the CSV and JSON Lines files beside them (appended bytes cut off
    /// again and replacements not put in place when the commit fails); `run`, when given, adds
    /// a line to `_apimacro_runs` of each SQLite and PostgreSQL destination.
    ///
    /// The state is committed last, and its compare-and-set checked first: the SQLite
    /// destination files are one transaction; each PostgreSQL database one transaction, committed
    /// inside the SQLite one, just before it; then the state: in its own SQLite file, one
    /// transaction after the rows'; in PostgreSQL, its database's transaction holds the rest
    /// inside it, its version locked from the start; in Redis, the version is compared before
    /// anything is written and set, by one script, once every row is committed. So a run that
    /// stops between two commits leaves rows without the state that points past them, never the
    /// reverse: the next run reads the old bookmark and upserts the same rows again (see
    /// docs/guide/state.md).
    ///
    /// Returns the rows written. Staged work is cleared whether it succeeds or not.
    ///
    /// - Throws: `StoreError`: a locked database past `wait`, a full disk, a file that cannot be
    ///   written, a type clash found against a table another process changed meanwhile, the
    ///   state committed by another run since this one read it.
    @discardableResult
    public func commit(state: StateDatabase?, macro: String?, run: RunRecord? = nil) throws -> Int {
        let work = staged.withLock { staged in
            let work = staged
            staged = Staged()
            staged.rowsWritten = work.rowsWritten
            return work
        }
        let stateChanges: [(key: String, json: String?)] = work.stateOrder.compactMap { key in
            guard let value = work.state[key] else { return nil }
            return (key, value)
        }
        let writesState = !stateChanges.isEmpty && macro != nil
        var sqliteFiles: [URL] = []
        for table in work.tables where !sqliteFiles.contains(table.file) { sqliteFiles.append(table.file) }
        let stateURL = writesState ? state?.postgres : nil
        let stateRedis = writesState ? state?.redis : nil
        // PostgreSQL: the state's database first (outermost), then the others.
        var urls: [String] = stateURL.map { [$0] } ?? []
        for url in work.postgresTables.map(\.url) where !urls.contains(url) { urls.append(url) }
        let expected = stateVersion.withLock { $0 }
        let postgres = PostgresWork(
            tables: work.postgresTables, stateURL: stateURL, macro: macro, stateChanges: stateChanges,
            expected: expected, run: run)
        var prepared: [PreparedFile] = []
        var finished = false
        do {
            if let stateRedis, let macro {
                // Compared before anything is written: a run that lost the race writes nothing.
                let current = try RedisState.version(stateRedis, timeout: wait, macro: macro)
                if let expected, current != expected {
                    throw StateDatabase.conflict(
                        macro: macro, expected: expected, current: current, keys: stateChanges.map(\.key))
                }
            }
            for file in work.files { prepared.append(try PreparedFile(file)) }
            var written = work.files.reduce(0) { $0 + $1.rows.count }
            let stateFile = !writesState || state?.isShared == true ? nil : state
            var newVersion: Int64?
            // The SQLite destination files: one transaction (PostgreSQL's rows inside it, unless
            // the state's PostgreSQL transaction holds it).
            let sqlite = { (postgresInside: Bool) throws -> Int in
                let inner = { () throws -> Int in
                    postgresInside ? try self.writePostgres(urls[...], postgres, innermost: { 0 }).0 : 0
                }
                guard let main = sqliteFiles.first else { return try inner() }
                return try self.writeDatabases(
                    main: main, sqliteFiles: sqliteFiles, tables: work.tables, run: run, inner: inner)
            }
            if stateURL != nil {
                // The state's PostgreSQL transaction outermost: the SQLite one commits inside it.
                let (count, version) = try writePostgres(urls[...], postgres, innermost: { try sqlite(false) })
                newVersion = version
                written += count
            } else {
                written += try sqlite(true)
            }
            for file in prepared { try file.finish() }
            finished = true
            let idempotent =
                work.tables.allSatisfy { !$0.key.isEmpty || $0.mode == .replace }
                && work.postgresTables.allSatisfy { !$0.key.isEmpty || $0.mode == .replace }
                && work.files.allSatisfy { $0.mode == .replace }
            let committed = written > 0 ? CommittedRows(count: written, idempotent: idempotent) : nil
            if let stateFile, let macro {
                try writeState(stateFile, macro: macro, changes: stateChanges, committed: committed)
            }
            if let stateRedis, let macro {
                newVersion = try RedisState.write(
                    stateRedis, timeout: wait, macro: macro, changes: stateChanges, expected: expected,
                    now: Date().timeIntervalSince1970, committed: committed)
            }
            if let newVersion { stateVersion.withLock { $0 = newVersion } }
            staged.withLock { $0.rowsWritten += written }
            return written
        } catch {
            if !finished { for file in prepared { file.undo() } }
            throw error
        }
    }

    /// What a commit writes into PostgreSQL.
    private struct PostgresWork {
        var tables: [PendingPostgresTable]
        var stateURL: String?
        var macro: String?
        var stateChanges: [(key: String, json: String?)]
        var expected: Int64?
        var run: RunRecord?
    }

    /// Writes `work` into the databases `urls`, one transaction each, nested so that all commit
    /// only once every one has been written and `innermost` has run (and committed) inside the
    /// last; returns the rows written and the state's new version.
    ///
    /// The state's database (`work.stateURL`) has its version claimed (locked and compared)
    /// before anything else is written, and the state written after everything nested in it.
    private func writePostgres(
        _ urls: ArraySlice<String>, _ work: PostgresWork, innermost: () throws -> Int
    ) throws -> (Int, Int64?) {
        guard let url = urls.first else { return (try innermost(), nil) }
        let connection = try PostgresConnection.shared(url, timeout: wait)
        return try connection.transaction { session in
            var claimed: Int64?
            if url == work.stateURL, let macro = work.macro {
                claimed = try PostgresState.claim(
                    session, macro: macro, expected: work.expected, keys: work.stateChanges.map(\.key))
            }
            var written = 0
            let tables = work.tables.filter { $0.url == url }.sorted { $0.table < $1.table }
            for table in tables {
                written += try PostgresUpsert.write(
                    session, table: table.table, key: table.key, rows: table.rows, replace: table.mode == .replace,
                    staged: table.plan)
            }
            if let run = work.run, !tables.isEmpty { try PostgresUpsert.recordRun(session, run: run, rows: written) }
            let (more, otherVersion) = try writePostgres(urls.dropFirst(), work, innermost: innermost)
            var version: Int64?
            if let claimed, let macro = work.macro {
                version = try PostgresState.write(
                    session, macro: macro, changes: work.stateChanges, current: claimed,
                    now: Date().timeIntervalSince1970)
            }
            return (written + more, version ?? otherVersion)
        }
    }

    /// The destination files' one transaction: `main` opened, the other SQLite files attached,
    /// `inner` run inside it (and so committed before it).
    private func writeDatabases(
        main: URL, sqliteFiles: [URL], tables: [PendingTable], run: RunRecord?, inner: () throws -> Int
    ) throws -> Int {
        var schemas: [URL: String] = [main: "main"]
        for (offset, file) in sqliteFiles.enumerated() where file != main { schemas[file] = "d\(offset + 1)" }
        let named = ([main] + sqliteFiles.filter { $0 != main }).map(\.path).joined(separator: " or ")
        return try StoreFailure.mapping(file: main, wait: wait, named: named) {
            let database = try connection(main, ownerOnly: false)
            return try database.withConnection { db in
                for (file, schema) in schemas where schema != "main" {
                    try db.execute("ATTACH DATABASE ? AS \(schema)", [.text(file.path)])
                }
                var written = 0
                do {
                    try db.transaction(.immediate) {
                        var perFile: [URL: Int] = [:]
                        for table in tables {
                            guard let schema = schemas[table.file] else { continue }
                            let count = try SQLiteUpsert.write(
                                db, schema: schema, table: table.table, key: table.key, rows: table.rows,
                                replace: table.mode == .replace, staged: table.plan)
                            perFile[table.file, default: 0] += count
                            written += count
                        }
                        if let run {
                            for file in sqliteFiles {
                                guard let schema = schemas[file] else { continue }
                                try SQLiteUpsert.recordRun(db, schema: schema, run: run, rows: perFile[file] ?? 0)
                            }
                        }
                        written += try inner()
                    }
                } catch {
                    for (_, schema) in schemas where schema != "main" {
                        try? db.execute("DETACH DATABASE \(schema)")
                    }
                    throw error
                }
                for (_, schema) in schemas where schema != "main" {
                    try db.execute("DETACH DATABASE \(schema)")
                }
                return written
            }
        }
    }

    /// The state file's transaction (WAL, no fsync: see `StateDatabase.open`), the last of a
    /// commit with the state in SQLite; `committed`: the rows committed before it, for the message
    /// when it fails.
    private func writeState(
        _ state: StateDatabase, macro: String, changes: [(key: String, json: String?)], committed: CommittedRows?
    ) throws {
        do {
            try StoreFailure.mapping(file: state.file, wait: wait) {
                let database = try connection(state.file, ownerOnly: true)
                try database.withConnection { db in
                    try db.transaction(.immediate) {
                        try StateDatabase.write(db, macro: macro, changes: changes, now: Date().timeIntervalSince1970)
                    }
                }
            }
        } catch let error as StoreError {
            guard let committed else { throw error }
            let reason = error.description.prefix { $0 != ";" }
            throw StoreError(error.kind, "\(reason): the state is as the last run left it, but \(committed)")
        }
    }

    /// The connection to `file`, opened by this run's first commit into it and kept for the
    /// next (`apimacro.state.commit()` after each page opens no file again).
    private func connection(_ file: URL, ownerOnly: Bool) throws -> SQLiteDatabase {
        if let open = connections.withLock({ $0[file] }) { return open }
        let database = try StateDatabase.open(file, wait: wait, ownerOnly: ownerOnly, stateFile: ownerOnly)
        connections.withLock { $0[file] = database }
        return database
    }

    /// The columns of `table` in the SQLite file `file`, or nil when the file or the table does not exist.
    static func columns(of table: String, in file: URL, wait: Double) throws -> [(name: String, type: ColumnType)]? {
        guard FileManager.default.fileExists(atPath: file.path),
            let size = try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int, size > 0
        else { return nil }
        return try StoreFailure.mapping(file: file, wait: wait) {
            let database = try StateDatabase.open(file, wait: wait, readOnly: true)
            return try database.withConnection { db in try SQLiteUpsert.columns(db, schema: "main", table: table) }
        }
    }
}

/// An upsert's plan, SQLite's or PostgreSQL's, as staging sees it.
protocol UpsertPlan: Sendable {
    associatedtype Column: PlannedType
    /// Every column the rows use and its type.
    var columns: [(name: String, type: Column)] { get }
    /// Plans writing `rows` (the first numbered `firstRow + 1`) into `table` whose columns are
    /// `existing` (nil: no such table).
    static func plan(
        table: String, key: [String], existing: [(name: String, type: Column)]?, rows: [Row], firstRow: Int
    ) throws -> Self
}

extension TablePlan: UpsertPlan {}
extension PostgresPlan: UpsertPlan {}

/// Rows staged for one table: in a SQLite file (`Place` its URL) or a PostgreSQL database (its URL text).
private struct Pending<Place: Equatable & Sendable, Plan: UpsertPlan>: Sendable {
    var place: Place
    var table: String
    var key: [String]
    var mode: RunTransaction.Mode
    var rows: [Row] = []
    var plan: Plan

    /// Adds `rows` for `table` at `place` to `pending`: planned against the rows staged before for
    /// it, or for the first against `existing` (the table as it is now; nil: none), whose place
    /// `shownPlace` names in messages.
    ///
    /// - Throws: `StoreError` (`.invalid`): another key than before, a key the table lacks, a
    ///   value its column cannot hold.
    static func add(
        _ rows: [Row], to pending: inout [Pending], place: Place, table: String, key: [String],
        mode: RunTransaction.Mode, existing: [(name: String, type: Plan.Column)]?, shownPlace: String
    ) throws {
        guard let index = pending.firstIndex(where: { $0.place == place && $0.table == table }) else {
            if let existing, !key.isEmpty,
                let missing = key.first(where: { name in !existing.contains { $0.name == name } })
            {
                throw StoreError.invalid(
                    "table \(String(reflecting: table)) \(shownPlace) has no column \(String(reflecting: missing)) "
                        + "to use as its key")
            }
            let plan = try Plan.plan(table: table, key: key, existing: existing, rows: rows, firstRow: 0)
            pending.append(Pending(place: place, table: table, key: key, mode: mode, rows: rows, plan: plan))
            return
        }
        var entry = pending[index]
        guard entry.key == key else {
            throw StoreError.invalid(
                "table \(String(reflecting: table)) was given key \(entry.key) earlier in this run, now \(key)")
        }
        if mode == .replace { entry.mode = .replace }
        entry.plan = try Plan.plan(
            table: table, key: key, existing: entry.plan.columns, rows: rows, firstRow: entry.rows.count)
        entry.rows += rows
        pending[index] = entry
    }
}

/// Rows staged for a table in a SQLite file.
private typealias PendingTable = Pending<URL, TablePlan>
/// Rows staged for a table in a PostgreSQL database.
private typealias PendingPostgresTable = Pending<String, PostgresPlan>

extension Pending where Place == URL {
    var file: URL { place }
}

extension Pending where Place == String {
    var url: String { place }
}

/// A CSV, JSON Lines or JSON file's part of a commit: appended in place (and cut back to its
/// old length if the commit fails) or written beside it and renamed over it once the commit holds.
private final class PreparedFile {
    let target: URL
    /// Append: the file's length before.
    var originalLength: UInt64?
    /// Whether the file existed before an append.
    var existed = false
    /// Replace: the temporary file to rename over `target`.
    var temporary: URL?

    init(_ file: PendingFile) throws {
        target = file.destination.file
        let text = file.render()
        if file.mode == .replace {
            let temporary = target.deletingLastPathComponent().appendingPathComponent(
                ".\(target.lastPathComponent).apimacro-\(getpid())")
            self.temporary = temporary
            guard FileManager.default.createFile(atPath: temporary.path, contents: Data(text.body.utf8)) else {
                throw StoreError.io("cannot write \(temporary.path); nothing was written")
            }
        } else {
            existed = FileManager.default.fileExists(atPath: target.path)
            // O_CREAT with 0666: the umask decides, as for a file Foundation's createFile makes.
            let descriptor = Glibc.open(target.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else {
                throw StoreError.io(
                    "cannot write \(target.path): \(String(cString: strerror(errno))); nothing was written")
            }
            defer { Glibc.close(descriptor) }
            let end = lseek(descriptor, 0, SEEK_END)
            // A failure here is not in the commit's list to undo: what this file got goes now.
            let existed = existed
            func failed() -> StoreError {
                let error = Self.failure(target)
                if existed { _ = ftruncate(descriptor, max(0, end)) } else { unlink(target.path) }
                return error
            }
            guard end >= 0 else { throw failed() }
            originalLength = UInt64(end)
            let prefix = end == 0 ? text.header : ""
            guard DescriptorIO.writeAll(descriptor, Array((prefix + text.body).utf8)) else { throw failed() }
            guard fsync(descriptor) == 0 else { throw failed() }
        }
    }

    /// The error of a failed append, in errno's words (the file is cut back by `undo`).
    private static func failure(_ target: URL) -> StoreError {
        StoreError.io("cannot write \(target.path): \(String(cString: strerror(errno))); nothing was written")
    }

    /// Puts a replacement in place.
    func finish() throws {
        guard let temporary else { return }
        if rename(temporary.path, target.path) != 0 {
            throw StoreError.io("cannot replace \(target.path): \(String(cString: strerror(errno)))")
        }
        self.temporary = nil
    }

    /// Takes back what was written.
    func undo() {
        if let temporary { try? FileManager.default.removeItem(at: temporary) }
        if let originalLength {
            if !existed {
                try? FileManager.default.removeItem(at: target)
            } else {
                _ = truncate(target.path, off_t(originalLength))
            }
        }
    }
}

/// Rows staged for a CSV, JSON Lines or JSON file.
private struct PendingFile {
    var destination: Destination
    var mode: RunTransaction.Mode
    var columns: [String]
    /// Whether `columns` came from the existing file's header (then no other column fits).
    var fixedColumns: Bool
    var rows: [Row] = []

    /// The file's text: its header (written only into an empty file) and the rows.
    func render() -> (header: String, body: String) {
        switch destination {
        case .csv:
            let header = CSVText.line(columns)
            let body = rows.map { row in CSVText.line(columns.map { row[$0]?.csvText ?? "" }) }.joined()
            return mode == .replace ? ("", header + body) : (header, body)
        case .jsonLines:
            return ("", rows.map { RowJSON.object($0) + "\n" }.joined())
        case .json:
            return ("", "[" + rows.map { "\n" + RowJSON.object($0) }.joined(separator: ",") + "\n]\n")
        case .sqlite, .postgres:
            return ("", "")
        }
    }
}

/// Rows as JSON text (strings through WebAPI's `JSONText`).
enum RowJSON {
    /// `row` as one compact JSON object, fields in order.
    static func object(_ row: Row) -> String {
        "{" + row.fields.map { Cell.jsonString($0.name) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
    }
}

/// CSV as `apimacro.output` writes it (Python's `csv` module's dialect: `,`, `"` quoting when
/// needed, `\r\n` line ends).
enum CSVText {
    /// One CSV line of `fields`.
    static func line(_ fields: [String]) -> String {
        fields.map { field in
            let special = field.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
            return special ? "\"" + field.replacing("\"", with: "\"\"") + "\"" : field
        }.joined(separator: ",") + "\r\n"
    }

    /// The column names in the first line of the CSV file `file`, or nil when it does not exist or is empty.
    static func header(of file: URL) throws -> [String]? {
        let descriptor = Glibc.open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        // The first 64 KiB hold the header line.
        let head = DescriptorIO.readPrefix(descriptor, count: 64 * 1024)
        guard !head.isEmpty else { return nil }
        let text = String(decoding: head, as: UTF8.self)
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            if quoted {
                if character == "\"" {
                    quoted = false
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                if !field.isEmpty { field.append(character) }
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else if character == "\n" || character == "\r\n" || character == "\r" {
                break
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }
}
