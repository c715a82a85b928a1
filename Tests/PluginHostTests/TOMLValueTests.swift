import Testing

@testable import PluginHost

@Suite struct TOMLValueTests {
    @Test func parsesNestedTablesAndInlineTables() throws {
        let doc = try TOMLValue.parse(
            """
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

    /// Found by `scripts/fuzz Manifest`: toml++ aborts on these (an internal assertion) instead of
    /// reporting them; they must be syntax errors like any other.
    @Test(arguments: [
        "[!\"\n", "[[ =a]]\n", "x = 1\n  [ ]\n", "[\n", "[[\n", "\u{FEFF}[\u{FFFD}[$'[", "\u{FEFF}[!x]",
        "n =[}\n", "a = }\n", "a = [1, ,]\n", "a = # no value\n", "a = {!b = 1}\n", "a = {b = 1,}\n", "a = [1}\n",
        "a = {b = 1]\n", "a = \u{3000}1\n",
    ])
    func headersWithoutANameAreSyntaxErrors(text: String) {
        #expect(throws: TOMLSyntaxError.self) { try TOMLValue.parse(text) }
    }

    @Test func bracketsInsideValuesAndStringsAreNotHeaders() throws {
        let doc = try TOMLValue.parse(
            #"""
            a = [
              [1, 2],
              [],
              [{ x = 1 }],
            ]
            b = "[!not a header"
            c = """
            [!"still a string
            """
            d = '[ '  # [! a comment
            ["quoted key"]
            e = 1
            """#)
        #expect(doc["b"] == .string("[!not a header"))
        #expect(doc["quoted key"] == .table(["e": .integer(1)]))
        #expect(
            doc["a"] == .array([.array([.integer(1), .integer(2)]), .array([]), .array([.table(["x": .integer(1)])])]))
    }
}
