import Foundation
import Store
import Testing

@Suite("upsert planning: column types from values, a clash named, nothing touched")
struct TablePlanTests {
    @Test("a new table takes its key first, then the columns in the order the rows name them, typed by their values")
    func newTable() throws {
        let rows = [
            Row([("id", .integer(1)), ("name", .text("a")), ("score", .integer(3)), ("ok", .bool(true))]),
            Row([("id", .integer(2)), ("score", .real(2.5)), ("tags", .json("[1]")), ("none", .null)]),
        ]
        let plan = try TablePlan.plan(table: "t", key: ["id"], existing: nil, rows: rows)
        #expect(plan.creates)
        #expect(plan.columns.map(\.name) == ["id", "name", "score", "ok", "tags", "none"])
        #expect(plan.columns.map(\.type) == [.integer, .text, .real, .integer, .text, .text])
    }

    @Test("an existing REAL column takes an int (widened); new columns are the only ones added")
    func widen() throws {
        let existing: [(name: String, type: ColumnType)] = [("id", .integer), ("score", .real)]
        let plan = try TablePlan.plan(
            table: "t", key: ["id"], existing: existing,
            rows: [Row([("id", .integer(1)), ("score", .integer(4)), ("new", .text("x"))])])
        #expect(!plan.creates)
        #expect(plan.added.map(\.name) == ["new"])
    }

    @Test(
        "a value its column cannot hold is refused, naming the column and the row",
        arguments: [
            (ColumnType.integer, Cell.text("x")), (.integer, .real(1.5)), (.text, .integer(3)), (.real, .text("y")),
        ])
    func clash(column: ColumnType, value: Cell) {
        let error = #expect(throws: StoreError.self) {
            try TablePlan.plan(
                table: "t", key: [], existing: [("c", column)],
                rows: [Row([("c", .null)]), Row([("c", value)])])
        }
        #expect(error?.description.contains("column \"c\"") == true)
        #expect(error?.description.contains("row 2") == true)
        #expect(error?.kind == .invalid)
    }

    @Test("text after ints in one new column is a clash too; a row without the key is refused")
    func newColumnClashAndMissingKey() {
        #expect(throws: StoreError.self) {
            try TablePlan.plan(
                table: "t", key: [], existing: nil, rows: [Row([("c", .integer(1))]), Row([("c", .text("x"))])])
        }
        let missing = #expect(throws: StoreError.self) {
            try TablePlan.plan(table: "t", key: ["id"], existing: nil, rows: [Row([("name", .text("x"))])])
        }
        #expect(missing?.description.contains("row 1 has no \"id\"") == true)
    }

    @Test(
        "table names and keys must be identifiers",
        arguments: ["", "1abc", "a b", "a;drop", "sqlite_master", "a\"b", String(repeating: "a", count: 65), "é"])
    func identifiers(name: String) {
        let error = #expect(throws: StoreError.self) { try Identifier.check(name, what: "table") }
        #expect(error?.description.contains("is not an identifier") == true)
    }

    @Test("declared types map onto SQLite's affinities")
    func affinity() {
        #expect(ColumnType(declared: "BIGINT") == .integer)
        #expect(ColumnType(declared: "VARCHAR(10)") == .text)
        #expect(ColumnType(declared: "DOUBLE") == .real)
        #expect(ColumnType(declared: "") == .any)
        #expect(ColumnType(declared: "DECIMAL") == .numeric)
    }
}
