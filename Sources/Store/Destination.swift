public import Platform
import Spawning
import Synchronization

/// Where a run's rows go: a SQLite or PostgreSQL table (upserted), or a CSV, JSON Lines or JSON file.
public enum Destination: Sendable, Equatable, Hashable {
    case sqlite(file: URL, table: String)
    /// A table of the PostgreSQL database at `url` (`postgresql://…`).
    case postgres(url: String, table: String)
    case csv(file: URL)
    case jsonLines(file: URL)
    /// A JSON array: only whole (`run --output FILE.json`, which replaces FILE).
    case json(file: URL)

    /// The file written (for PostgreSQL, its URL with the password redacted).
    public var file: URL {
        switch self {
        case .sqlite(let file, _), .csv(let file), .jsonLines(let file), .json(let file): file
        case .postgres(let url, _): URL(string: PostgresURL.redacted(url)) ?? URL(fileURLWithPath: "/")
        }
    }

    /// Whether rows are upserted into a table (SQLite or PostgreSQL) rather than written to a file.
    public var isTable: Bool {
        switch self {
        case .sqlite, .postgres: true
        case .csv, .jsonLines, .json: false
        }
    }

    /// The extensions that make a SQLite destination.
    public static let sqliteExtensions: Set<String> = ["db", "sqlite", "sqlite3"]

    /// The destination for `path` by its extension: `.db`, `.sqlite` and `.sqlite3` are SQLite
    /// (`table` needed), `.csv`, `.jsonl` (or `.ndjson`) and, when `allowJSON`, `.json`.
    ///
    /// - Throws: `StoreError` (`.invalid`) for another extension, a SQLite file without a table, a
    ///   table that is not an identifier.
    public static func parse(path: String, table: String?, relativeTo directory: URL, allowJSON: Bool = false) throws
        -> Destination
    {
        guard !path.isEmpty else { throw StoreError.invalid("the output file's name is empty") }
        if PostgresURL.isPostgres(path) {
            guard let table else {
                throw StoreError.invalid(
                    "\(PostgresURL.redacted(path)) is a PostgreSQL database: name the table (table=\"stars\")")
            }
            try Identifier.check(table, what: "table")
            guard table.utf8.count <= 63 else {
                throw StoreError.invalid("table \(String(reflecting: table)) is longer than PostgreSQL's 63-byte names")
            }
            return .postgres(url: path, table: table)
        }
        let file =
            path.hasPrefix("/")
            ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
        let ext = file.pathExtension.lowercased()
        if sqliteExtensions.contains(ext) {
            guard let table else {
                throw StoreError.invalid("\(path) is a SQLite file: name the table (table=\"stars\")")
            }
            try Identifier.check(table, what: "table")
            return .sqlite(file: file, table: table)
        }
        switch ext {
        case "csv": return .csv(file: file)
        case "jsonl", "ndjson": return .jsonLines(file: file)
        case "json" where allowJSON: return .json(file: file)
        default:
            let kinds = allowJSON ? ".db, .sqlite, .csv, .jsonl or .json" : ".db, .sqlite, .csv or .jsonl"
            throw StoreError.invalid("cannot tell the format of \(path) from its extension: use \(kinds)")
        }
    }

    /// Checks, touching nothing, that the file can be written: its folder exists and is
    /// writable, the file (when it exists) is writable and, for SQLite, is a SQLite database.
    ///
    /// - Throws: `StoreError`: `.io` when it cannot be written, `.invalid` when it is not SQLite.
    public func checkWritable() throws {
        if case .postgres = self { return }
        let path = file.path
        let folder = file.deletingLastPathComponent().path
        var isFolder = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder { throw StoreError.io("\(path) is a folder, not a file") }
            guard access(path, W_OK) == 0 else {
                throw StoreError.io("cannot write \(path): permission denied; choose another file or fix its mode")
            }
            if case .sqlite = self { try Destination.checkSQLite(path) }
        } else {
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder else {
                throw StoreError.io("cannot write \(path): the folder \(folder) does not exist")
            }
            guard access(folder, W_OK) == 0 else {
                throw StoreError.io("cannot write \(path): the folder \(folder) is not writable")
            }
        }
    }

    /// The files this process has found to be SQLite (or empty): each is read once.
    ///
    /// Reading opens and closes a descriptor of the file, and closing any descriptor of a file
    /// drops every POSIX lock this process holds on it, SQLite's too: once a run has a connection
    /// to the file (a second `output(to=)` of it after an early commit), reading it again would
    /// take that connection's lock away (in WAL mode, the shared lock that tells another process
    /// closing the database that it is not the last).
    private static let knownSQLite = Mutex<Set<String>>([])

    /// Throws unless the file at `path` is empty or starts with SQLite's header.
    static func checkSQLite(_ path: String) throws {
        if knownSQLite.withLock({ $0.contains(path) }) { return }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError.io("cannot read \(path)") }
        defer { close(descriptor) }
        let head = DescriptorIO.readPrefix(descriptor, count: 16)
        guard head.isEmpty || head.elementsEqual("SQLite format 3\0".utf8) else {
            throw StoreError.invalid(
                "\(path) is not a SQLite database; it was left untouched. Name a new file, or remove this one")
        }
        knownSQLite.withLock { _ = $0.insert(path) }
    }
}
