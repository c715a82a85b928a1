import Platform
import WebAPI

/// A PostgreSQL column's type as apimacro reads and makes it.
///
/// New columns: bool `boolean`, int `bigint`, float (or ints and floats together) `double
/// precision`, str `text`, lists and dicts `jsonb`, all-null `text`.
enum PostgresType: PlannedType, Sendable {
    case boolean
    case integer
    case double
    case numeric
    case text
    case json
    /// A type apimacro does not make (`date`, `uuid`, …): text values only, the server converts.
    case other(String)

    /// The type of an existing column from `information_schema.columns.data_type`.
    init(dataType: String) {
        switch dataType {
        case "boolean": self = .boolean
        case "bigint", "integer", "smallint": self = .integer
        case "double precision", "real": self = .double
        case "numeric": self = .numeric
        case "text", "character varying", "character": self = .text
        case "jsonb", "json": self = .json
        default: self = .other(dataType)
        }
    }

    /// The type a new column takes for `cell`, nil for null.
    init?(cell: Cell) {
        switch cell {
        case .null: return nil
        case .bool: self = .boolean
        case .integer: self = .integer
        case .real: self = .double
        case .text: self = .text
        case .json: self = .json
        }
    }

    static var untyped: PostgresType { .text }

    /// Words for messages: the type as SQL names it.
    var shown: String { sql }

    func widened(for type: PostgresType) -> PostgresType? { self == .integer && type == .double ? .double : nil }

    /// Refuses text with a NUL (PostgreSQL's text cannot hold one) and, for a new column, a
    /// name PostgreSQL would cut (over 63 bytes).
    static func check(name: String, value: Cell, row: Int, isNew: Bool) throws {
        if case .text(let text) = value, text.utf8.contains(0) {
            throw StoreError.invalid(
                "row \(row) field \(String(reflecting: name)) holds a NUL character, which PostgreSQL text "
                    + "cannot hold; nothing was written. Remove it in the macro")
        }
        guard isNew, name.utf8.count > 63 else { return }
        throw StoreError.invalid(
            "field \(String(reflecting: String(name.prefix(40)) + "…")) of row \(row) is longer than "
                + "PostgreSQL's 63-byte column names; rename it in the macro")
    }

    /// The type in `CREATE TABLE` and `ADD COLUMN`.
    var sql: String {
        switch self {
        case .boolean: "boolean"
        case .integer: "bigint"
        case .double: "double precision"
        case .numeric: "numeric"
        case .text: "text"
        case .json: "jsonb"
        case .other(let name): name
        }
    }

    /// Whether `cell` may go into a column of this type: the same kind, an int into a `double
    /// precision` or `numeric` column (widened), a list or dict into `text` (its JSON text).
    func accepts(_ cell: Cell) -> Bool {
        switch (self, cell) {
        case (_, .null): true
        case (.boolean, .bool): true
        case (.integer, .integer): true
        case (.double, .integer), (.double, .real), (.numeric, .integer), (.numeric, .real): true
        case (.text, .text), (.text, .json): true
        case (.json, .json): true
        case (.other, .text): true
        default: false
        }
    }
}

/// What an upsert into one PostgreSQL table must change first, and the columns' types.
struct PostgresPlan: Sendable {
    let table: String
    let key: [String]
    var creates: Bool
    var columns: [(name: String, type: PostgresType)]
    var added: [(name: String, type: PostgresType)]

    func type(of name: String) -> PostgresType? { columns.first(where: { $0.name == name })?.type }

    /// Whether this plan was made against a table with the columns `existing` (nil: no table),
    /// so that it still holds for it.
    func wasPlanned(against existing: [(name: String, type: PostgresType)]?) -> Bool {
        ColumnPlanner.holds(creates: creates, columns: columns, added: added, against: existing)
    }

    /// Plans writing `rows` into `table` whose columns are `existing` (nil: no such table).
    ///
    /// - Throws: `StoreError` (`.invalid`) naming the column for a value its column cannot hold,
    ///   a row without its key, a field name PostgreSQL would cut (over 63 bytes), or text with a NUL.
    static func plan(
        table: String, key: [String], existing: [(name: String, type: PostgresType)]?, rows: [Row], firstRow: Int = 0
    ) throws -> PostgresPlan {
        let plan = try ColumnPlanner.plan(table: table, key: key, existing: existing, rows: rows, firstRow: firstRow)
        return PostgresPlan(table: table, key: key, creates: plan.creates, columns: plan.columns, added: plan.added)
    }
}

/// Upserts rows into PostgreSQL tables inside an open transaction: `INSERT … ON CONFLICT (key)
/// DO UPDATE` in batches of parameterised rows, the table made and columns added first under a
/// transaction-scoped advisory lock on the table's name, so that processes writing one table at
/// once never race on its schema.
enum PostgresUpsert {
    /// The columns of `table` in the connection's current schema, or nil when there is no such table.
    static func columns(_ session: PostgresSession, table: String) throws -> [(name: String, type: PostgresType)]? {
        let result = try session.execute(
            """
            SELECT column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position
            """, [table])
        guard !result.rows.isEmpty else { return nil }
        return result.rows.map { row in (row[0] ?? "", PostgresType(dataType: row[1] ?? "")) }
    }

    /// Takes the transaction-scoped lock apimacro's writers of `name` share.
    static func lock(_ session: PostgresSession, _ name: String) throws {
        try session.execute("SELECT pg_advisory_xact_lock(hashtext($1))", ["apimacro:" + name])
    }

    /// The most parameters in one statement (PostgreSQL allows 65,535) and rows in one batch.
    static let parameterLimit = 30_000
    static let batchLimit = 1_000
    /// The most rows in one statement whose values go as one array per column.
    static let arrayBatchLimit = 5_000

    /// Writes `rows` into `table` (upserted by `key`, appended without one; emptied first when
    /// `replace`); returns how many were written.
    ///
    /// - Throws: `StoreError` for a type clash with the table as it is now, or the server's refusal.
    static func write(
        _ session: PostgresSession, table: String, key: [String], rows: [Row], replace: Bool,
        staged: PostgresPlan? = nil
    ) throws -> Int {
        try lock(session, table)
        let existing = try columns(session, table: table)
        if let existing, let missing = key.first(where: { name in !existing.contains { $0.name == name } }) {
            throw StoreError.invalid(
                "table \(String(reflecting: table)) at \(session.shown) has no column \(String(reflecting: missing)) to use as its key"
            )
        }
        let plan: PostgresPlan
        if let staged, staged.wasPlanned(against: existing) {
            plan = staged
        } else {
            plan = try PostgresPlan.plan(table: table, key: key, existing: existing, rows: rows)
        }
        let quotedTable = Identifier.quoted(table)
        for statement in ColumnPlanner.statements(
            table: quotedTable, key: key, creates: plan.creates, columns: plan.columns, added: plan.added)
        {
            try session.execute(statement)
        }
        if !plan.creates, !key.isEmpty, try !hasUniqueIndex(session, table: table, key: key) {
            // A table made elsewhere without a unique key: give the key one (a duplicate already
            // there fails here, naming the index).
            try session.execute(
                "CREATE UNIQUE INDEX \(Identifier.quoted("_apimacro_key_\(table)")) ON \(quotedTable) "
                    + "(\(key.map(Identifier.quoted).joined(separator: ", ")))")
        }
        if replace { try session.execute("DELETE FROM \(quotedTable)") }
        var types: [String: PostgresType] = [:]
        for column in plan.columns { types[column.name] = column.type }
        // Consecutive rows with the same fields go in one statement, split where a key repeats
        // (one INSERT … ON CONFLICT DO UPDATE may not touch a row twice).
        var batch: [Row] = []
        var batchKeys: Set<[Cell]> = []
        var names: [String] = []
        func flush() throws {
            guard !batch.isEmpty else { return }
            try insert(session, table: quotedTable, names: names, key: key, rows: batch, types: types)
            batch.removeAll(keepingCapacity: true)
            batchKeys.removeAll(keepingCapacity: true)
        }
        var limit = 1
        for row in rows {
            let rowKey = key.map { row[$0] ?? .null }
            let sameNames =
                row.fields.count == names.count && names.indices.allSatisfy { row.fields[$0].name == names[$0] }
            if !sameNames || batch.count >= limit || (!key.isEmpty && batchKeys.contains(rowKey)) {
                try flush()
                names = row.fields.map(\.name)
                limit =
                    arrayTypes(names, types) != nil
                    ? arrayBatchLimit : min(batchLimit, max(1, parameterLimit / max(1, names.count)))
            }
            batch.append(row)
            if !key.isEmpty { batchKeys.insert(rowKey) }
        }
        try flush()
        return rows.count
    }

    private static func insert(
        _ session: PostgresSession, table: String, names: [String], key: [String], rows: [Row],
        types: [String: PostgresType]
    ) throws {
        let columns = names.map(Identifier.quoted).joined(separator: ", ")
        var parameters: [String?] = []
        var sql: String
        if let arrayTypes = arrayTypes(names, types) {
            // One parameter per column: an array literal of the batch's values, unnested by the
            // server (one parse however many rows, no limit of 65,535 parameters).
            var arrays = Array(repeating: "{", count: names.count)
            for (number, row) in rows.enumerated() {
                for (offset, field) in row.fields.enumerated() {
                    if number > 0 { arrays[offset] += "," }
                    arrayElement(field.value, column: arrayTypes[offset], into: &arrays[offset])
                }
            }
            parameters = arrays.map { $0 + "}" }
            let unnested = arrayTypes.enumerated().map { "$\($0.offset + 1)::\($0.element.sql)[]" }
            sql = "INSERT INTO \(table) (\(columns)) SELECT * FROM unnest(\(unnested.joined(separator: ", ")))"
        } else {
            var values: [String] = []
            parameters.reserveCapacity(rows.count * names.count)
            for row in rows {
                var marks: [String] = []
                for field in row.fields {
                    parameters.append(text(field.value, column: types[field.name] ?? .text))
                    marks.append("$\(parameters.count)")
                }
                values.append("(" + marks.joined(separator: ", ") + ")")
            }
            sql = "INSERT INTO \(table) (\(columns)) VALUES " + values.joined(separator: ", ")
        }
        if !key.isEmpty {
            let updated = names.filter { !key.contains($0) }
            let target = key.map(Identifier.quoted).joined(separator: ", ")
            if updated.isEmpty {
                sql += " ON CONFLICT (\(target)) DO NOTHING"
            } else {
                sql +=
                    " ON CONFLICT (\(target)) DO UPDATE SET "
                    + updated.map { "\(Identifier.quoted($0)) = EXCLUDED.\(Identifier.quoted($0))" }.joined(
                        separator: ", ")
            }
        }
        try session.execute(sql, parameters)
    }

    /// The types of the columns `names` when each is one apimacro makes (its values can go as an
    /// array of that type), else nil.
    private static func arrayTypes(_ names: [String], _ types: [String: PostgresType]) -> [PostgresType]? {
        var found: [PostgresType] = []
        for name in names {
            switch types[name] ?? .text {
            case .other: return nil
            case let type: found.append(type)
            }
        }
        return found
    }

    /// Appends `cell` as an element of an array literal of `column`'s type: NULL bare, strings
    /// and JSON text double-quoted with `"` and `\` escaped.
    static func arrayElement(_ cell: Cell, column: PostgresType, into text: inout String) {
        guard case .text(let value) = cell else {
            if case .json(let value) = cell {
                quoted(value, into: &text)
            } else {
                text += self.text(cell, column: column) ?? "NULL"
            }
            return
        }
        quoted(value, into: &text)
    }

    private static func quoted(_ value: String, into text: inout String) {
        text += "\""
        // Most values hold neither `"` nor `\`: appended whole.
        if !value.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C }) {
            text += value
            text += "\""
            return
        }
        for character in value.unicodeScalars {
            if character == "\"" || character == "\\" { text.unicodeScalars.append("\\") }
            text.unicodeScalars.append(character)
        }
        text += "\""
    }

    /// Whether `table` has a unique index on exactly the columns `key`.
    private static func hasUniqueIndex(_ session: PostgresSession, table: String, key: [String]) throws -> Bool {
        let result = try session.execute(
            """
            SELECT string_agg(a.attname::text, ',' ORDER BY a.attname::text)
            FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
            WHERE i.indrelid = to_regclass(quote_ident($1)) AND i.indisunique
            GROUP BY i.indexrelid
            """, [table])
        let wanted = key.sorted().joined(separator: ",")
        return result.rows.contains { $0.first == wanted }
    }

    /// The parameter text of `cell` for a column of type `column`: bools `true`/`false`, an int
    /// widened for a `double precision` column, nested values as their JSON text.
    static func text(_ cell: Cell, column: PostgresType) -> String? {
        switch cell {
        case .null: nil
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): column == .double ? "\(Double(number))" : String(number)
        case .real(let number): "\(number)"
        case .text(let text), .json(let text): text
        }
    }

    /// Adds `run`'s line to `_apimacro_runs`.
    static func recordRun(_ session: PostgresSession, run: RunTransaction.RunRecord, rows: Int) throws {
        try lock(session, "_apimacro_runs")
        try session.execute(
            """
            CREATE TABLE IF NOT EXISTS _apimacro_runs (id bigserial PRIMARY KEY, macro text NOT NULL,
                started timestamptz NOT NULL, finished timestamptz NOT NULL, exit integer NOT NULL,
                requests integer NOT NULL, cache_hits integer NOT NULL, rows_written integer NOT NULL)
            """)
        try session.execute(
            """
            INSERT INTO _apimacro_runs (macro, started, finished, exit, requests, cache_hits, rows_written)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [
                run.macro, UTCDateText.iso8601(run.started), UTCDateText.iso8601(run.finished), String(run.exit),
                String(run.requests), String(run.cacheHits), String(rows),
            ])
    }
}
