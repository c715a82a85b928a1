import PythonBridge
import Testing

@Suite("Swift ⇄ Python conversions")
struct ConversionTests {
    static let samples: [(String, PythonValue)] = [
        ("None", .none),
        ("True", .bool(true)),
        ("False", .bool(false)),
        ("0", .int(0)),
        ("-9223372036854775808", .int(Int.min)),
        ("9223372036854775807", .int(Int.max)),
        ("9223372036854775808", .bigInt("9223372036854775808")),
        ("-2**200", .bigInt("-1606938044258990275541962092341162602522202993782792835301376")),
        ("1.5", .float(1.5)),
        ("-0.0", .float(-0.0)),
        ("float('inf')", .float(.infinity)),
        ("'héllo wörld 東京 😀 \\u0000 end'", .string("héllo wörld 東京 😀 \u{0} end")),
        ("''", .string("")),
        ("b'\\x00\\xffabc'", .bytes([0, 255, 97, 98, 99])),
        ("[]", .list([])),
        (
            "[1, 'a', None, [2.5, [True]]]",
            .list([.int(1), .string("a"), .none, .list([.float(2.5), .list([.bool(true)])])])
        ),
        ("(1, (2,), ())", .tuple([.int(1), .tuple([.int(2)]), .tuple([])])),
        (
            "{'a': 1, 'b': {'c': [1, 2], 'd': None}, 3: 'x', (1, 2): b''}",
            .dict([
                .init(.string("a"), .int(1)),
                .init(.string("b"), .object([("c", .list([.int(1), .int(2)])), ("d", .none)])),
                .init(.int(3), .string("x")),
                .init(.tuple([.int(1), .int(2)]), .bytes([])),
            ])
        ),
    ]

    @Test("Python → Swift gives the expected value", arguments: 0..<samples.count)
    func pythonToSwift(index: Int) async throws {
        let (expression, expected) = Self.samples[index]
        let value = try await python { try fetching { try PythonValue(python: evaluate(expression)) } }
        #expect(value == expected, "\(expression)")
    }

    @Test("Swift → Python equals the Python literal", arguments: 0..<samples.count)
    func swiftToPython(index: Int) async throws {
        let (expression, value) = Self.samples[index]
        let equal = try await python {
            try fetching {
                let object = try value.toPython()
                let globals = try Interpreter.newGlobals()
                try globals.setItem("converted", object)
                let result = try Interpreter.eval(
                    "converted == (\(expression)) and type(converted) is type(\(expression))", globals: globals)
                return try PythonValue(python: result)
            }
        }
        #expect(equal == .bool(true), "\(expression)")
    }

    @Test("a str holding a lone surrogate (json.loads gives one for \"\\ud82d\") is a UnicodeEncodeError, not a crash")
    func loneSurrogate() async throws {
        // Found by `scripts/fuzz JSONPython`: such a str cannot become a Swift String.
        let error = await #expect(throws: PythonException.self) {
            try await python {
                try fetching { try PythonValue(python: evaluate(#"__import__('json').loads('["a\\ud82db"]')"#)) }
            }
        }
        #expect(error?.typeName == "UnicodeEncodeError", "\(String(describing: error))")
    }

    @Test("NaN survives both ways")
    func nan() async throws {
        let isNaN = try await python {
            try fetching {
                let value = try PythonValue(python: evaluate("float('nan')"))
                guard case .float(let number) = value else { return false }
                let back = try value.toPython()
                let check = try evaluate("__import__('math').isnan")
                let backIsNaN = try PythonValue(python: check.call([back])) == .bool(true)
                return number.isNaN && backIsNaN
            }
        }
        #expect(isNaN)
    }

    @Test("a dict subclass and a list subclass convert as dict and list")
    func subclasses() async throws {
        let value = try await python {
            try fetching {
                try PythonValue(
                    python: evaluate(
                        "(OrderedDict([('z', 1), ('a', 2)]), L([1]))",
                        setup: "from collections import OrderedDict\nclass L(list): pass"))
            }
        }
        #expect(value == .tuple([.object([("z", .int(1)), ("a", .int(2))]), .list([.int(1)])]))
    }

    @Test("10,000-deep nesting converts both ways without recursion")
    func deepNesting() async throws {
        let depth = 10_000
        let (measured, rebuiltDepth) = try await python {
            try fetching {
                let nested = try evaluate(
                    "x",
                    setup:
                        "x = [1]\nfor _ in range(\(depth - 1)):\n    x = [x]\ny = {}\nfor _ in range(\(depth)):\n    y = {'k': y}"
                )
                let value = try PythonValue(python: nested)
                var measured = 0
                var cursor = value
                while case .list(let items) = cursor, let first = items.first {
                    measured += 1
                    cursor = first
                }
                let back = try value.toPython()
                let globals = try Interpreter.newGlobals()
                try globals.setItem("back", back)
                try Interpreter.exec(
                    "n = 0\nc = back\nwhile isinstance(c, list):\n    n += 1\n    c = c[0]", globals: globals)
                let rebuilt = try PythonValue(python: try #require(try globals.item("n")))
                _ = try PythonValue(
                    python: try evaluate("y", setup: "y = {}\nfor _ in range(\(depth)):\n    y = {'k': y}"))
                return (measured, rebuilt)
            }
        }
        #expect(measured == depth)
        #expect(rebuiltDepth == .int(depth))
    }

    @Test("a list that contains itself raises ValueError, not a crash")
    func selfContaining() async throws {
        let error = try await python {
            do {
                _ = try PythonValue(python: evaluate("x", setup: "x = []\nx.append(x)"))
                return "no error"
            } catch let error as ConversionError {
                return error.description
            }
        }
        #expect(error.contains("deeper than"))
    }

    @Test("unsupported types and lone surrogates are errors")
    func unsupported() async throws {
        let (setError, surrogate) = try await python {
            let setError: String
            do {
                _ = try PythonValue(python: evaluate("{1, 2}"))
                setError = "none"
            } catch let error as ConversionError {
                setError = error.description
            }
            let surrogate: String
            do {
                _ = try PythonValue(python: evaluate("'\\ud800'"))
                surrogate = "none"
            } catch is PythonErrorSet {
                surrogate = PythonException.fetch()?.typeName ?? "nothing set"
            }
            return (setError, surrogate)
        }
        #expect(setError.contains("'set'"))
        #expect(surrogate == "UnicodeEncodeError")
    }

    @Test("an unhashable Swift key raises TypeError")
    func unhashableKey() async throws {
        let name = try await python {
            do {
                _ = try PythonValue.dict([.init(.list([]), .none)]).toPython()
                return "none"
            } catch is PythonErrorSet {
                return PythonException.fetch()?.typeName ?? "nothing set"
            }
        }
        #expect(name == "TypeError")
    }
}
