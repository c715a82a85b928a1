import Platform
import WebAPI

/// A SQLite column's type as apimacro reads and makes it (its affinity).
public enum ColumnType: String, Sendable, Equatable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    /// NUMERIC affinity (a column someone else declared `NUMERIC`, `DECIMAL`, …): any number.
    case numeric = "NUMERIC"
    /// No type (BLOB affinity): anything.
    case any = ""

    /// The affinity of a declared type, by SQLite's own rules (section 3.1 of its datatype page).
    public init(declared: String) {
        let upper = declared.uppercased()
        if upper.contains("INT") {
            self = .integer
        } else if upper.contains("CHAR") || upper.contains("CLOB") || upper.contains("TEXT") {
            self = .text
        } else if upper.isEmpty || upper.contains("BLOB") {
            self = .any
        } else if upper.contains("REAL") || upper.contains("FLOA") || upper.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }

    /// Whether a value of type `value` may go into a column of this type: the same type, an
    /// integer into a REAL column (widened), any number into NUMERIC, anything into no type.
    func accepts(_ value: ColumnType) -> Bool {
        switch self {
        case .any: true
        case .numeric: value == .integer || value == .real
        case .real: value == .real || value == .integer
        default: value == self
        }
    }

    /// Words for messages.
    var shown: String { self == .any ? "no type" : rawValue }
}

extension ColumnType: PlannedType {
    init?(cell: Cell) {
        guard let type = cell.columnType else { return nil }
        self = type
    }

    static var untyped: ColumnType { .text }

    func accepts(_ cell: Cell) -> Bool { cell.columnType.map(accepts) ?? true }

    func widened(for type: ColumnType) -> ColumnType? { self == .integer && type == .real ? .real : nil }

    var sql: String { rawValue }
}

/// A destination's column type, as the planning SQLite's and PostgreSQL's upserts share
/// (`ColumnPlanner`) sees it.
protocol PlannedType: Equatable {
    /// The type a new column takes for `cell`; nil for null, which leaves it open.
    init?(cell: Cell)
    /// The type of a new column whose values were all null.
    static var untyped: Self { get }
    /// Whether `cell` may go into a column of this type.
    func accepts(_ cell: Cell) -> Bool
    /// The type a column of this type planned in this run (not yet in the table) becomes for a
    /// value of `type` it does not accept, if it widens (an integer column for a float).
    func widened(for type: Self) -> Self?
    /// Words for messages.
    var shown: String { get }
    /// The type in `CREATE TABLE` and `ADD COLUMN`.
    var sql: String { get }
    /// Checks field `name` of row `row` (a new column when `isNew`) before it is planned: what the
    /// destination cannot hold, beyond types.
    static func check(name: String, value: Cell, row: Int, isNew: Bool) throws
}

extension PlannedType {
    static func check(name: String, value: Cell, row: Int, isNew: Bool) throws {}
}

/// The planning of an upsert, the same for SQLite and PostgreSQL: which columns the rows need
/// and their types, given the table's columns now.
enum ColumnPlanner<Type: PlannedType> {
    typealias Columns = [(name: String, type: Type)]

    /// Plans writing `rows` (the first numbered `firstRow + 1`) into `table` whose columns are
    /// `existing` (nil: no such table): every column, existing ones first, then new ones in the
    /// order the rows name them; the new ones of an existing table (`added`).
    ///
    /// A new column takes its type from its first non-null value; a column planned here widens
    /// (`widened`) for a value it does not accept; a column whose values are all null is `untyped`.
    ///
    /// - Throws: `StoreError` (`.invalid`) naming the column for a value its column cannot hold,
    ///   a row without its key, or what `Type.check` refuses.
    static func plan(table: String, key: [String], existing: Columns?, rows: [Row], firstRow: Int)
        throws -> (creates: Bool, columns: Columns, added: Columns)
    {
        var columns = existing ?? []
        var index: [String: Int] = [:]
        for (position, column) in columns.enumerated() { index[column.name] = position }
        let existingCount = existing?.count ?? 0
        // New columns whose values so far were all null: their type is still open.
        var open: Set<String> = []
        if existing == nil {
            for name in key {
                index[name] = columns.count
                columns.append((name, .untyped))
                open.insert(name)
            }
        }
        for (offset, row) in rows.enumerated() {
            let number = firstRow + offset + 1
            for name in key {
                guard let value = row[name], value != .null else {
                    throw StoreError.invalid(
                        "row \(number) has no \(String(reflecting: name)), the key of table \(String(reflecting: table)); "
                            + "every row needs a value for it")
                }
            }
            for (name, value) in row.fields {
                try Type.check(name: name, value: value, row: number, isNew: index[name] == nil)
                guard let position = index[name] else {
                    index[name] = columns.count
                    if let type = Type(cell: value) {
                        columns.append((name, type))
                    } else {
                        columns.append((name, .untyped))
                        open.insert(name)
                    }
                    continue
                }
                guard let type = Type(cell: value) else { continue }
                if open.contains(name) {
                    columns[position].type = type
                    open.remove(name)
                    continue
                }
                let current = columns[position].type
                if current.accepts(value) { continue }
                if position >= existingCount, let wider = current.widened(for: type) {
                    columns[position].type = wider
                    continue
                }
                throw StoreError.invalid(
                    "column \(String(reflecting: name)) of table \(String(reflecting: table)) holds \(current.shown), "
                        + "but row \(number) gives \(value.kindName) (\(value.csvText.prefix(40))); nothing was written. "
                        + "Convert the value in the macro, or write to a new table")
            }
        }
        let added = existing == nil ? [] : Array(columns[existingCount...])
        return (existing == nil, columns, added)
    }

    /// Whether a plan (`creates`, `columns`, `added`) was made against a table with the columns
    /// `existing` (nil: no table), so that it still holds for it.
    static func holds(creates: Bool, columns: Columns, added: Columns, against existing: Columns?) -> Bool {
        guard let existing else { return creates }
        guard !creates, existing.count + added.count == columns.count else { return false }
        for (index, column) in existing.enumerated() {
            guard columns[index].name == column.name, columns[index].type == column.type else { return false }
        }
        return true
    }

    /// The statements that make `table` (quoted, after its schema where it has one) as a plan
    /// (`creates`, `columns`, `added`) has it: `CREATE TABLE` with every column and `key` as its
    /// primary key when the plan creates it, else an `ALTER TABLE … ADD COLUMN` for each column
    /// added.
    static func statements(table: String, key: [String], creates: Bool, columns: Columns, added: Columns) -> [String] {
        guard creates else {
            return added.map { "ALTER TABLE \(table) ADD COLUMN \(Identifier.quoted($0.name)) \($0.type.sql)" }
        }
        var definitions = columns.map { "\(Identifier.quoted($0.name)) \($0.type.sql)" }
        if !key.isEmpty {
            definitions.append("PRIMARY KEY (\(key.map(Identifier.quoted).joined(separator: ", ")))")
        }
        return ["CREATE TABLE \(table) (\(definitions.joined(separator: ", ")))"]
    }
}

/// What an upsert into one table must change first: the table made, columns added.
///
/// Pure: it reads the existing columns and the rows and touches no file.
public struct TablePlan: Sendable, Equatable {
    /// The table's name.
    public let table: String
    /// The key columns (empty: rows are appended).
    public let key: [String]
    /// The table does not exist yet and is created with `columns`.
    public var creates: Bool
    /// Every column the rows use and its type, existing ones first, then new ones in the order the rows name them.
    public var columns: [(name: String, type: ColumnType)]
    /// The columns to add to an existing table.
    public var added: [(name: String, type: ColumnType)]

    public static func == (lhs: TablePlan, rhs: TablePlan) -> Bool {
        lhs.table == rhs.table && lhs.key == rhs.key && lhs.creates == rhs.creates
            && lhs.columns.map(\.name) == rhs.columns.map(\.name) && lhs.columns.map(\.type) == rhs.columns.map(\.type)
            && lhs.added.map(\.name) == rhs.added.map(\.name) && lhs.added.map(\.type) == rhs.added.map(\.type)
    }

    /// Whether this plan was made against a table with the columns `existing` (nil: no table),
    /// so that it still holds for it.
    func wasPlanned(against existing: [(name: String, type: ColumnType)]?) -> Bool {
        ColumnPlanner.holds(creates: creates, columns: columns, added: added, against: existing)
    }

    /// The type of each column by name.
    func type(of column: String) -> ColumnType? {
        columns.first(where: { $0.name == column })?.type
    }

    /// Plans the upsert of `rows` into `table` whose columns are `existing` (nil: no such table).
    ///
    /// A column's type comes from its values: bools and ints are INTEGER, an int and a float in
    /// one new column make it REAL, strings and nested values are TEXT; a column whose values are
    /// all null is TEXT.
    ///
    /// - Throws: `StoreError` (`.invalid`) naming the column for a value its column cannot hold
    ///   (text into an INTEGER column, a float into an INTEGER one), or a row without a key field.
    public static func plan(
        table: String, key: [String], existing: [(name: String, type: ColumnType)]?, rows: [Row], firstRow: Int = 0
    ) throws -> TablePlan {
        let plan = try ColumnPlanner.plan(table: table, key: key, existing: existing, rows: rows, firstRow: firstRow)
        return TablePlan(table: table, key: key, creates: plan.creates, columns: plan.columns, added: plan.added)
    }
}

/// Names apimacro accepts for tables and keys: SQL identifiers.
public enum Identifier {
    /// Checks that `name` is an identifier (a letter or `_`, then letters, digits or `_`, at most
    /// 64 characters) that does not start with `sqlite_` (SQLite's own tables).
    ///
    /// - Parameters:
    ///   - name: the name to check.
    ///   - what: what it names, for the message ("table", "key").
    /// - Throws: `StoreError` (`.invalid`) saying what a name may be.
    public static func check(_ name: String, what: String) throws {
        let bytes = Array(name.utf8)
        let valid =
            !bytes.isEmpty && bytes.count <= 64
            && bytes.enumerated().allSatisfy { offset, byte in
                let letter = (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95
                return letter || (offset > 0 && byte >= 48 && byte <= 57)
            }
        guard valid, !name.lowercased().hasPrefix("sqlite_") else {
            throw StoreError.invalid(
                "\(what) \(String(reflecting: name)) is not an identifier: use letters, digits and _, "
                    + "starting with a letter or _ (at most 64, not starting with sqlite_)")
        }
    }

    /// `name` quoted for SQL (any text: column names come from the rows' keys).
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingLiteral("\"", with: "\"\"") + "\""
    }
}
