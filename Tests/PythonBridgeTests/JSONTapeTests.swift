import CPython
import Foundation
import PythonBridge
import TestSupport
import Testing

/// The two-step decoder (`JSONTape.scan` without the GIL, then `JSONToPython.decode(_:tape:)`)
/// against the one-pass parser and `json.loads`: the same values, the same declines, the same
/// refusals at the same budgets, and no tape for what the one-pass parser must decide itself.
@Suite("JSON tape, then Python objects")
struct JSONTapeTests {
    /// What a decode answered, comparable: `json.dumps` of the value, or why there is none.
    enum Answer: Equatable, CustomStringConvertible {
        case value(String)
        case declined
        case refused(JSONToPython.Refusal)

        var description: String {
            switch self {
            case .value(let text): "value \(text.prefix(80))"
            case .declined: "declined"
            case .refused(let why): "refused \(why)"
            }
        }
    }

    static func answer(_ outcome: JSONToPython.Outcome) throws -> Answer {
        #expect(!PythonRaise.isSet, "an exception was left set")
        switch outcome {
        case .value(let value): return .value(try JSONToPythonTests.dump(value))
        case .declined: return .declined
        case .refused(let why): return .refused(why)
        }
    }

    static func onePass(_ document: [UInt8], budget: Int = JSONToPython.defaultBudget) throws -> Answer {
        try answer(document.withUnsafeBufferPointer { JSONToPython.decode($0, budget: budget) })
    }

    /// Through the tape when the scan makes one, else the one-pass parser (as `JSONDecoding` does).
    static func twoStep(_ document: [UInt8], budget: Int = JSONToPython.defaultBudget) throws -> Answer {
        let tape = JSONTape.scan(document)
        return try answer(
            document.withUnsafeBufferPointer { bytes in
                tape.map { JSONToPython.decode(bytes, tape: $0, budget: budget) }
                    ?? JSONToPython.decode(bytes, budget: budget)
            })
    }

    /// Edge cases beyond `JSONToPythonTests.taken`: escapes, surrogates, numbers at the edges of
    /// the scan's exact conversions, keys spelt with escapes, empty and one-character strings.
    static let edges: [String] = [
        "[\"\", \"a\", \"\u{e9}\", \"ab\", \"\\u0061\", \"\\n\", \"a\\u0000\", \"\u{7f}x\"]",
        "{\"a\": 1, \"\\u0061\": 2, \"b\\n\": 3, \"b\\n\": 4, \"\u{e9}t\u{e9}\": 5, \"\u{e9}t\u{e9}\": 6}",
        "[\"\\ud83d\\ude00\", \"\\ud83d\", \"\\ude00\\ud83d\", \"x\\udbff\\udfff\", \"\\ud800\\\\u0041\"]",
        "[\"0123456789abcdef0123456789abcdef\\\"\", \"\\/\\b\\f\\n\\r\\t\", \"\u{1F600}\u{1F600}\u{1F600}\u{1F600}xxxxxxxx\"]",
        "[0, -0, 1, -1, 999999999999999999, -99999999999999999, -999999999999999999, 1000000000000000000]",
        "[9223372036854775807, -9223372036854775808, 18446744073709551616, -123456789012345678901234567890]",
        "[-0.0, 0.0, -0e5, 0e-999, 0.0e999, 1e400, -1e400, 1e-400, 4.9e-324, 5e-324, 2.4703282292062328e-324]",
        "[1.7976931348623157e308, 1.7976931348623159e308, 2.2250738585072014e-308, 2.2250738585072011e-308]",
        "[0.1, 0.2, 0.3, 1e22, 1e23, 1e-22, 1e-23, 9007199254740992.0, 9007199254740993.0, 9007199254740993e-5]",
        "[123.456e-7, 3.141592653589793, 2.718281828459045e0, 1E+2, 1e+0, 1.0e-0, 100e-2, 0.000001, 12345e17]",
        "[17.000000000000001, 0.30000000000000004, 4503599627370497.5, 1.5e300, 7e-10, 123456789e-22]",
        "[true, false, null, NaN, Infinity, -Infinity, [], {}, [[]], [{}], {\"a\": []}, {\"a\": {}}]",
        "  {\"a\" :\t[ 1 , 2 ]\r\n, \"b\" : { } }  ",
        "[\"x\\u00e9y\", \"\\u6771\\u4eac\", \"\\u00ff\", \"\\u0100\", \"\\uffff\", \"\\u0080\"]",
        "{\"" + String(repeating: "k", count: 100) + "\": 1, \"" + String(repeating: "k", count: 100) + "\": 2}",
        // Keys in a repeated order, then in others (the scan guesses the next key from the last).
        "[{\"ab\":1,\"abc\":2},{\"ab\":1,\"abc\":2},{\"abc\":3,\"ab\":4},{\"a\":5,\"ab\":6},{\"ab\":7,\"abc\":8,\"abcd\":9}]",
        "[{\"abcdefghij\":1,\"abcdefghijk\":2},{\"abcdefghijk\":3,\"abcdefghij\":4},{\"abcdefghij\":{\"abcdefghij\":5}}]",
        "[{\"k\":1,\"\\u006b\":2},{\"k\":3,\"\\u006b\":4},{\"k\":5,\"k\\n\":6},{\"k\":7,\"k\\n\":8,\"k\":9}]",
    ]

    /// Numbers, many of each shape, for the scan's own float conversion: random digits and powers.
    static let numbers: [String] = {
        var generator = SplitMix64(seed: 43)
        var texts: [String] = []
        for _ in 0..<3000 {
            let digits = Int(generator.next() % 19) + 1
            var mantissa = String(Int(generator.next() % 9) + 1)
            for _ in 1..<digits { mantissa += String(generator.next() % 10) }
            let point = Int(generator.next() % UInt64(digits + 1))
            var text = mantissa
            let at = max(point, 1)
            if at < digits { text.insert(".", at: text.index(text.startIndex, offsetBy: at)) }
            if generator.next() % 2 == 0 { text += "e" + String(Int(generator.next() % 61) - 30) }
            if generator.next() % 3 == 0 { text = "-" + text }
            texts.append(text)
        }
        return texts
    }()

    @Test("documents the one-pass parser takes: a tape, and the same value as it and json.loads")
    func takenDocuments() async throws {
        try await Self.expectJSONLoadsValues((JSONToPythonTests.taken + Self.edges).map { Array($0.utf8) })
    }

    @Test("a quote's escape, a backslash, a control character, DEL or UTF-8 at every place of strings up to 40 bytes")
    func specialBytesEverywhere() async throws {
        // The scan skips plain bytes sixteen, then eight at a time: whatever ends a run must be
        // found in any lane of either.
        var taken: [[UInt8]] = []
        var declined: [[UInt8]] = []
        for length in 1...40 {
            for place in 0..<length {
                let before = String(repeating: "a", count: place)
                let after = String(repeating: "b", count: length - place - 1)
                // As keys only with an escape: a plain key enters the process-wide known-key
                // table, which other tests' budgets count on.
                for special in ["\\\"", "\\\\", "\\n"] {
                    taken.append(Array("[\"\(before)\(special)\(after)\",{\"\(before)\(special)\(after)\":1}]".utf8))
                }
                for special in ["\u{7f}", "\u{e9}", "\u{1F600}"] {
                    taken.append(Array("[\"\(before)\(special)\(after)\"]".utf8))
                }
                declined.append(Array("[\"\(before)\u{1}\(after)\"]".utf8))
                declined.append(Array("[\"\(before)".utf8) + [0xFF] + Array("\(after)\"]".utf8))
            }
        }
        try await Self.expectJSONLoadsValues(taken, shown: 80)
        // A control character: no tape; a byte no UTF-8 has: a tape whose build declines, or none.
        try await Self.expectDeclined(declined, shown: .max)
    }

    /// Each of `documents` is declined by the one-pass parser and by the tape's two steps alike
    /// (a failure shows `shown` bytes of the document).
    static func expectDeclined(_ documents: [[UInt8]], shown: Int = 40) async throws {
        let answers = try await python {
            try fetching { try documents.map { (try Self.twoStep($0), try Self.onePass($0)) } }
        }
        for (document, (twoStep, onePass)) in zip(documents, answers) {
            #expect(onePass == .declined, "\(document.prefix(shown))")
            #expect(twoStep == onePass, "\(document.prefix(shown))")
        }
    }

    /// Each of `documents` has a tape, and the tape's build, the one-pass parser and
    /// `json.loads` give the same value (a failure shows `shown` bytes of the document).
    static func expectJSONLoadsValues(_ documents: [[UInt8]], shown: Int = .max) async throws {
        let results = try await python {
            try fetching {
                try documents.map { document -> (Bool, Answer, Answer, String?) in
                    (
                        JSONTape.scan(document) != nil, try Self.twoStep(document), try Self.onePass(document),
                        try JSONToPythonTests.referenceDump(document)
                    )
                }
            }
        }
        for (document, (scanned, twoStep, onePass, reference)) in zip(documents, results) {
            let text = String(String(decoding: document, as: UTF8.self).prefix(shown))
            #expect(scanned, "no tape for \(text)")
            #expect(twoStep == onePass, "\(text)")
            #expect(twoStep == reference.map(Answer.value), "\(text)")
        }
    }

    @Test("3,000 random decimal numbers read to the same floats and ints as json.loads")
    func randomNumbers() async throws {
        let document = Array(("[" + Self.numbers.joined(separator: ",") + "]").utf8)
        let (twoStep, reference) = try await python {
            try fetching { (try Self.twoStep(document), try JSONToPythonTests.referenceDump(document)) }
        }
        #expect(reference != nil)
        #expect(twoStep == reference.map(Answer.value))
    }

    @Test("documents the one-pass parser declines: no tape, or a tape whose build declines too")
    func declinedDocuments() async throws {
        let invalid: [[UInt8]] = [
            Array("\"a".utf8) + [0xFF] + Array("\"".utf8), Array("[\"a".utf8) + [0xC3] + Array("\"]".utf8),
            Array("{\"k".utf8) + [0xC3] + Array("\": 1}".utf8), [0x5B, 0x31, 0x5D, 0x80],
            [0xEF, 0xBB, 0xBF] + Array("[1]".utf8), [0, 0x31], Array("[\"\\u12\"]".utf8),
            Array("[1, \"ok\", \"bad".utf8) + [0xF8] + Array("\"]".utf8),
        ]
        try await Self.expectDeclined(JSONToPythonTests.declined.map { Array($0.utf8) } + invalid)
    }

    @Test("nesting past 512 levels: no tape; the one-pass parser refuses it as before")
    func depth() async throws {
        let deep = Array(("[" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "]").utf8)
        let shallow = Array((String(repeating: "[", count: 512) + String(repeating: "]", count: 512)).utf8)
        #expect(JSONTape.scan(deep) == nil)
        #expect(JSONTape.scan(shallow) != nil)
        let (twoStep, onePass) = try await python {
            try fetching { (try Self.twoStep(deep), try Self.onePass(deep)) }
        }
        #expect(twoStep == .refused(.depth(512)))
        #expect(twoStep == onePass)
    }

    @Test("a tape past its word bound is not made; the one-pass parser decides")
    func wordBound() {
        let document = Array(("[" + Array(repeating: "1", count: 1000).joined(separator: ",") + "]").utf8)
        #expect(document.withUnsafeBufferPointer { JSONTape.scan($0, maxWords: 500) } == nil)
        #expect(document.withUnsafeBufferPointer { JSONTape.scan($0, maxWords: 5000) } != nil)
    }

    /// Globals holding `v`, `document` built from its tape, and `document` itself (bytes), for a
    /// comparison with `json.loads` in Python, and the tape; nil when the scan or the build
    /// declined (GIL held).
    static func builtBesideDocument(_ document: [UInt8]) throws -> (globals: PyRef, tape: JSONTape)? {
        guard let tape = JSONTape.scan(document),
            case .value(let built) = document.withUnsafeBufferPointer({ JSONToPython.decode($0, tape: tape) })
        else { return nil }
        let globals = try Interpreter.newGlobals()
        try globals.setItem("v", built)
        try globals.setItem("document", PythonValue.bytes(document).toPython())
        return (globals, tape)
    }

    /// The smallest budget under which `decode` answers a value.
    static func smallestBudget(_ document: [UInt8], _ decode: ([UInt8], Int) throws -> Answer) throws -> Int {
        var (low, high) = (0, 64 << 20)
        while low < high {
            let middle = (low + high) / 2
            if case .value = try decode(document, middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    @Test("the build charges the budget as the one-pass parser does: the same smallest budget, the same refusal")
    func budgetEquivalence() async throws {
        let long = String(repeating: "q", count: 80)
        let documents = [
            JSONToPythonTests.emptyObjects(3000),
            Array("[{\"\(long)1\": 1, \"\(long)2\": [1.5, \"x\"]}, {\"\(long)1\": 2, \"\(long)2\": null}]".utf8),
            Array("[{\"\\u0061b\": 1, \"\\u0061b\": 2}, {\"tape_new_key_\\n\": \"\\u00e9\", \"zz\": 1e400}]".utf8),
            Array("[123456789012345678901234567890, \"\u{e9}\u{e9}\", [[[]]], {\"\": {}}]".utf8),
            // Dicts of one shape (the build copies the second and later ones): refused inside one.
            Self.records(12),
        ]
        let results = try await python {
            try fetching {
                try documents.map { document -> (Int, Int, Answer, Answer) in
                    // The charges depend on the process-wide key table (a key it knows costs no
                    // new `str`), which other tests fill and empty (it is emptied when half
                    // full) whenever they get the GIL: a garbage collection in between can run
                    // Python code and let them. So a disagreement is measured again, up to three
                    // times; a real difference between the two builds stays in every attempt.
                    func measure() throws -> (Int, Int, Answer, Answer) {
                        // Decoded once first, so that the keys the table learns are known to
                        // both (each measure then meets the table as the other does).
                        _ = try Self.onePass(document)
                        let onePass = try Self.smallestBudget(document) { try Self.onePass($0, budget: $1) }
                        let twoStep = try Self.smallestBudget(document) { try Self.twoStep($0, budget: $1) }
                        return (
                            onePass, twoStep, try Self.onePass(document, budget: onePass - 1),
                            try Self.twoStep(document, budget: onePass - 1)
                        )
                    }
                    var measured = try measure()
                    for _ in 0..<2 {
                        let (onePass, twoStep, refusedOnce, refusedTwice) = measured
                        if onePass == twoStep, refusedOnce == .refused(.budget(onePass - 1)),
                            refusedTwice == refusedOnce
                        {
                            break
                        }
                        measured = try measure()
                    }
                    return measured
                }
            }
        }
        for (onePass, twoStep, refusedOnce, refusedTwice) in results {
            #expect(onePass == twoStep)
            #expect(refusedOnce == .refused(.budget(onePass - 1)))
            #expect(refusedTwice == refusedOnce)
        }
    }

    @Test("strings and keys are the objects the one-pass parser makes: shared ones, memoised keys, compact ASCII")
    func sameObjects() async throws {
        let document = Array(
            "[\"\", \"a\", \"\u{e9}\", \"plain ascii\", {\"tape_key\": 1}, {\"tape_key\": 2, \"\\u0074ape_key\": 3}]"
                .utf8)
        let checks = try await python {
            try fetching { () -> [String] in
                guard let tape = JSONTape.scan(document),
                    case .value(let built) = document.withUnsafeBufferPointer({ JSONToPython.decode($0, tape: tape) }),
                    case .value(let reference) = document.withUnsafeBufferPointer({ JSONToPython.decode($0) })
                else { return ["not decoded"] }
                let globals = try Interpreter.newGlobals()
                try globals.setItem("v", built)
                try globals.setItem("r", reference)
                try globals.setItem("document", PythonValue.bytes(document).toPython())
                try Interpreter.exec(
                    """
                    import json, sys
                    loaded = json.loads(document)
                    failures = []
                    if v[0] is not r[0] or v[1] is not r[1] or v[2] is not r[2]:
                        failures.append('empty and one-character strings are not the shared ones')
                    if not v[3].isascii() or sys.getsizeof(v[3]) != sys.getsizeof(loaded[3]):
                        failures.append('the ASCII string differs from json.loads\\'s in size')
                    if hash(v[3]) != hash('plain ascii') or {'plain ascii': 1}.get(v[3]) != 1:
                        failures.append('the ASCII string hashes differently')
                    if list(v[4])[0] is not list(v[5])[0] or list(v[4])[0] is not list(r[4])[0]:
                        failures.append('the key is not one object')
                    if v != loaded or v[5] != {'tape_key': 3}:
                        failures.append('values differ')
                    """, globals: globals)
                guard let failures = try globals.item("failures") else { return ["no result"] }
                return try (0..<PySequence.count(failures)).map {
                    try PyRef.checked(PySequence.item(failures, $0)).str()
                }
            }
        }
        #expect(checks.isEmpty, "\(checks)")
    }

    @Test("every recorded API response in ../shared/fixtures: a tape, and the value json.loads gives")
    func recordedResponses() async throws {
        let (files, documents) = try JSONToPythonTests.recordedFixtures()
        let results = try await python {
            try fetching {
                try documents.map { document -> (Bool, Answer, Answer, String?) in
                    (
                        JSONTape.scan(document) != nil, try Self.twoStep(document), try Self.onePass(document),
                        try JSONToPythonTests.referenceDump(document)
                    )
                }
            }
        }
        for (file, (scanned, twoStep, onePass, reference)) in zip(files, results) where reference != nil {
            #expect(scanned, "no tape for \(file.lastPathComponent)")
            #expect(twoStep == onePass, "\(file.lastPathComponent)")
            #expect(twoStep == reference.map(Answer.value), "\(file.lastPathComponent)")
        }
    }

    /// `count` records of one shape (nested dicts of a second shape, lists, scalars), then dicts
    /// that are almost that shape: keys in another order, one missing, one more, one repeated,
    /// one spelt with an escape, and dicts of one shape nested in each other.
    static func records(_ count: Int) -> [UInt8] {
        let records = (0..<count).map { index in
            "{\"id\":\(index),\"name\":\"repo\(index)\",\"owner\":{\"login\":\"u\(index % 3)\",\"id\":\(index % 3),"
                + "\"site_admin\":false},\"topics\":[\"a\",\"b\"],\"fork\":\(index % 2 == 0),\"score\":\(index).5,"
                + "\"license\":null,\"owner2\":{\"login\":\"v\",\"id\":1,\"site_admin\":true},\"type\":\"Repository\"}"
        }
        let others = [
            "{\"name\":\"x\",\"id\":1,\"owner\":{},\"topics\":[],\"fork\":true,\"score\":1,\"license\":null,\"owner2\":{}}",
            "{\"id\":1,\"name\":\"x\",\"owner\":{},\"topics\":[],\"fork\":true,\"score\":1,\"license\":null}",
            "{\"id\":1,\"name\":\"x\",\"owner\":{},\"topics\":[],\"fork\":true,\"score\":1,\"license\":null,\"owner2\":{},"
                + "\"extra\":2}",
            "{\"id\":1,\"name\":\"x\",\"id\":2,\"topics\":[],\"fork\":true,\"score\":1,\"license\":null,\"owner2\":{}}",
            "{\"id\":1,\"name\":\"x\",\"id\":2,\"topics\":[],\"fork\":true,\"score\":1,\"license\":null,\"owner2\":{}}",
            "{\"\\u0069d\":1,\"name\":\"x\",\"owner\":{},\"topics\":[],\"fork\":true,\"score\":1,\"license\":null,\"owner2\":{}}",
            "{\"id\":{\"id\":{\"id\":{\"id\":1}}}}", "{\"id\":{\"id\":{\"id\":{\"id\":[{\"id\":2},{\"id\":3}]}}}}",
        ]
        return Array(("[" + (records + others + records.prefix(3)).joined(separator: ",") + "]").utf8)
    }

    @Test("ASCII strings made in place: json.loads's str in text, size, hash, flags and every use")
    func stringsInPlace() async throws {
        // Every length from 0 to 300 (the words of the copy, its overlapping last word), as
        // values, keys, repeated values and inside escapes' neighbours.
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789-_/.:ABCDEFGHIJKLMNOPQRSTUVWXYZ~!".utf8)
        let strings = (0...300).map { length in
            String(decoding: (0..<length).map { alphabet[($0 * 7 + length) % alphabet.count] }, as: UTF8.self)
        }
        let values = strings.map { "\"\($0)\"" }.joined(separator: ",")
        // Keys of up to 64 bytes enter the process-wide known-key table, which other tests'
        // budgets count on: a few short ones, the long ones never entered.
        let keys = strings.enumerated().filter { $0.offset < 10 || $0.offset > 64 }
            .map { "\"\($0.element)\":\($0.offset)" }.joined(separator: ",")
        let repeated = strings.map { "{\"k\":\"\($0)\"}" }.joined(separator: ",")
        let document = Array("[[\(values)],{\(keys)},[\(repeated)],[\(repeated)]]".utf8)
        let checks = try await python {
            try fetching { () -> [String] in
                guard let (globals, _) = try Self.builtBesideDocument(document) else { return ["not decoded"] }
                try Interpreter.exec(
                    """
                    import json, sys
                    loaded = json.loads(document)
                    failures = []
                    def strings(value):
                        if isinstance(value, str):
                            yield value
                        elif isinstance(value, dict):
                            for key, item in value.items():
                                yield key
                                yield from strings(item)
                        elif isinstance(value, list):
                            for item in value:
                                yield from strings(item)
                    pairs = list(zip(strings(v), strings(loaded), strict=True))
                    for a, b in pairs:
                        if type(a) is not str or a != b or len(a) != len(b) or hash(a) != hash(b):
                            failures.append(f'{b!r}: {a!r}')
                        elif sys.getsizeof(a) != sys.getsizeof(b) or not a.isascii() or a.encode() != b.encode():
                            failures.append(f'{b!r}: size {sys.getsizeof(a)}, ascii {a.isascii()}')
                        elif (a + '!', a[1:], a.upper(), repr(a), a.encode('utf-16')) != (b + '!', b[1:], b.upper(), repr(b), b.encode('utf-16')):
                            failures.append(f'{b!r}: used differently')
                        elif sys.intern(a) is not sys.intern(b) or {a: 1}[b] != 1:
                            failures.append(f'{b!r}: interned or hashed differently')
                    if len(pairs) < 1200:
                        failures.append(f'{len(pairs)} strings')
                    """, globals: globals)
                guard let failures = try globals.item("failures") else { return ["no result"] }
                return try (0..<PySequence.count(failures)).map {
                    try PyRef.checked(PySequence.item(failures, $0)).str()
                }
            }
        }
        #expect(checks.isEmpty, "\(checks.prefix(10))")
    }

    @Test("dicts of one shape, copied from the first: json.loads's dicts, sizes, tracking, key objects")
    func copiedDicts() async throws {
        let document = Self.records(40)
        let checks = try await python {
            try fetching { () -> [String] in
                guard let (globals, tape) = try Self.builtBesideDocument(document) else { return ["not decoded"] }
                try Interpreter.exec(
                    """
                    import gc, json, sys
                    loaded = json.loads(document)
                    failures = []
                    def same(a, b, where):
                        if type(a) is not type(b) or a != b:
                            failures.append(f'{where}: {a!r} != {b!r}')
                        elif isinstance(a, (dict, list)):
                            if gc.is_tracked(a) != gc.is_tracked(b):
                                failures.append(f'{where}: tracked {gc.is_tracked(a)}, json.loads {gc.is_tracked(b)}')
                            if sys.getsizeof(a) != sys.getsizeof(b):
                                failures.append(f'{where}: {sys.getsizeof(a)} bytes, json.loads {sys.getsizeof(b)}')
                            if isinstance(a, dict):
                                if list(a) != list(b):
                                    failures.append(f'{where}: keys {list(a)}, json.loads {list(b)}')
                                for key in b:
                                    same(a[key], b[key], f'{where}.{key}')
                            else:
                                for index, (x, y) in enumerate(zip(a, b)):
                                    same(x, y, f'{where}[{index}]')
                    same(v, loaded, 'v')
                    # The records share their key objects, as one document's keys do in json.loads.
                    if any(a is not b for record in v[1:40] for a, b in zip(record, v[0])):
                        failures.append('a copied record has keys of its own')
                    # A string that is the last one under its key again is that str (ASCII, 2+ bytes).
                    if any(record['type'] is not v[0]['type'] for record in v[1:40]) or v[0]['type'] != 'Repository':
                        failures.append('a repeated string is a str of its own')
                    if v[1]['name'] is v[0]['name'] or v[1]['topics'][0] is not v[0]['topics'][0]:
                        failures.append('strings are not the ones json.loads makes where they differ')
                    # Each copy is a dict of its own: changing one changes no other, nor the next decode.
                    v[1]['id'] = -1
                    v[1]['added'] = 1
                    del v[2]['name']
                    v[3]['owner']['login'] = 'changed'
                    if v[4] != loaded[4] or v[0] != loaded[0] or v[3]['owner2'] != loaded[3]['owner2']:
                        failures.append('changing one copy changed another')
                    """, globals: globals)
                guard
                    case .value(let again) = document.withUnsafeBufferPointer({
                        JSONToPython.decode($0, tape: tape)
                    })
                else { return ["not decoded again"] }
                try globals.setItem("again", again)
                try Interpreter.exec(
                    """
                    if again != loaded:
                        failures.append('a second decode of the same tape differs')
                    """, globals: globals)
                guard let failures = try globals.item("failures") else { return ["no result"] }
                return try (0..<PySequence.count(failures)).map {
                    try PyRef.checked(PySequence.item(failures, $0)).str()
                }
            }
        }
        #expect(checks.isEmpty, "\(checks)")
    }

    @Test("copies stopped midway (a refusal, a decline) leave None's references as they were")
    func copiesStoppedMidway() async throws {
        // Refused inside a later record; declined at invalid UTF-8 inside the 30th record.
        let records = Self.records(30)
        // Invalid UTF-8 in the name of the 30th record (a copy), after its id.
        let text = String(decoding: records, as: UTF8.self)
        let broken = Array(text.replacingOccurrences(of: "repo29", with: "repo29\u{1}").utf8).map {
            $0 == 1 ? 0xFF : $0
        }
        let (budget, counts, outcomes) = try await python {
            try fetching { () -> (Int, [Int], [String]) in
                let budget = try Self.smallestBudget(records) { try Self.twoStep($0, budget: $1) }
                let tapes = [records, broken].map { JSONTape.scan($0) }
                // Read from C, running no Python code: other tests' threads cannot take the GIL
                // between the two readings.
                func noneCount() -> Int { apimacro_None().pointee.ob_refcnt }
                var outcomes: [String] = []
                let before = noneCount()
                for round in 0..<300 {
                    // Budgets far from the smallest: other tests' keys can come and go in the
                    // process-wide key table, and a known key costs nothing.
                    for (index, budget) in [(0, budget * 2), (0, budget / 2), (0, budget / 3), (1, budget * 2)] {
                        guard let tape = tapes[index] else { return (budget, [], ["no tape"]) }
                        let document = index == 0 ? records : broken
                        let outcome = document.withUnsafeBufferPointer {
                            JSONToPython.decode($0, tape: tape, budget: budget)
                        }
                        if round == 0 {
                            switch outcome {
                            case .value: outcomes.append("value")
                            case .declined: outcomes.append("declined")
                            case .refused: outcomes.append("refused")
                            }
                        }
                    }
                }
                return (budget, [before, noneCount()], outcomes)
            }
        }
        #expect(budget > 1000)
        #expect(outcomes == ["value", "refused", "refused", "declined"])
        #expect(counts.count == 2 && counts[0] == counts[1], "None's references: \(counts)")
    }

    @Test("more shapes and strings than a tape records: every value still json.loads's")
    func manyShapes() async throws {
        // Each of maxShapes + 100 shapes twice (the second a copy while the table has room).
        let shapes = JSONTape.maxShapes + 100
        // And strings under one key, each twice in a row (the second the first's `str`).
        let objects = (0..<shapes).map { index -> String in "{\"s\":\"v\(index / 2)\",\"k\(index)\":1}" }
        let document = Array(("[" + (objects + objects).joined(separator: ",") + "]").utf8)
        let (scanned, twoStep, reference) = try await python {
            try fetching {
                (
                    JSONTape.scan(document) != nil, try Self.twoStep(document),
                    try JSONToPythonTests.referenceDump(document)
                )
            }
        }
        #expect(scanned)
        #expect(reference != nil)
        #expect(twoStep == reference.map(Answer.value))
    }

    /// A random document of records: keys from a small pool in a few orders (so that shapes
    /// repeat, and nearly repeat), strings from a small pool (so that a key's last string
    /// comes back), nested records, lists, numbers, literals, escapes and non-ASCII text.
    static func randomRecords(_ generator: inout SplitMix64) -> String {
        let keys = ["id", "name", "url", "owner", "tags", "n", "k\\u0069", "\u{e9}t\u{e9}", "a", "bb"]
        let strings = [
            "\"x\"", "\"yy\"", "\"http://h/a/b\"", "\"http://h/a/c\"", "\"2017-10-10T16:00:00Z\"",
            "\"\u{e9}\u{e9}\"", "\"q\\nq\"", "\"\"", "\"abcdefghijklmnop\"", "\"abcdefghijklmnoq\"",
        ]
        func value(_ depth: Int, _ generator: inout SplitMix64) -> String {
            switch generator.next() % (depth > 2 ? 6 : 9) {
            case 0, 1, 2: return strings[Int(generator.next() % UInt64(strings.count))]
            case 3: return String(Int(generator.next() % 2000) - 1000)
            case 4: return ["true", "false", "null", "1.5", "-0.0", "1e400"][Int(generator.next() % 6)]
            case 5: return "\"s\(generator.next() % 7)\""
            case 6, 7: return record(depth + 1, &generator)
            default:
                let count = Int(generator.next() % 4)
                return "[" + (0..<count).map { _ in value(depth + 1, &generator) }.joined(separator: ",") + "]"
            }
        }
        func record(_ depth: Int, _ generator: inout SplitMix64) -> String {
            // One of three orders of a prefix of the pool, sometimes a key repeated or dropped.
            var chosen = Array(keys.prefix(Int(generator.next() % 6) + 1))
            switch generator.next() % 6 {
            case 0: chosen.reverse()
            case 1: if chosen.count > 1 { chosen.remove(at: Int(generator.next() % UInt64(chosen.count))) }
            case 2: chosen.append(chosen[0])
            case 3: chosen.append(keys[Int(generator.next() % UInt64(keys.count))])
            default: break
            }
            return "{" + chosen.map { "\"\($0)\":" + value(depth, &generator) }.joined(separator: ",") + "}"
        }
        let count = Int(generator.next() % 30) + 1
        return "[" + (0..<count).map { _ in record(0, &generator) }.joined(separator: ",") + "]"
    }

    /// Records whose values under a key are read against the last one (`againstLast` in the
    /// scan): the same string, or one of the same length that differs in a few bytes, each
    /// kind of byte at each place of strings of 1 to 40 bytes (words and their overlapping
    /// last one), and escapes, UTF-8 or a quote that ends a string early where they differ.
    static func nearlyRepeated(_ generator: inout SplitMix64) -> String {
        let plain = Array("abcxyz/:0123456789-._~".utf8)
        let length = Int(generator.next() % 40) + 1
        let base = (0..<length).map { _ in plain[Int(generator.next() % UInt64(plain.count))] }
        // Bytes of a JSON string literal's content put in place of one or two of the base's.
        let replacements: [[UInt8]] = [
            Array("q".utf8), Array("\\\"".utf8), Array("\\\\".utf8), Array("\\n".utf8), Array("\\/".utf8),
            Array("\u{e9}".utf8), Array("\u{7f}".utf8), Array("\u{1F600}".utf8), Array("\\u0041".utf8),
            Array("\\ud83d\\ude00".utf8), Array("\\ud800".utf8), Array("\u{20AC}".utf8),
        ]
        func variant(_ generator: inout SplitMix64) -> String {
            var bytes = base
            switch generator.next() % 8 {
            case 0, 1: break  // the same
            case 2, 3:
                // One plain byte changed: the same length, not the same string.
                let at = Int(generator.next() % UInt64(bytes.count))
                bytes[at] = plain[Int(generator.next() % UInt64(plain.count))]
            case 4, 5:
                // A replacement at any place, over as many bytes as it takes when it fits.
                let with = replacements[Int(generator.next() % UInt64(replacements.count))]
                let at = Int(generator.next() % UInt64(bytes.count))
                let over = min(with.count, bytes.count - at)
                bytes.replaceSubrange(at..<(at + over), with: with)
            case 6: bytes.removeLast(Int(generator.next() % UInt64(bytes.count)))
            default: bytes += Array("ab".utf8).prefix(Int(generator.next() % 3))
            }
            return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
        }
        // Keys of `randomRecords`'s pool only (a plain key enters the process-wide known-key
        // table, which other tests' budgets count on), their colons compact or not.
        let count = Int(generator.next() % 8) + 2
        let records = (0..<count).map { _ -> String in
            let colon = generator.next() % 5 == 0 ? " : " : ":"
            let one = "\"url\"" + colon + variant(&generator)
            let other = "\"name\":" + variant(&generator)
            return generator.next() % 4 == 0 ? "{\(other),\(one)}" : "{\(one),\(other),\"a\":1}"
        }
        return "[" + records.joined(separator: ",") + "]"
    }

    @Test("3,000 documents of strings that repeat or nearly, with each kind of byte at each place: json.loads's")
    func nearlyRepeatedStrings() async throws {
        var generator = SplitMix64(seed: 4344)
        let documents = (0..<3000).map { _ in Array(Self.nearlyRepeated(&generator).utf8) }
        try await Self.expectJSONLoadsValues(documents, shown: 300)
    }

    @Test("a control character or a byte no UTF-8 has where a string differs from the last: declined")
    func nearlyRepeatedDeclined() async throws {
        var documents: [[UInt8]] = []
        for length in 2...24 {
            for place in 0..<length {
                let last = Array(repeating: UInt8(ascii: "a"), count: length)
                for bad: UInt8 in [0x01, 0x1F, 0xFF, 0xC3] {
                    var next = last
                    next[place] = bad
                    documents.append(
                        Array("[{\"url\":\"".utf8) + last + Array("\"},{\"url\":\"".utf8) + next + Array("\"}]".utf8))
                }
            }
        }
        try await Self.expectDeclined(documents, shown: .max)
    }

    @Test("keys checked with their colon: compact, spaced, shorter, longer, escaped after a compact one")
    func keysWithColons() async throws {
        let documents = [
            // Keys of the pool only (`nearlyRepeated`): "n" is "name"'s prefix.
            "[{\"a\":1,\"name\":2},{\"a\" :1,\"name\":2},{\"a\":1,\"n\":2},{\"a\":1,\"name\":3},{\"a\":1,\"name\" :2}]",
            "[{\"a\":1,\"n\":2},{\"a\":1,\"name\":2},{\"a\":1,\"n\" :2},{\"a\":1,\"n\":{\"n\":{}}}]",
            "[{\"bb\":1},{\"bb\"\n:2},{\"bb\"\t: 3},{\"b\\u0062\":4},{\"bb\\\"\":5},{\"bb\":6,\"bb\":7}]",
            "[{\"name\":1,\"url\":2},{\"name\":3,\"url\" :4},{\"name\":5,\"url\":6},{\"url\":7,\"name\":8}]",
            "[{\"name\" : 1, \"url\" : 2}, {\"name\":3,\"url\":4}, {\"name\" :5,\"url\":6}]",
            "{\"url\":{\"url\":{\"url\":1}},\"name\":{\"url\":2,\"name\":{\"url\":3}}}",
            // After a comma: compact (comma, key and colon read at once), spaced, or another key.
            "[{\"a\":1,\"name\":2},{\"a\":1, \"name\":2},{\"a\":1 ,\"name\":2},{\"a\":1,\"n\":2}]",
            "[{\"a\":1,\"name\":{\"a\":1,\"name\":3}},{\"a\":[1,{\"a\":1,\"name\":2}],\"name\":4},{\"a\":1,\"name\":5}]",
        ]
        try await Self.expectJSONLoadsValues(documents.map { Array($0.utf8) })
    }

    @Test("positive integers of 1 to 20 digits before each byte that may follow one: json.loads's numbers")
    func integerEdges() async throws {
        var documents: [[UInt8]] = []
        for digits in 1...20 {
            let number = String("98765432109876543210".prefix(digits))
            for after in [",0]", "]", ".5]", "e5]", "E-5]", "e+0]", " ]", "\n]"] {
                documents.append(Array("[\(number)\(after)".utf8))
            }
            documents.append(Array("{\"a\":\(number)}".utf8))
            documents.append(Array(number.utf8))
        }
        try await Self.expectJSONLoadsValues(documents)
        // Not JSON: the one-pass parser declines, and so does the two-step decode.
        let invalid = ["[7.]", "[7e]", "[7e+]", "[12.e3]", "[01]", "[1x]", "[1-]"].map { Array($0.utf8) }
        try await Self.expectDeclined(invalid, shown: .max)
    }

    @Test("400 random documents of records (shapes and strings that repeat or nearly): json.loads's values")
    func randomDocuments() async throws {
        var generator = SplitMix64(seed: 4343)
        let documents = (0..<400).map { _ in Array(Self.randomRecords(&generator).utf8) }
        try await Self.expectJSONLoadsValues(documents, shown: 200)
    }
}
