import Foundation
import GRDB

/// Upserts rows into a SQLite table inside an open transaction: the table made, new columns
/// added, one statement per set of fields (a field a row leaves out keeps its stored value).
enum SQLiteUpsert {
    /// The columns of `schema.table`, or nil when there is no such table.
    static func columns(_ db: Database, schema: String, table: String) throws -> [(name: String, type: ColumnType)]? {
        let rows = try GRDB.Row.fetchAll(db, sql: "PRAGMA \(schema).table_info(\(Identifier.quoted(table)))")
        guard !rows.isEmpty else { return nil }
        return rows.map { row in (row["name"], ColumnType(declared: row["type"] ?? "")) }
    }

    /// Writes `rows` into `schema.table` (upserted by `key`, appended without one; the table
    /// emptied first when `replace`) and returns how many were written.
    ///
    /// - Throws: `StoreError` for a type clash with the table as it is now; `DatabaseError` from SQLite.
    static func write(
        _ db: Database, schema: String, table: String, key: [String], rows: [Row], replace: Bool
    ) throws -> Int {
        let existing = try columns(db, schema: schema, table: table)
        let plan = try TablePlan.plan(table: table, key: key, existing: existing, rows: rows)
        let qualified = "\(schema).\(Identifier.quoted(table))"
        if plan.creates {
            var definitions = plan.columns.map { column in
                "\(Identifier.quoted(column.name)) \(column.type.rawValue)"
            }
            if !key.isEmpty {
                definitions.append("PRIMARY KEY (\(key.map(Identifier.quoted).joined(separator: ", ")))")
            }
            try db.execute(sql: "CREATE TABLE \(qualified) (\(definitions.joined(separator: ", ")))")
        }
        for column in plan.added {
            try db.execute(
                sql: "ALTER TABLE \(qualified) ADD COLUMN \(Identifier.quoted(column.name)) \(column.type.rawValue)")
        }
        if replace { try db.execute(sql: "DELETE FROM \(qualified)") }
        var types: [String: ColumnType] = [:]
        for column in plan.columns { types[column.name] = column.type }
        var indexed = false
        // One prepared statement per set of field names (most rows share one).
        var statements: [[String]: Statement] = [:]
        for row in rows {
            let names = row.fields.map(\.name)
            if let statement = statements[names] {
                try statement.execute(arguments: arguments(row, types: types))
                continue
            }
            let sql = statementText(qualified: qualified, names: names, key: key)
            let statement: Statement
            do {
                statement = try db.makeStatement(sql: sql)
            } catch let error as DatabaseError
                where !indexed && !key.isEmpty && error.message?.contains("ON CONFLICT") == true
            {
                // A table made elsewhere without a unique key: give the key one (a duplicate
                // already there fails here, naming the index).
                indexed = true
                let index = Identifier.quoted("_apimacro_key_\(table)")
                try db.execute(
                    sql: "CREATE UNIQUE INDEX IF NOT EXISTS \(schema).\(index) ON \(Identifier.quoted(table)) "
                        + "(\(key.map(Identifier.quoted).joined(separator: ", ")))")
                statement = try db.makeStatement(sql: sql)
            }
            statements[names] = statement
            try statement.execute(arguments: arguments(row, types: types))
        }
        return rows.count
    }

    /// The values of `row`, bound for their columns' types.
    private static func arguments(_ row: Row, types: [String: ColumnType]) -> StatementArguments {
        StatementArguments(row.fields.map { field in bound(field.value, column: types[field.name] ?? .any) })
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

    /// The SQLite value of `cell` for a column of type `column`: bools as 0/1, an int widened
    /// for a REAL column, nested values as their JSON text.
    private static func bound(_ cell: Cell, column: ColumnType) -> (any DatabaseValueConvertible)? {
        switch cell {
        case .null: nil
        case .bool(let flag): Int64(flag ? 1 : 0)
        case .integer(let number): column == .real ? Double(number) : number
        case .real(let number): number
        case .text(let text), .json(let text): text
        }
    }

    /// Adds `run`'s line to `schema._apimacro_runs`.
    static func recordRun(_ db: Database, schema: String, run: RunTransaction.RunRecord, rows: Int) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(schema)._apimacro_runs (id INTEGER PRIMARY KEY, macro TEXT NOT NULL,
                    started TEXT NOT NULL, finished TEXT NOT NULL, exit INTEGER NOT NULL, requests INTEGER NOT NULL,
                    cache_hits INTEGER NOT NULL, rows_written INTEGER NOT NULL)
                """)
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        try db.execute(
            sql: """
                INSERT INTO \(schema)._apimacro_runs (macro, started, finished, exit, requests, cache_hits, rows_written)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                run.macro, format.string(from: run.started), format.string(from: run.finished), Int(run.exit),
                run.requests, run.cacheHits, rows,
            ])
    }
}
