import Platform
import WebAPI

/// Upserts rows into a SQLite table inside an open transaction: the table made, new columns
/// added, one statement per set of fields (a field a row leaves out keeps its stored value).
enum SQLiteUpsert {
    /// The columns of `schema.table`, or nil when there is no such table.
    static func columns(
        _ db: SQLiteConnection, schema: String, table: String
    ) throws -> [(name: String, type: ColumnType)]? {
        // cid, name, type, notnull, dflt_value, pk
        let rows = try db.rows("PRAGMA \(schema).table_info(\(Identifier.quoted(table)))")
        guard !rows.isEmpty else { return nil }
        return rows.map { row in (row[1].text ?? "", ColumnType(declared: row[2].text ?? "")) }
    }

    /// Writes `rows` into `schema.table` (upserted by `key`, appended without one; the table
    /// emptied first when `replace`) and returns how many were written.
    ///
    /// `staged`, the plan made when the rows were staged, is used again when the table still has
    /// the columns it was planned against (no second pass over the rows).
    ///
    /// - Throws: `StoreError` for a type clash with the table as it is now; `SQLiteError` from SQLite.
    static func write(
        _ db: SQLiteConnection, schema: String, table: String, key: [String], rows: [Row], replace: Bool,
        staged: TablePlan? = nil
    ) throws -> Int {
        let existing = try columns(db, schema: schema, table: table)
        let plan: TablePlan
        if let staged, staged.wasPlanned(against: existing) {
            plan = staged
        } else {
            plan = try TablePlan.plan(table: table, key: key, existing: existing, rows: rows)
        }
        let qualified = "\(schema).\(Identifier.quoted(table))"
        for statement in ColumnPlanner.statements(
            table: qualified, key: key, creates: plan.creates, columns: plan.columns, added: plan.added)
        {
            try db.execute(statement)
        }
        if replace { try db.execute("DELETE FROM \(qualified)") }
        var types: [String: ColumnType] = [:]
        for column in plan.columns { types[column.name] = column.type }
        var indexed = false
        // One prepared statement per set of field names (most rows share one), bound and stepped
        // again for each row: the row before's statement is tried first, without hashing the names.
        var statements: [[String]: Prepared] = [:]
        var last: Prepared?
        for row in rows {
            let prepared: Prepared
            if let last, last.matches(row) {
                prepared = last
            } else {
                let names = row.fields.map(\.name)
                if let known = statements[names] {
                    prepared = known
                } else {
                    let sql = statementText(qualified: qualified, names: names, key: key)
                    let statement: SQLiteStatement
                    do {
                        statement = try db.prepare(sql, persistent: true)
                    } catch let error as SQLiteError
                        where !indexed && !key.isEmpty && error.message.contains("ON CONFLICT")
                    {
                        // A table made elsewhere without a unique key: give the key one (a duplicate
                        // already there fails here, naming the index).
                        indexed = true
                        let index = Identifier.quoted("_apimacro_key_\(table)")
                        try db.execute(
                            "CREATE UNIQUE INDEX IF NOT EXISTS \(schema).\(index) ON \(Identifier.quoted(table)) "
                                + "(\(key.map(Identifier.quoted).joined(separator: ", ")))")
                        statement = try db.prepare(sql, persistent: true)
                    }
                    prepared = Prepared(statement: statement, names: names, types: names.map { types[$0] ?? .any })
                    statements[names] = prepared
                }
                last = prepared
            }
            try prepared.execute(row)
        }
        return rows.count
    }

    /// A prepared upsert for rows with one set of field names, and its columns' types in order.
    private final class Prepared {
        let statement: SQLiteStatement
        let names: [String]
        let types: [ColumnType]

        init(statement: SQLiteStatement, names: [String], types: [ColumnType]) {
            self.statement = statement
            self.names = names
            self.types = types
        }

        /// Whether `row` has exactly these fields in this order.
        func matches(_ row: Row) -> Bool {
            guard row.fields.count == names.count else { return false }
            for index in names.indices where row.fields[index].name != names[index] { return false }
            return true
        }

        /// Binds `row`'s values (bools as 0/1, an int widened for a REAL column, nested values as
        /// their JSON text) and runs the statement once.
        func execute(_ row: Row) throws {
            statement.reset()
            for (offset, field) in row.fields.enumerated() {
                let index = Int32(offset + 1)
                switch field.value {
                case .null: statement.bindNull(at: index)
                case .bool(let flag): statement.bind(Int64(flag ? 1 : 0), at: index)
                case .integer(let number):
                    if types[offset] == .real {
                        statement.bind(Double(number), at: index)
                    } else {
                        statement.bind(number, at: index)
                    }
                case .real(let number): statement.bind(number, at: index)
                case .text(let text), .json(let text): statement.bind(text, at: index)
                }
            }
            // An INSERT returns no row: one step runs it (a failure resets it and throws SQLite's error).
            _ = try statement.step()
        }
    }

    /// The statement for a row with fields `names`.
    private static func statementText(qualified: String, names: [String], key: [String]) -> String {
        let columns = names.map(Identifier.quoted).joined(separator: ", ")
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        var sql = "INSERT INTO \(qualified) (\(columns)) VALUES (\(marks))"
        guard !key.isEmpty else { return sql }
        let updated = names.filter { !key.contains($0) }
        let target = key.map(Identifier.quoted).joined(separator: ", ")
        if updated.isEmpty {
            sql += " ON CONFLICT (\(target)) DO NOTHING"
        } else {
            let sets = updated.map { "\(Identifier.quoted($0)) = excluded.\(Identifier.quoted($0))" }
            sql += " ON CONFLICT (\(target)) DO UPDATE SET " + sets.joined(separator: ", ")
        }
        return sql
    }

    /// Adds `run`'s line to `schema._apimacro_runs`.
    static func recordRun(_ db: SQLiteConnection, schema: String, run: RunTransaction.RunRecord, rows: Int) throws {
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS \(schema)._apimacro_runs (id INTEGER PRIMARY KEY, macro TEXT NOT NULL,
                started TEXT NOT NULL, finished TEXT NOT NULL, exit INTEGER NOT NULL, requests INTEGER NOT NULL,
                cache_hits INTEGER NOT NULL, rows_written INTEGER NOT NULL)
            """)
        try db.execute(
            """
            INSERT INTO \(schema)._apimacro_runs (macro, started, finished, exit, requests, cache_hits, rows_written)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(run.macro), .text(timestamp(run.started)), .text(timestamp(run.finished)),
                .integer(Int64(run.exit)), .integer(Int64(run.requests)), .integer(Int64(run.cacheHits)),
                .integer(Int64(rows)),
            ])
    }

    /// `date` in RFC 3339 with milliseconds, in UTC (`2024-05-01T12:00:00.250Z`).
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
