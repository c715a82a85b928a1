import Testing

@testable import PluginHost

@Suite("TOMLParser: TOML 1.0, strict, and nothing aborts")
struct TOMLValueTests {
    @Test("every valid document of the corpus parses", arguments: TOMLCorpus.valid)
    func valid(text: String) throws {
        _ = try TOMLValue.parse(text)
    }

    /// Issue 24: `a = 1979-05-27 5` aborted every command through toml++; each of these is one
    /// syntax error, its message one line of visible text.
    @Test("every invalid document is a TOMLSyntaxError", arguments: TOMLCorpus.invalid + TOMLCorpus.outOfRange)
    func invalid(text: String) throws {
        let error = try #require(throws: TOMLSyntaxError.self) { try TOMLValue.parse(text) }
        #expect(error.line >= 1 && error.column >= 1)
        #expect(
            !error.message.unicodeScalars.contains { TOMLParser.isInvisible($0) }, "\(error.message.debugDescription)")
        #expect(!error.message.isEmpty)
    }

    @Test("the issue's date, a space and a digit: an error at the digit")
    func dateSpaceDigit() throws {
        let error = try #require(throws: TOMLSyntaxError.self) { try TOMLValue.parse("ok = 1\na = 1979-05-27 5\n") }
        #expect(
            error
                == TOMLSyntaxError(
                    message: "expected the end of the line after a statement, found '5'", line: 2, column: 16))
    }

    @Test("tables, dotted keys, inline tables and arrays of tables")
    func structure() throws {
        let doc = try TOMLValue.parse(
            """
            name = "x"
            n = 3
            auth = { kind = "none" }
            physical.color = "orange"
            [endpoints.find]
            params = { q = "string!" }
            [[items]]
            a = 1
            [items.sub]
            b = 2
            [[items]]
            """)
        #expect(doc["name"] == .string("x"))
        #expect(doc["n"] == .integer(3))
        #expect(doc["auth"] == .table(["kind": .string("none")]))
        #expect(doc["physical"] == .table(["color": .string("orange")]))
        #expect(doc["endpoints"] == .table(["find": .table(["params": .table(["q": .string("string!")])])]))
        #expect(doc["items"] == .array([.table(["a": .integer(1), "sub": .table(["b": .integer(2)])]), .table([:])]))
    }

    @Test("strings: escapes, multi-line trimming, line-ending backslashes, literal strings")
    func strings() throws {
        let doc = try TOMLValue.parse(
            #"""
            basic = "tab\there \"q\" \u00E9 \U0001F600 \\"
            multi = """
            Roses
            Violets"""
            joined = """\
                   The quick \
                   fox."""
            quotes = """two "" and one ""\""""
            literal = 'C:\Users\x'
            raw = '''
            first newline trimmed
            '''
            "key with space" = 1
            'literal key' = 2
            """#)
        #expect(doc["basic"] == .string("tab\there \"q\" é 😀 \\"))
        #expect(doc["multi"] == .string("Roses\nViolets"))
        #expect(doc["joined"] == .string("The quick fox."))
        #expect(doc["quotes"] == .string("two \"\" and one \"\"\""))
        #expect(doc["literal"] == .string(#"C:\Users\x"#))
        #expect(doc["raw"] == .string("first newline trimmed\n"))
        #expect(doc["key with space"] == .integer(1))
        #expect(doc["literal key"] == .integer(2))
    }

    @Test("numbers: every base, underscores, the 64-bit range, special floats")
    func numbers() throws {
        let doc = try TOMLValue.parse(
            """
            a = +99
            b = 1_000
            c = 0xdead_BEEF
            d = 0o755
            e = 0b1101
            max = 9223372036854775807
            min = -9223372036854775808
            f = 6.626e-34
            g = 224_617.445_991
            h = -0.0
            i = 1e400
            j = -inf
            k = nan
            """)
        #expect(doc["a"] == .integer(99))
        #expect(doc["b"] == .integer(1000))
        #expect(doc["c"] == .integer(0xDEAD_BEEF))
        #expect(doc["d"] == .integer(0o755))
        #expect(doc["e"] == .integer(13))
        #expect(doc["max"] == .integer(Int.max))
        #expect(doc["min"] == .integer(Int.min))
        #expect(doc["f"] == .double(6.626e-34))
        #expect(doc["g"] == .double(224_617.445_991))
        guard case .double(let negativeZero)? = doc["h"], case .double(let nan)? = doc["k"] else {
            Issue.record("not floats: \(String(describing: doc["h"])), \(String(describing: doc["k"]))")
            return
        }
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
        #expect(doc["i"] == .double(.infinity))
        #expect(doc["j"] == .double(-.infinity))
        #expect(nan.isNaN)
    }

    @Test("dates and times are their isoformat() text, checked against the calendar")
    func dates() throws {
        let doc = try TOMLValue.parse(
            """
            a = 1979-05-27T07:32:00Z
            b = 1979-05-27 00:32:00.5-07:00
            c = 1979-05-27t07:32:00.123456789
            d = 1979-05-27
            e = 07:32:00.000
            f = 2000-02-29T00:00:00-00:00
            """)
        #expect(doc["a"] == .other("1979-05-27T07:32:00+00:00"))
        #expect(doc["b"] == .other("1979-05-27T00:32:00.500000-07:00"))
        #expect(doc["c"] == .other("1979-05-27T07:32:00.123456"))
        #expect(doc["d"] == .other("1979-05-27"))
        #expect(doc["e"] == .other("07:32:00"))
        #expect(doc["f"] == .other("2000-02-29T00:00:00+00:00"))
        #expect(throws: TOMLSyntaxError.self) { try TOMLValue.parse("a = 2100-02-29\n") }
    }

    @Test("nesting is bounded: 128 levels parse, deeper is a syntax error, never a stack overflow")
    func depth() throws {
        let deepest = TOMLParser.maximumDepth
        _ = try TOMLValue.parse(
            "a = " + String(repeating: "[", count: deepest) + String(repeating: "]", count: deepest))
        for text in [
            "a = " + String(repeating: "[", count: deepest + 1) + String(repeating: "]", count: deepest + 1),
            "a = " + String(repeating: "[", count: 200_000),
            "a = " + String(repeating: "{b = ", count: 100_000),
            String(repeating: "a.", count: deepest) + "a = 1\n",
            "[" + String(repeating: "a.", count: 100_000) + "a]\n",
        ] {
            let error = try #require(throws: TOMLSyntaxError.self) { try TOMLValue.parse(text) }
            #expect(error.message.contains("\(deepest)"), "\(error)")
        }
    }

    @Test("an error names its line and column; \\r\\n ends a line as \\n does")
    func positions() throws {
        let error = try #require(throws: TOMLSyntaxError.self) { try TOMLValue.parse("a = 1\r\nb = 2\r\nc = \r\n") }
        #expect(error.line == 3 && error.column == 5, "\(error)")
        #expect(error.description.hasPrefix("line 3, column 5: expected a value"), "\(error)")
    }

    @Test("text without quotes: the error quotes it and says to quote it, or leaves it out when asked")
    func unquotedText() throws {
        let error = try #require(throws: TOMLSyntaxError.self) { try TOMLValue.parse("a = 1\nformat = csv # why\n") }
        #expect(
            error.description
                == "line 2, column 10: expected a value (a \"string\", a number, true, false, a date, [an array] or "
                + "{an inline table}), found csv; text goes in quotes: \"csv\"")
        #expect(
            error.concealingValue.description
                == "line 2, column 10: expected a value (a \"string\", a number, true, false, a date, [an array] or "
                + "{an inline table}), found text without quotes; text goes in quotes: \"...\"")
        // Any other error is the same either way.
        let other = try #require(throws: TOMLSyntaxError.self) { try TOMLValue.parse("a = ?\n") }
        #expect(other.concealingValue == other && other.messageWithoutValue == nil)
        #expect(other.message.hasSuffix("found '?'"))
    }

    @Test("a key with control characters is escaped in the message")
    func escapedKeyInMessage() throws {
        let error = try #require(throws: TOMLSyntaxError.self) {
            try TOMLValue.parse("\"a\\u001B[31m\\nb\" = 1\n\"a\\u001B[31m\\nb\" = 2\n")
        }
        #expect(error.message == #"cannot redefine key '"a\u{1B}[31m\u{A}b"'"#, "\(error.message)")
    }
}
