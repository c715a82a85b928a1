import Foundation
import GRDB
import GRDBSQLite

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
    /// `staged`, the plan made when the rows were staged, is used again when the table still has
    /// the columns it was planned against (no second pass over the rows).
    ///
    /// - Throws: `StoreError` for a type clash with the table as it is now; `DatabaseError` from SQLite.
    static func write(
        _ db: Database, schema: String, table: String, key: [String], rows: [Row], replace: Bool,
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
        // One prepared statement per set of field names (most rows share one), bound and stepped
        // on SQLite's C API: the row before's statement is tried first, without hashing the names.
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
                    prepared = Prepared(statement: statement, names: names, types: names.map { types[$0] ?? .any })
                    statements[names] = prepared
                }
                last = prepared
            }
            try prepared.execute(row, db: db)
        }
        return rows.count
    }

    /// A prepared upsert for rows with one set of field names, and its columns' types in order.
    private final class Prepared {
        let statement: Statement
        let names: [String]
        let types: [ColumnType]

        init(statement: Statement, names: [String], types: [ColumnType]) {
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
        func execute(_ row: Row, db: Database) throws {
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            for (offset, field) in row.fields.enumerated() {
                let index = Int32(offset + 1)
                switch field.value {
                case .null: sqlite3_bind_null(handle, index)
                case .bool(let flag): sqlite3_bind_int64(handle, index, flag ? 1 : 0)
                case .integer(let number):
                    if types[offset] == .real {
                        sqlite3_bind_double(handle, index, Double(number))
                    } else {
                        sqlite3_bind_int64(handle, index, number)
                    }
                case .real(let number): sqlite3_bind_double(handle, index, number)
                case .text(let text), .json(let text):
                    var text = text
                    text.withUTF8 { bytes in
                        _ = bytes.withMemoryRebound(to: CChar.self) { chars in
                            sqlite3_bind_text(handle, index, chars.baseAddress, Int32(chars.count), transient)
                        }
                    }
                }
            }
            let code = sqlite3_step(handle)
            guard code == SQLITE_DONE else {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                sqlite3_reset(handle)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
            }
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

/// SQLite copies a bound text at once (`SQLITE_TRANSIENT`).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
