import Foundation

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
        guard let existing else { return creates }
        guard !creates, existing.count + added.count == columns.count else { return false }
        for (index, column) in existing.enumerated() {
            guard columns[index].name == column.name, columns[index].type == column.type else { return false }
        }
        return true
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
        var columns = existing ?? []
        var index: [String: Int] = [:]
        for (position, column) in columns.enumerated() { index[column.name] = position }
        let existingCount = existing?.count ?? 0
        // New columns whose values so far were all null: their type is still open.
        var open: Set<String> = []
        if existing == nil {
            for name in key {
                index[name] = columns.count
                columns.append((name, .any))
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
                guard let position = index[name] else {
                    index[name] = columns.count
                    if let type = value.columnType {
                        columns.append((name, type))
                    } else {
                        columns.append((name, .any))
                        open.insert(name)
                    }
                    continue
                }
                guard let type = value.columnType else { continue }
                if open.contains(name) {
                    columns[position].type = type
                    open.remove(name)
                    continue
                }
                let current = columns[position].type
                if current.accepts(type) { continue }
                // An int column planned here (not yet in the file) widens to REAL for a float.
                if position >= existingCount, current == .integer, type == .real {
                    columns[position].type = .real
                    continue
                }
                throw StoreError.invalid(
                    "column \(String(reflecting: name)) of table \(String(reflecting: table)) holds \(current.shown), "
                        + "but row \(number) gives \(value.kindName) (\(value.csvText.prefix(40))); nothing was written. "
                        + "Convert the value in the macro, or write to a new table")
            }
        }
        for name in open {
            if let position = index[name] { columns[position].type = .text }
        }
        let added = existing == nil ? [] : Array(columns[existingCount...])
        return TablePlan(table: table, key: key, creates: existing == nil, columns: columns, added: added)
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
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
