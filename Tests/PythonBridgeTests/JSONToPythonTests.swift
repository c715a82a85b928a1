import Foundation
import PythonBridge
import Testing

/// The native JSON fast path against `json.loads`, the reference: whenever the
/// fast path answers, `json.dumps` of its value equals `json.dumps` of
/// `json.loads`' (so types, key order, floats, NaN and surrogates agree), and
/// it gives way (nil, no exception left set) on everything it does not take.
@Suite("JSON → Python fast path")
struct JSONToPythonTests {
    /// Documents the fast path must take, with the value `json.loads` gives.
    static let taken: [String] = [
        "{}", "[]", " \t\r\n[ ] ", "0", "-0", "7", "-12", "123456789012345678", "-12345678901234567",
        "1234567890123456789", "-9223372036854775809", "123456789012345678901234567890",
        "1.5", "-0.0", "1e3", "1E+3", "2.5e-3", "1e400", "-1e400", "4.9e-325", "0.1", "17.000000000000001",
        "true", "false", "null", "NaN", "Infinity", "-Infinity",
        "\"\"", "\"plain\"", "\"h\u{e9}llo w\u{f6}rld \u{6771}\u{4eac} \u{1F600}\"",
        "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"",
        "\"\\u0041\\u00e9\\u6771\"", "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
        "\"\\ud800\\ud800\\udc00\"", "\"a\\u0000b\"", "\"\u{7f}\"",
        "[1, [2, [3, [4, {\"a\": [5]}]]]]", "{\"a\": 1, \"b\": {\"c\": [1, 2.0, \"x\"], \"d\": null}}",
        "{\"k\": 1, \"k\": 2, \"j\": 3}", "[{\"id\": 1}, {\"id\": 2}, {\"id\": 3}]",
        "{\"\": \"\", \"\\u00e9\": \"\u{e9}\"}", "[true,false,null,NaN,-Infinity]",
    ]

    /// Documents the fast path gives way on (json.loads raises, or decodes them another way).
    static let declined: [String] = [
        "", " ", "[", "]", "{", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{1: 2}", "{\"a\":1,}", "01", "1.", ".5",
        "1e", "1e+", "-", "--1", "+1", "tru", "nul", "NaNa", "Infinit", "-Inf", "\"abc", "\"a\nb\"", "\"\\x\"",
        "\"\\u12\"", "\"\\u12g4\"", "[1] 2", "{} {}", "\"\\ud800\\uzzzz\"", "1" + String(repeating: "0", count: 5000),
    ]

    /// `json.dumps(value)` of the fast path's answer, or nil when it declined.
    static func fastDump(_ document: [UInt8]) throws -> String? {
        let value = document.withUnsafeBufferPointer { JSONToPython.parse($0) }
        #expect(!PythonRaise.isSet, "an exception was left set")
        guard let value else { return nil }
        return try dump(value)
    }

    static func dump(_ value: PyRef) throws -> String {
        let json = try Interpreter.import("json")
        return try json.attribute("dumps").call([value]).str()
    }

    /// `json.dumps(json.loads(document))`, or nil when json.loads raises.
    static func referenceDump(_ document: [UInt8]) throws -> String? {
        let json = try Interpreter.import("json")
        let bytes = try PythonValue.bytes(document).toPython()
        do {
            return try dump(try json.attribute("loads").call([bytes]))
        } catch is PythonErrorSet {
            PythonRaise.clear()
            return nil
        }
    }

    @Test("documents it takes equal json.loads", arguments: 0..<taken.count)
    func takenEqualsReference(index: Int) async throws {
        let document = Array(Self.taken[index].utf8)
        let (fast, reference) = try await python {
            try fetching { (try Self.fastDump(document), try Self.referenceDump(document)) }
        }
        #expect(fast != nil, "the fast path declined \(Self.taken[index])")
        #expect(fast == reference, "\(Self.taken[index])")
    }

    @Test("documents it declines go to json.loads", arguments: 0..<declined.count)
    func declinedGivesWay(index: Int) async throws {
        let document = Array(Self.declined[index].utf8)
        let fast = try await python { try fetching { try Self.fastDump(document) } }
        #expect(fast == nil, "the fast path took \(Self.declined[index].prefix(40))")
    }

    @Test("bytes json.loads reads as UTF-16/32 or with a BOM, and invalid UTF-8, are declined")
    func encodingsDeclined() async throws {
        let documents: [[UInt8]] = [
            [0xEF, 0xBB, 0xBF] + Array("[1]".utf8), [0xFE, 0xFF, 0, 0x31], [0xFF, 0xFE, 0x31, 0], [0, 0x31],
            [0x31, 0], [0x5B, 0, 0x5D, 0], Array("\"a".utf8) + [0xFF] + Array("\"".utf8),
            Array("\"a".utf8) + [0xC3] + Array("\"".utf8), [0x5B, 0x31, 0x5D, 0x80],
        ]
        let answers = try await python { try fetching { try documents.map { try Self.fastDump($0) } } }
        for (document, answer) in zip(documents, answers) { #expect(answer == nil, "took \(document)") }
    }

    @Test("raw lone surrogates in the bytes are kept, as json.loads' surrogatepass keeps them")
    func rawSurrogates() async throws {
        let document =
            Array("[\"a".utf8) + [0xED, 0xA0, 0x80] + Array("b\", \"\\ud800".utf8) + [0xED, 0xB0, 0x80]
            + Array("\"]".utf8)
        let (fast, reference) = try await python {
            try fetching { (try Self.fastDump(document), try Self.referenceDump(document)) }
        }
        #expect(fast != nil)
        #expect(fast == reference)
    }

    @Test("nesting past the limit is declined without a crash; json.loads decides")
    func deepNesting() async throws {
        let deep = Array((String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)).utf8)
        let shallow = Array((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8)
        let (deepAnswer, shallowAnswer) = try await python {
            try fetching { (try Self.fastDump(deep), try Self.fastDump(shallow)) }
        }
        #expect(deepAnswer == nil)
        #expect(shallowAnswer == String(repeating: "[", count: 500) + String(repeating: "]", count: 500))
    }

    @Test("nesting past 512 levels is a refusal from decode (json.loads would build what follows, unbounded)")
    func depthRefused() async throws {
        let document = Array(
            ("[" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + ", {}]").utf8)
        let refusal = try await python {
            try fetching { () -> JSONToPython.Refusal? in
                guard case .refused(let why) = document.withUnsafeBufferPointer({ JSONToPython.decode($0) }) else {
                    return nil
                }
                #expect(!PythonRaise.isSet)
                return why
            }
        }
        #expect(refusal == .depth(512))
    }

    /// `[{},{},…]` with `count` empty objects.
    static func emptyObjects(_ count: Int) -> [UInt8] {
        Array(("[" + Array(repeating: "{}", count: count).joined(separator: ",") + "]").utf8)
    }

    @Test("past its budget a document is refused and what was built is freed; under a larger one it decodes")
    func budgetRefused() async throws {
        // 20,000 empty dicts: about 1.4 MB as Python objects, refused at 500 KB.
        let document = Self.emptyObjects(20_000)
        let (refusal, leftAfterRefusal, heldByValue) = try await python {
            try fetching { () -> (JSONToPython.Refusal?, Int, Int) in
                // Counted within one hold of the GIL (nothing here runs bytecode, so no other
                // thread allocates objects meanwhile): pymalloc's blocks before and after.
                let blocks = try evaluate("__import__('sys').getallocatedblocks")
                // The cyclic collector, run by the allocations below, would free other tests'
                // garbage in the middle of the count (2,450 blocks once, the suite in full):
                // collected now, then off until the counts are taken.
                let gc = try evaluate("__import__('gc')")
                _ = try gc.callMethod("collect")
                _ = try gc.callMethod("disable")
                defer { _ = try? gc.callMethod("enable") }
                func count() throws -> Int {
                    guard case .int(let value) = try PythonValue(python: blocks.call()) else { return 0 }
                    return value
                }
                let before = try count()
                let outcome = document.withUnsafeBufferPointer { JSONToPython.decode($0, budget: 500_000) }
                #expect(!PythonRaise.isSet)
                let afterRefusal = try count()
                var refusal: JSONToPython.Refusal?
                if case .refused(let why) = outcome { refusal = why }
                guard case .value(let list) = document.withUnsafeBufferPointer({ JSONToPython.decode($0) }) else {
                    return (refusal, afterRefusal - before, 0)
                }
                #expect(PySequence.count(list) == 20_000)
                return (refusal, afterRefusal - before, try count() - afterRefusal)
            }
        }
        // About 6,900 dicts fit 500 KB: had they stayed, the count would show them.
        #expect(refusal == .budget(500_000))
        #expect(leftAfterRefusal < 1000, "\(leftAfterRefusal) blocks still held after the refusal")
        // Negative control: the count does see a decoded document's objects.
        #expect(heldByValue >= 19_000, "\(heldByValue) blocks for 20,000 dicts")
    }

    /// Shapes that cost the most Python memory per byte of JSON, each as a list of 2,000.
    static let denseShapes = [
        "{}", "[]", "[0]", "[[]]", "[[[]]]", "{\"a\":0}", "{\"a\":{}}", "{\"a\":[]}", "\"ab\"", "1000", "1.5",
        "[1.5,2.5]", "{\"id\":12345}",
    ]

    @Test("the budget's estimate is within 0.5–2 times what json.loads builds (sys.getsizeof), for the densest shapes")
    func estimateMatchesObjectSizes() async throws {
        let ratios = try await python {
            try fetching { () -> [String: Double] in
                var ratios: [String: Double] = [:]
                for shape in Self.denseShapes {
                    let document = Array(("[" + Array(repeating: shape, count: 2000).joined(separator: ",") + "]").utf8)
                    // The smallest budget it fits is what the parser estimates.
                    var (low, high) = (0, 64 << 20)
                    while low < high {
                        let middle = (low + high) / 2
                        if case .value = document.withUnsafeBufferPointer({ JSONToPython.decode($0, budget: middle) }) {
                            high = middle
                        } else {
                            low = middle + 1
                        }
                    }
                    // What json.loads builds, object by object (`sys.getsizeof`: with the GC
                    // header, a list's spare slots and a dict's table; shared objects once).
                    let globals = try Interpreter.newGlobals()
                    try globals.setItem("document", PythonValue.bytes(document).toPython())
                    try Interpreter.exec(
                        """
                        import json, sys
                        def measure(value):
                            seen, total, stack = set(), 0, [value]
                            while stack:
                                item = stack.pop()
                                if id(item) in seen:
                                    continue
                                seen.add(id(item))
                                total += sys.getsizeof(item)
                                if isinstance(item, dict):
                                    stack.extend(item.keys())
                                    stack.extend(item.values())
                                elif isinstance(item, list):
                                    stack.extend(item)
                            return total
                        size = measure(json.loads(document))
                        """, globals: globals)
                    guard case .int(let size) = try PythonValue(python: try #require(try globals.item("size"))) else {
                        continue
                    }
                    ratios[shape] = Double(low) / Double(size)
                }
                return ratios
            }
        }
        #expect(ratios.count == Self.denseShapes.count)
        for (shape, ratio) in ratios {
            #expect(ratio >= 0.5 && ratio <= 2, "\(shape): the estimate is \(ratio) times what json.loads builds")
        }
    }

    @Test("repeated keys are one str object, as json.loads memoises them")
    func keysMemoised() async throws {
        let same = try await python {
            try fetching { () -> Bool in
                let document = Array("[{\"login\": 1}, {\"login\": 2}]".utf8)
                guard let value = document.withUnsafeBufferPointer({ JSONToPython.parse($0) }) else { return false }
                let globals = try Interpreter.newGlobals()
                try globals.setItem("v", value)
                return try Interpreter.eval("list(v[0])[0] is list(v[1])[0]", globals: globals).str() == "True"
            }
        }
        #expect(same)
    }

    @Test("a key met in an earlier document is the same str object: keys are known across calls")
    func keysKnownAcrossDocuments() async throws {
        let same = try await python {
            try fetching { () -> Bool in
                let first = Array("{\"apimacro_known_key\": 1}".utf8)
                let second = Array("[{\"apimacro_known_key\": 2}]".utf8)
                guard let one = first.withUnsafeBufferPointer({ JSONToPython.parse($0) }),
                    let two = second.withUnsafeBufferPointer({ JSONToPython.parse($0) })
                else { return false }
                let globals = try Interpreter.newGlobals()
                try globals.setItem("a", one)
                try globals.setItem("b", two)
                return try Interpreter.eval("list(a)[0] is list(b[0])[0]", globals: globals).str() == "True"
            }
        }
        #expect(same)
    }

    @Test("past the known-key table's bounds (thousands of new keys, long keys) answers still equal json.loads")
    func keyTableBounds() async throws {
        let many = (0..<5000).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        let long = (0..<20).map { "\"\(String(repeating: "x", count: 100 + $0))\": \($0)" }.joined(separator: ", ")
        let documents = [
            "[{\(many)}, {\(many)}]", "{\(long), \"after\": [{\(long)}]}", "{\"k4999\": 1, \"brand_new_key\": 2}",
        ].map { Array($0.utf8) }
        let results = try await python {
            try fetching { try documents.map { (try Self.fastDump($0), try Self.referenceDump($0)) } }
        }
        for (fast, reference) in results {
            #expect(fast != nil)
            #expect(fast == reference)
        }
    }

    /// The recorded API responses in ../shared/fixtures (`.json` files, at least ten) and their bytes.
    static func recordedFixtures() throws -> (files: [URL], documents: [[UInt8]]) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../../shared/fixtures")
        let files =
            (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
            .filter { $0.pathExtension == "json" }
        try #require(files.count >= 10, "expected the recorded fixtures at \(root.path)")
        return (files, try files.map { Array(try Data(contentsOf: $0)) })
    }

    @Test("every recorded API response in ../shared/fixtures takes the fast path and equals json.loads")
    func recordedResponses() async throws {
        let (files, documents) = try Self.recordedFixtures()
        let results = try await python {
            try fetching { try documents.map { (try Self.fastDump($0), try Self.referenceDump($0)) } }
        }
        for (file, (fast, reference)) in zip(files, results) where reference != nil {
            #expect(fast != nil, "declined \(file.lastPathComponent)")
            #expect(fast == reference, "\(file.lastPathComponent)")
        }
    }
}
