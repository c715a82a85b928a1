import Testing
@testable import PluginHost

@Suite struct TOMLValueTests {
    @Test func parsesNestedTablesAndInlineTables() throws {
        let doc = try TOMLValue.parse("""
            name = "x"
            n = 3
            auth = { kind = "none" }
            [endpoints.find]
            params = { q = "string!" }
            """)
        #expect(doc["name"] == .string("x"))
        #expect(doc["n"] == .integer(3))
        #expect(doc["auth"] == .table(["kind": .string("none")]))
        #expect(doc["endpoints"] == .table(["find": .table(["params": .table(["q": .string("string!")])])]))
    }

    @Test func reportsSyntaxErrors() {
        #expect(throws: (any Error).self) { try TOMLValue.parse("name = ") }
    }
}
