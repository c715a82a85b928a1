import Foundation
import Testing

@testable import Store

@Suite("PostgreSQL upsert planning and URLs: types from values, a clash named, the password never shown")
struct PostgresPlanTests {
    @Test("new columns: bool boolean, int bigint, an int and a float double precision, nested jsonb, all-null text")
    func newTable() throws {
        let rows = [
            Row([("id", .integer(1)), ("ok", .bool(true)), ("score", .integer(3)), ("tags", .json("[1]"))]),
            Row([("id", .integer(2)), ("score", .real(2.5)), ("note", .null), ("name", .text("b"))]),
        ]
        let plan = try PostgresPlan.plan(table: "t", key: ["id"], existing: nil, rows: rows)
        #expect(plan.creates)
        #expect(plan.columns.map(\.name) == ["id", "ok", "score", "tags", "note", "name"])
        #expect(plan.columns.map(\.type.sql) == ["bigint", "boolean", "double precision", "jsonb", "text", "text"])
    }

    @Test("an existing double precision column takes an int; a bigint one refuses a float, naming it")
    func widenAndClash() throws {
        let existing: [(name: String, type: PostgresType)] = [("id", .integer), ("score", .double), ("n", .integer)]
        let plan = try PostgresPlan.plan(
            table: "t", key: ["id"], existing: existing, rows: [Row([("id", .integer(1)), ("score", .integer(4))])])
        #expect(!plan.creates && plan.added.isEmpty)
        #expect(PostgresUpsert.text(.integer(4), column: .double) == "4.0")
        #expect(PostgresUpsert.text(.bool(false), column: .boolean) == "false")
        #expect(throws: StoreError.self) {
            try PostgresPlan.plan(
                table: "t", key: ["id"], existing: existing, rows: [Row([("id", .integer(1)), ("n", .real(1.5))])])
        }
        do {
            _ = try PostgresPlan.plan(
                table: "t", key: ["id"], existing: existing,
                rows: [
                    Row([("id", .integer(1)), ("ok", .bool(true))]),
                    Row([("id", .integer(2)), ("ok", .integer(1))]),
                ])
            Issue.record("a bool column took an int")
        } catch let error as StoreError {
            #expect(error.description.hasPrefix(#"column "ok" of table "t" holds boolean, but row 2 gives an integer"#))
        }
    }

    @Test("text with a NUL and names over 63 bytes are refused before anything is sent")
    func refusals() throws {
        #expect(throws: StoreError.self) {
            try PostgresPlan.plan(table: "t", key: [], existing: nil, rows: [Row([("a", .text("x\u{0}y"))])])
        }
        #expect(throws: StoreError.self) {
            try PostgresPlan.plan(
                table: "t", key: [], existing: nil, rows: [Row([(String(repeating: "c", count: 64), .integer(1))])])
        }
    }

    @Test(
        "the password is redacted in the user part and in a password= parameter",
        arguments: [
            ("postgresql://u:s3cret@db:5432/x", "postgresql://u:***@db:5432/x"),
            (
                "postgres://u:p%40ss@db/x?sslmode=require&password=two",
                "postgres://u:***@db/x?sslmode=require&password=***"
            ),
            ("postgresql://u@db/x", "postgresql://u@db/x"),
            ("postgresql://db", "postgresql://db"),
            ("postgresql://u:a@b@db/x", "postgresql://u:***@db/x"),
        ])
    func redaction(url: String, shown: String) {
        #expect(PostgresURL.redacted(url) == shown)
    }

    @Test("a postgresql:// destination needs an identifier table; the URL is never its file")
    func destination() throws {
        let destination = try Destination.parse(
            path: "postgresql://u:pw@127.0.0.1/x", table: "stars", relativeTo: URL(fileURLWithPath: "/tmp"))
        #expect(destination == .postgres(url: "postgresql://u:pw@127.0.0.1/x", table: "stars"))
        #expect(destination.isTable)
        #expect(!destination.file.absoluteString.contains("pw"))
        #expect(throws: StoreError.self) {
            try Destination.parse(path: "postgresql://u:pw@h/x", table: nil, relativeTo: URL(fileURLWithPath: "/"))
        }
        #expect(throws: StoreError.self) {
            try Destination.parse(path: "postgresql://u:pw@h/x", table: "a-b", relativeTo: URL(fileURLWithPath: "/"))
        }
    }
}
