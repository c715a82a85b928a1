import CPython

/// JSON text in UTF-8 straight to Python objects, in one pass over the bytes.
///
/// `json.loads(bytes)` first decodes the whole body into a `str` and then
/// scans that; this parser reads the bytes once and makes the objects
/// directly. It is a fast path only: it accepts a subset of what `json.loads`
/// accepts (plain UTF-8, no BOM, nesting up to `maxDepth`) and for anything
/// else (including every malformed document) declines, so the caller asks
/// `json.loads`, whose answer (value or exception) stays the reference. When
/// it does return a value, that value equals what `json.loads` gives: the same
/// types, the same `dict` key order, the same floats (`PyOS_string_to_double`,
/// as CPython's scanner), `NaN`/`Infinity`, lone surrogates kept. The
/// differential fuzzer (`Fuzz/JSONPython`) and `JSONToPythonTests` check it.
///
/// What one document may build is bounded (`decode`'s `budget`, `maxDepth`): a server's body
/// of 31 MiB of `[{},{},…]` would otherwise become about 870 MiB of Python objects (an empty
/// dict and its slot take 72 bytes, for 3 bytes of JSON), and one under the transport's 256 MiB
/// cap several GiB.
public enum JSONToPython {
    /// What `decode` made of a document.
    public enum Outcome {
        /// The document's value.
        case value(PyRef)
        /// Not taken: bytes other than plain UTF-8 JSON, or a malformed document. `json.loads`
        /// decides; on the same bytes it builds no more than this parse did before it stopped.
        case declined
        /// Refused, whatever `json.loads` would say: what the document would build is past a bound.
        case refused(Refusal)
    }

    /// Why a document was refused.
    public enum Refusal: Sendable, Equatable {
        /// Its Python objects would take more than this many bytes (as `decode` estimates them).
        case budget(Int)
        /// It nests deeper than this many arrays and objects.
        case depth(Int)
    }

    /// The most one document may build, as `decode` estimates the size of Python objects: 256 MiB.
    ///
    /// About 50–100 MB of JSON as APIs write it (strings, small objects); 10 MB of the densest
    /// (`[{},{},…]`); far above any page of a paginated API. Fixed, so it scales with nothing a
    /// server sends: the memory a decode takes is bounded by this and the body, never by the
    /// body times the 20–35 that the smallest objects cost.
    public static let defaultBudget = 256 << 20

    /// The deepest nesting `decode` takes: 512 arrays and objects.
    public static let defaultMaxDepth = 512

    /// The document as Python objects, nil when `json.loads` should decide, or a refusal.
    ///
    /// `budget` bounds the estimated size of what is built, in bytes: 64 for a list or dict,
    /// 56 plus its length in the document for a string (a key only when it makes a new `str`,
    /// plus 48 for its entry in the document's memo), 32 for a number, and for every value its
    /// place in its container (8 in a list, 48 in a dict). `JSONToPythonTests` checks the
    /// estimate against `sys.getsizeof` of what `json.loads` builds, for the shapes that cost
    /// most per byte. Past `budget`, or
    /// past `maxDepth`, everything built is released and the answer is a refusal.
    ///
    /// Needs the GIL; leaves no Python exception set.
    public static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, budget: Int = defaultBudget, maxDepth: Int = defaultMaxDepth
    ) -> Outcome {
        guard let base = bytes.baseAddress, takesFastPath(bytes) else { return .declined }
        var parser = Parser(start: base, count: bytes.count, maxDepth: maxDepth, budget: budget)
        defer { parser.releaseMemo() }
        guard let object = parser.document() else {
            PyErr_Clear()
            return parser.refusal.map { .refused($0) } ?? .declined
        }
        return .value(PyRef(owned: object))
    }

    /// The document `tape` was read from (`JSONTape.scan`, on any thread) as Python objects.
    ///
    /// The answer is the one `decode(bytes, budget:)` gives (the same objects, the same refusals,
    /// the same declines: a tape is made only of documents the one-pass grammar takes whole, and
    /// the build charges the budget in the one-pass parser's order). What is left for the GIL is
    /// making the objects: no byte is scanned, a plain ASCII string is copied into its `str`,
    /// and a key's `str` is looked up once per document, not once per object. Dicts of one shape
    /// (the same keys in the same order: a page's records) are built once with `PyDict_SetItem`;
    /// the later ones are copies of that one's table with their own values put in
    /// (`DictLayout`), the dicts `PyDict_SetItem` would have built.
    ///
    /// One difference no value shows: a key the known-key table gave (met in an earlier document)
    /// and met again after the table was emptied (past 1,024 distinct keys) stays one `str`, where
    /// the one-pass parser makes a second, equal one and charges it to the budget.
    ///
    /// `bytes` must be the document the tape was read from (one of another length goes to the
    /// one-pass parser). Needs the GIL; leaves no Python exception set.
    public static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, tape: JSONTape, budget: Int = defaultBudget
    ) -> Outcome {
        guard let base = bytes.baseAddress, tape.byteCount == bytes.count else { return decode(bytes, budget: budget) }
        var builder = TapeBuilder(document: base, tape: tape, budget: budget)
        defer { builder.release() }
        let built = tape.words.withUnsafeBufferPointer { words in
            tape.keys.withUnsafeBufferPointer { keys in
                tape.unescaped.withUnsafeBufferPointer { unescaped in
                    tape.shapeKeys.withUnsafeBufferPointer { shapeKeys in
                        tape.shapeStarts.withUnsafeBufferPointer { shapeStarts in
                            builder.build(
                                words: words, keys: keys, unescaped: unescaped,
                                shapes: (keys: shapeKeys, starts: shapeStarts))
                        }
                    }
                }
            }
        }
        guard let built else {
            PyErr_Clear()
            return builder.refusal.map { .refused($0) } ?? .declined
        }
        return .value(PyRef(owned: built))
    }

    /// The document as Python objects, or nil when `json.loads` should decide or `decode` refuses it.
    ///
    /// Needs the GIL; leaves no Python exception set.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth) -> PyRef? {
        guard case .value(let value) = decode(bytes, maxDepth: maxDepth) else { return nil }
        return value
    }

    /// Whether `json.detect_encoding` would say UTF-8 without a BOM: bytes `decode` reads as they are.
    public static func takesFastPath(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, first != 0, first != 0xEF, first != 0xFE, first != 0xFF else { return false }
        return bytes.count < 2 || bytes[1] != 0
    }
}

/// One parse: a cursor over the bytes, the open containers, and the memo that
/// makes repeated keys one `str` object (as `json.loads` does).
private struct Parser {
    let start: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    var cursor: UnsafePointer<UInt8>
    let maxDepth: Int
    /// The most `spent` may reach.
    let budget: Int
    /// The estimated size of what has been built (`JSONToPython.decode` says how it is counted).
    var spent = 0
    /// Why the parse stopped, when it stopped at a bound rather than at malformed input.
    var refusal: JSONToPython.Refusal?
    /// Open containers, innermost last; a dict's pending key beside it.
    var stack: [(container: PyPointer, isObject: Bool, key: PyPointer?)] = []
    var memo: PyPointer?
    /// Scratch for strings with escapes and for numbers (NUL-terminated copies).
    var scratch: [UInt8] = []

    /// What a list or dict costs, a number, a string besides its bytes, a new key's memo entry,
    /// and a value's place in a list and in a dict.
    static let containerCost = 64
    static let numberCost = 32
    static let stringCost = 56
    static let memoEntryCost = 48
    static let listSlotCost = 8
    static let dictSlotCost = 48

    init(start: UnsafePointer<UInt8>, count: Int, maxDepth: Int, budget: Int) {
        self.start = start
        self.end = start + count
        self.cursor = start
        self.maxDepth = maxDepth
        self.budget = budget
        stack.reserveCapacity(16)
    }

    mutating func releaseMemo() {
        if let memo { Py_DecRef(memo) }
        memo = nil
    }

    /// The whole document, or nil (containers still open are released).
    mutating func document() -> PyPointer? {
        guard let value = value() else {
            unwind()
            return nil
        }
        skipWhitespace()
        guard cursor == end else {
            Py_DecRef(value)
            return nil
        }
        return value
    }

    /// Releases every open container and pending key after a failure.
    mutating func unwind() {
        while let open = stack.popLast() {
            if let key = open.key { Py_DecRef(key) }
            Py_DecRef(open.container)
        }
    }

    /// Reads one value; containers are filled iteratively through `stack`.
    mutating func value() -> PyPointer? {
        let floor = stack.count
        while true {
            skipWhitespace()
            guard cursor < end else { return nil }
            var made: PyPointer
            switch cursor.pointee {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = cursor.pointee == UInt8(ascii: "{")
                cursor += 1
                guard stack.count - floor < maxDepth else {
                    refusal = .depth(maxDepth)
                    return nil
                }
                guard let container = isObject ? PyDict_New() : PyList_New(0) else { return nil }
                spent &+= Self.containerCost
                stack.append((container, isObject, nil))
                skipWhitespace()
                guard cursor < end else { return nil }
                if cursor.pointee == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    cursor += 1
                    made = stack.removeLast().container
                } else if isObject {
                    guard readKey() else { return nil }
                    continue
                } else {
                    continue
                }
            default:
                guard let scalar = scalar() else { return nil }
                made = scalar
            }
            // Attach `made` to the innermost container, closing those that end here.
            while stack.count > floor {
                guard attach(made) else { return nil }
                skipWhitespace()
                guard cursor < end else { return nil }
                let isObject = stack[stack.count - 1].isObject
                let byte = cursor.pointee
                cursor += 1
                if byte == UInt8(ascii: ",") {
                    if isObject {
                        skipWhitespace()
                        guard readKey() else { return nil }
                    }
                    break
                }
                guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return nil }
                made = stack.removeLast().container
            }
            if stack.count == floor { return made }
        }
    }

    /// Puts `value` (a new reference, consumed) into the innermost container; false, with
    /// `value` released, when that takes the parse past its budget.
    ///
    /// Every value but the document itself passes here, so this is where the budget is checked.
    mutating func attach(_ value: PyPointer) -> Bool {
        let top = stack.count - 1
        let container = stack[top].container
        spent &+= stack[top].isObject ? Self.dictSlotCost : Self.listSlotCost
        guard spent <= budget else {
            refusal = .budget(budget)
            Py_DecRef(value)
            return false
        }
        if let key = stack[top].key {
            stack[top].key = nil
            let status = PyDict_SetItem(container, key, value)
            Py_DecRef(key)
            Py_DecRef(value)
            return status == 0
        }
        let status = PyList_Append(container, value)
        Py_DecRef(value)
        return status == 0
    }

    /// `key` (a new reference), or the equal `str` met before in this document.
    ///
    /// `memo` (made on first use) keeps the first of each: a later one goes, and so does its
    /// charge (`spent` back to `charged`); a first one is charged its memo entry. Nil, `key`
    /// released, when the memo cannot be made or written.
    static func shared(_ key: PyPointer, memo: inout PyPointer?, charged: Int, spent: inout Int) -> PyPointer? {
        if memo == nil { memo = PyDict_New() }
        guard let memo, let shared = PyDict_SetDefault(memo, key, key) else {
            Py_DecRef(key)
            return nil
        }
        guard shared != key else {
            spent &+= memoEntryCost
            return key
        }
        spent = charged
        Py_IncRef(shared)
        Py_DecRef(key)
        return shared
    }

    /// `"key" :` inside an object; the key (one `str` per distinct key, as
    /// `json.loads` memoises them) waits on the stack for its value.
    ///
    /// A key seen before, spelt with the same bytes, is found by those bytes:
    /// no decoding, no hashing of a new `str`.
    mutating func readKey() -> Bool {
        guard cursor < end, cursor.pointee == UInt8(ascii: "\"") else { return false }
        let first = cursor + 1
        let lookup = KeyTable.known.find(from: first, end: end)
        if case .found(let known, let after) = lookup {
            cursor = after
            Py_IncRef(known)
            stack[stack.count - 1].key = known
        } else {
            let charged = spent
            guard let made = string(), let key = Self.shared(made, memo: &memo, charged: charged, spent: &spent)
            else { return false }
            if case .new(let hash, let count) = lookup {
                KeyTable.known.insert(from: first, hash: hash, count: count, object: key)
            }
            stack[stack.count - 1].key = key
        }
        skipWhitespace()
        guard cursor < end, cursor.pointee == UInt8(ascii: ":") else { return false }
        cursor += 1
        return true
    }

    // Always inlined (into `value`), with `string`: as they were before the budget's counting
    // made them a little bigger than the optimiser inlines by itself (a call per value cost
    // about 1 % of a 5 MB decode's instructions).
    @inline(__always)
    mutating func scalar() -> PyPointer? {
        switch cursor.pointee {
        case UInt8(ascii: "\""):
            return string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if cursor.pointee == UInt8(ascii: "-"), literal("-Infinity") { return PyFloat_FromDouble(-.infinity) }
            return number()
        case UInt8(ascii: "t"):
            return literal("true") ? newReference(apimacro_True()) : nil
        case UInt8(ascii: "f"):
            return literal("false") ? newReference(apimacro_False()) : nil
        case UInt8(ascii: "n"):
            return literal("null") ? newReference(apimacro_None()) : nil
        case UInt8(ascii: "N"):
            return literal("NaN") ? PyFloat_FromDouble(.nan) : nil
        case UInt8(ascii: "I"):
            return literal("Infinity") ? PyFloat_FromDouble(.infinity) : nil
        default:
            return nil
        }
    }

    func newReference(_ object: PyPointer) -> PyPointer {
        Py_IncRef(object)
        return object
    }

    /// Consumes `text` if the input continues with it.
    mutating func literal(_ text: StaticString) -> Bool { JSONGrammar.literal(text, &cursor, end: end) }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, as CPython's scanner
    /// reads it: an int when there is no fraction or exponent.
    mutating func number() -> PyPointer? {
        let first = cursor
        guard let isFloat = JSONGrammar.number(&cursor, end: end)?.isFloat else { return nil }
        let length = cursor - first
        spent &+= Self.numberCost
        if !isFloat, length <= 18 {
            var magnitude: Int64 = 0
            var digit = first.pointee == UInt8(ascii: "-") ? first + 1 : first
            while digit < cursor {
                magnitude = magnitude * 10 + Int64(digit.pointee &- UInt8(ascii: "0"))
                digit += 1
            }
            return PyLong_FromLongLong(first.pointee == UInt8(ascii: "-") ? -magnitude : magnitude)
        }
        return Self.number(first, length, isFloat: isFloat, scratch: &scratch)
    }

    /// The number spelt by `count` bytes at `text` (JSON's grammar, already checked) as Python
    /// reads it: a `float` by `PyOS_string_to_double`, an `int` of any size by
    /// `PyLong_FromString`, through `scratch` for the terminating NUL.
    static func number(
        _ text: UnsafePointer<UInt8>, _ count: Int, isFloat: Bool, scratch: inout [UInt8]
    ) -> PyPointer? {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: text, count: count))
        scratch.append(0)
        return scratch.withUnsafeMutableBufferPointer { buffer -> PyPointer? in
            buffer.baseAddress?.withMemoryRebound(to: CChar.self, capacity: buffer.count) { text in
                if isFloat {
                    let value = PyOS_string_to_double(text, nil, nil)
                    if value == -1, PyErr_Occurred() != nil { return nil }
                    return PyFloat_FromDouble(value)
                }
                return PyLong_FromString(text, nil, 10)
            }
        }
    }

    func characters(_ bytes: UnsafePointer<UInt8>) -> UnsafePointer<CChar> {
        UnsafeRawPointer(bytes).assumingMemoryBound(to: CChar.self)
    }

    /// A string at the cursor (on its opening quote); keys are memoised by the caller.
    @inline(__always)
    mutating func string() -> PyPointer? {
        cursor += 1
        let first = cursor
        while cursor < end {
            let byte = cursor.pointee
            if byte == UInt8(ascii: "\"") {
                spent &+= Self.stringCost &+ (cursor - first)
                let made = PyUnicode_DecodeUTF8(characters(first), cursor - first, "surrogatepass")
                cursor += 1
                return made
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: first) }
            if byte < 0x20 { return nil }
            cursor += 1
        }
        return nil
    }

    /// The rest of a string that holds escapes, decoded into `scratch` as
    /// UTF-8 (a lone surrogate as its three-byte form, read back with
    /// `surrogatepass`, as `json.loads` keeps it).
    mutating func escapedString(from first: UnsafePointer<UInt8>) -> PyPointer? {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: first, count: cursor - first))
        guard JSONEscapes.decodeRest(&cursor, end: end, into: &scratch) else { return nil }
        spent &+= Self.stringCost &+ scratch.count
        return scratch.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.flatMap { PyUnicode_DecodeUTF8(characters($0), buffer.count, "surrogatepass") }
        }
    }

    mutating func skipWhitespace() {
        while cursor < end {
            switch cursor.pointee {
            case 0x20, 0x09, 0x0A, 0x0D: cursor += 1
            default: return
            }
        }
    }
}

/// One build from a tape: `Parser`'s containers, memo and budget, fed from `JSONTape`'s words.
private struct TapeBuilder {
    /// An open container, and a dict's key waiting for its value (borrowed from `keyObjects`).
    struct Open {
        var container: PyPointer
        var isObject: Bool
        var key: PyPointer?
        /// For a copy of its shape's template: the value slots of its entries (`DictLayout`),
        /// filled in order; the first `filled` hold the values put there, the others `None`.
        var slots: UnsafeMutablePointer<PyPointer?>? = nil
        /// For a copy: its shape's keys, each checked against the tape's key before its value.
        var expected: UnsafePointer<Int32>? = nil
        var filled = 0
        var members = 0
        /// The object's shape (`JSONTape.shapeKeys`), -1 for none.
        var shape = -1
        /// Whether the copy is tracked by the garbage collector (once it holds a container).
        var tracked = false
    }

    let document: UnsafePointer<UInt8>
    let budget: Int
    var spent = 0
    var refusal: JSONToPython.Refusal?
    /// Open containers, `depth` of them (the tape's nesting bounds the room).
    let stack: UnsafeMutablePointer<Open>
    var depth = 0
    var memo: PyPointer?
    /// Each distinct key's `str` once made (a reference of its own), by its index in the tape.
    let keyObjects: UnsafeMutablePointer<PyPointer?>
    let keyCount: Int
    var scratch: [UInt8] = []
    /// The number of shapes the build copies dicts for: the tape's, or 0 when `DictLayout` is
    /// not usable (every dict then built with `PyDict_SetItem`).
    let shapeCount: Int
    /// Per shape: `notMet`, `first` (the first dict of that shape built, a reference in
    /// `shapeObjects`), `template` (its keys with values `None`, in `shapeObjects`), `never`.
    let shapeStates: UnsafeMutablePointer<UInt8>
    let shapeObjects: UnsafeMutablePointer<PyPointer?>
    static let notMet: UInt8 = 0
    static let first: UInt8 = 1
    static let template: UInt8 = 2
    static let never: UInt8 = 3
    /// Each repeated string's `str` once made (a reference of its own; `JSONTape.repeatedCount`).
    let repeatedStrings: UnsafeMutablePointer<PyPointer?>
    let repeatedCount: Int
    /// What makes ASCII strings in place (`StringLayout`); nil: `PyUnicode_New` makes them.
    let strings: StringLayout.Maker?
    /// `None` (a dict copy's values until its own are put in).
    static var none: PyPointer { apimacro_None() }

    init(document: UnsafePointer<UInt8>, tape: JSONTape, budget: Int) {
        self.document = document
        self.budget = budget
        stack = .allocate(capacity: tape.depth + 1)
        keyCount = tape.keys.count
        keyObjects = .allocate(capacity: max(keyCount, 1))
        keyObjects.initialize(repeating: nil, count: keyCount)
        let shapes = tape.shapeStarts.count - 1
        shapeCount = shapes > 0 && DictLayout.usable ? shapes : 0
        shapeStates = .allocate(capacity: max(shapeCount, 1))
        shapeStates.initialize(repeating: Self.notMet, count: shapeCount)
        shapeObjects = .allocate(capacity: max(shapeCount, 1))
        shapeObjects.initialize(repeating: nil, count: shapeCount)
        repeatedCount = tape.repeatedCount
        strings = StringLayout.maker
        repeatedStrings = .allocate(capacity: max(repeatedCount, 1))
        repeatedStrings.initialize(repeating: nil, count: repeatedCount)
    }

    mutating func release() {
        if let memo { Py_DecRef(memo) }
        memo = nil
        for index in 0..<keyCount {
            if let key = keyObjects[index] { Py_DecRef(key) }
        }
        for shape in 0..<shapeCount {
            if let object = shapeObjects[shape] { Py_DecRef(object) }
        }
        for index in 0..<repeatedCount {
            if let string = repeatedStrings[index] { Py_DecRef(string) }
        }
        repeatedStrings.deallocate()
        keyObjects.deallocate()
        shapeStates.deallocate()
        shapeObjects.deallocate()
        stack.deallocate()
    }

    // The tape's kinds as plain numbers, for the switch below.
    static let arrayStart = JSONTape.Kind.arrayStart.rawValue
    static let objectStart = JSONTape.Kind.objectStart.rawValue
    static let end = JSONTape.Kind.end.rawValue
    static let asciiString = JSONTape.Kind.asciiString.rawValue
    static let utf8String = JSONTape.Kind.utf8String.rawValue
    static let escapedString = JSONTape.Kind.escapedString.rawValue
    static let key = JSONTape.Kind.key.rawValue
    static let int = JSONTape.Kind.int.rawValue
    static let bigInt = JSONTape.Kind.bigInt.rawValue
    static let double = JSONTape.Kind.double.rawValue
    static let floatText = JSONTape.Kind.floatText.rawValue
    static let literal = JSONTape.Kind.literal.rawValue
    static let firstOfRepeated = JSONTape.Kind.firstOfRepeated.rawValue
    static let repeated = JSONTape.Kind.repeated.rawValue

    /// The document's value, or nil (everything built so far released; `refusal` says when the
    /// budget stopped it).
    mutating func build(
        words: UnsafeBufferPointer<UInt64>, keys: UnsafeBufferPointer<JSONTape.Key>,
        unescaped: UnsafeBufferPointer<UInt8>,
        shapes: (keys: UnsafeBufferPointer<Int32>, starts: UnsafeBufferPointer<Int32>)
    ) -> PyPointer? {
        guard let word = words.baseAddress else { return nil }
        let count = words.count
        var at = 0
        while at < count {
            let head = word[at]
            let kind = head >> 60
            let payload = Int(truncatingIfNeeded: head & JSONTape.payloadMask)
            at += 1
            let made: PyPointer?
            var isContainer = false
            switch kind {
            case Self.key:
                let top = stack + (depth - 1)
                if let expected = top.pointee.expected {
                    // A copy's key: already in its entry, and made (and charged) by the first
                    // object of this shape; only checked to be the one the shape says.
                    let filled = top.pointee.filled
                    guard filled < top.pointee.members, expected[filled] == Int32(truncatingIfNeeded: payload) else {
                        return failed()
                    }
                    guard fillCopy(word, count: count, at: &at) else { return failed() }
                    continue
                }
                guard let key = key(payload, keys: keys, unescaped: unescaped) else { return failed() }
                top.pointee.key = key
                continue
            case Self.asciiString:
                spent &+= Parser.stringCost &+ payload
                made = ascii(document + Int(truncatingIfNeeded: word[at]), payload)
                at += 1
            case Self.int:
                spent &+= Parser.numberCost
                made = PyLong_FromLongLong(Int64(bitPattern: word[at]))
                at += 1
            case Self.arrayStart, Self.objectStart:
                let isObject = kind == Self.objectStart
                let shape = isObject && payload <= shapeCount ? payload - 1 : -1
                spent &+= Parser.containerCost
                if shape >= 0, let copy = copy(shape, shapes: shapes) {
                    (stack + depth).initialize(to: copy)
                    depth += 1
                    continue
                }
                guard let container = isObject ? PyDict_New() : PyList_New(0) else { return failed() }
                (stack + depth).initialize(to: Open(container: container, isObject: isObject, key: nil, shape: shape))
                depth += 1
                continue
            case Self.end:
                let open = stack + (depth - 1)
                if open.pointee.slots != nil {
                    let members = open.pointee.members
                    guard open.pointee.filled == members else { return failed() }
                    // The `None`s the values replaced had a reference each.
                    Self.none.pointee.ob_refcnt -= members
                } else if open.pointee.shape >= 0, shapeStates[open.pointee.shape] == Self.notMet {
                    // The first dict of its shape: kept, its table copied for the next ones.
                    Py_IncRef(open.pointee.container)
                    shapeObjects[open.pointee.shape] = open.pointee.container
                    shapeStates[open.pointee.shape] = Self.first
                }
                depth -= 1
                made = open.pointee.container
                isContainer = true
            case Self.literal:
                switch payload {
                case 0: made = Self.newReference(apimacro_False())
                case 1: made = Self.newReference(apimacro_True())
                case 2: made = Self.newReference(apimacro_None())
                default: made = PyFloat_FromDouble(payload == 3 ? .nan : payload == 4 ? .infinity : -.infinity)
                }
            case Self.repeated:
                // The `str` made at the string's first occurrence (earlier in the tape).
                spent &+= Parser.stringCost &+ payload
                made = repeatedStrings[Int(truncatingIfNeeded: word[at])].map(Self.newReference)
                at += 1
            case Self.firstOfRepeated:
                spent &+= Parser.stringCost &+ payload
                let place = word[at]
                made = ascii(document + Int(truncatingIfNeeded: place & 0xFFFF_FFFF), payload)
                if let made { repeatedStrings[Int(truncatingIfNeeded: place >> 32)] = Self.newReference(made) }
                at += 1
            case Self.utf8String:
                spent &+= Parser.stringCost &+ payload
                made = Self.utf8(document + Int(truncatingIfNeeded: word[at]), payload)
                at += 1
            case Self.escapedString:
                spent &+= Parser.stringCost &+ payload
                made = unescaped.baseAddress.flatMap { Self.utf8($0 + Int(truncatingIfNeeded: word[at]), payload) }
                at += 1
            case Self.double:
                spent &+= Parser.numberCost
                made = PyFloat_FromDouble(Double(bitPattern: word[at]))
                at += 1
            case Self.bigInt, Self.floatText:
                spent &+= Parser.numberCost
                made = number(document + Int(truncatingIfNeeded: word[at]), payload, isFloat: kind == Self.floatText)
                at += 1
            default:
                made = nil
            }
            guard let made else { return failed() }
            if depth == 0 { return made }
            guard attach(made, isContainer: isContainer) else { return failed() }
            // In a copy, the next member's key is checked here rather than through the switch.
            let top = stack + (depth - 1)
            if let expected = top.pointee.expected, at < count, word[at] >> 60 == Self.key {
                let filled = top.pointee.filled
                guard filled < top.pointee.members,
                    expected[filled] == Int32(truncatingIfNeeded: word[at] & JSONTape.payloadMask)
                else { return failed() }
                at += 1
                guard fillCopy(word, count: count, at: &at) else { return failed() }
            }
        }
        return failed()
    }

    /// The members of the copy on top that are plain values, in a row from `at`, built in a loop of their own.
    ///
    /// Plain values: ASCII and repeated strings, ints, `true`, `false`, `null`; `at` is a value's
    /// first word, after its key was checked. Each is made, charged and put in its entry as
    /// `build` does it (the same charges in the same order, the same budget check, each next
    /// key checked against the shape), with the copy's state in registers and no dispatch through `build`'s switch and
    /// `attach` (~30 instructions a member less; most of a page's values). Stops at anything
    /// else (a container, the copy's end, another kind of value) for `build`, `at` on it;
    /// false where `build` would fail (`refusal` set when the budget stopped it).
    @inline(__always)
    mutating func fillCopy(_ word: UnsafePointer<UInt64>, count: Int, at: inout Int) -> Bool {
        let top = stack + (depth - 1)
        guard let slots = top.pointee.slots, let expected = top.pointee.expected else { return true }
        // In locals: the C calls below could write `self` as far as the compiler knows, and its
        // fields would be read again after each.
        let members = top.pointee.members
        let document = self.document
        let budget = self.budget
        let strings = self.strings
        let repeatedStrings = self.repeatedStrings
        var filled = top.pointee.filled
        var spent = self.spent
        var position = at
        defer {
            top.pointee.filled = filled
            self.spent = spent
            at = position
        }
        while position < count {
            let head = word[position]
            let payload = Int(truncatingIfNeeded: head & JSONTape.payloadMask)
            let value: PyPointer?
            var words = 2
            switch head >> 60 {
            case Self.asciiString:
                spent &+= Parser.stringCost &+ payload
                value = Self.ascii(document + Int(truncatingIfNeeded: word[position &+ 1]), payload, strings)
            case Self.repeated:
                spent &+= Parser.stringCost &+ payload
                value = repeatedStrings[Int(truncatingIfNeeded: word[position &+ 1])].map(Self.newReference)
            case Self.firstOfRepeated:
                spent &+= Parser.stringCost &+ payload
                let place = word[position &+ 1]
                value = Self.ascii(document + Int(truncatingIfNeeded: place & 0xFFFF_FFFF), payload, strings)
                if let value { repeatedStrings[Int(truncatingIfNeeded: place >> 32)] = Self.newReference(value) }
            case Self.int:
                spent &+= Parser.numberCost
                value = PyLong_FromLongLong(Int64(bitPattern: word[position &+ 1]))
            case Self.literal where payload <= 2:
                words = 1
                value = Self.newReference(
                    payload == 0 ? apimacro_False() : payload == 1 ? apimacro_True() : apimacro_None())
            default:
                return true
            }
            guard let value else { return false }
            spent &+= Parser.dictSlotCost
            guard spent <= budget else {
                refusal = .budget(budget)
                Py_DecRef(value)
                return false
            }
            slots[2 &* filled &+ 1] = value
            filled &+= 1
            position &+= words
            guard position < count, word[position] >> 60 == Self.key else { return true }
            guard filled < members,
                expected[filled] == Int32(truncatingIfNeeded: word[position] & JSONTape.payloadMask)
            else { return false }
            position &+= 1
        }
        return true
    }

    /// Releases the open containers (their pending keys are `keyObjects`'); nil.
    mutating func failed() -> PyPointer? {
        while depth > 0 {
            depth -= 1
            // A copy's filled slots hold values in place of `None`s that had a reference each.
            if stack[depth].slots != nil { Self.none.pointee.ob_refcnt -= stack[depth].filled }
            Py_DecRef(stack[depth].container)
        }
        return nil
    }

    /// A new dict of shape `shape` as a copy of the shape's template (made from the first dict
    /// of that shape when this is the second), its values to be put in its entries; nil when
    /// the shape is not copied (met once so far, keys repeated in it, a layout `DictLayout`
    /// does not vouch for): the dict is then built with `PyDict_SetItem`.
    ///
    /// What a copy allocates before its values are charged is its key table: no bigger than
    /// the first dict's, charged already.
    mutating func copy(
        _ shape: Int, shapes: (keys: UnsafeBufferPointer<Int32>, starts: UnsafeBufferPointer<Int32>)
    ) -> Open? {
        let state = shapeStates[shape]
        guard state == Self.template || state == Self.first, let keys = shapes.keys.baseAddress else { return nil }
        let first = Int(shapes.starts[shape])
        let members = Int(shapes.starts[shape + 1]) - first
        if state == Self.first { guard makeTemplate(shape, members: members) else { return nil } }
        guard let template = shapeObjects[shape] else { return nil }
        guard let dict = PyDict_Copy(template) else {
            PyErr_Clear()
            return nil
        }
        guard let slots = DictLayout.entries(of: dict, count: members) else {
            Py_DecRef(dict)
            shapeStates[shape] = Self.never
            return nil
        }
        return Open(
            container: dict, isObject: true, key: nil, slots: slots, expected: keys + first, members: members,
            shape: shape)
    }

    /// Turns the first dict of `shape` into its template: a copy of it whose values are all
    /// `None` (not tracked by the garbage collector, as a dict of `str` and `None` is not).
    mutating func makeTemplate(_ shape: Int, members: Int) -> Bool {
        shapeStates[shape] = Self.never
        guard let first = shapeObjects[shape] else { return false }
        shapeObjects[shape] = nil
        defer { Py_DecRef(first) }
        // `members` entries, none repeated (`{"a":1,"a":2}` has one entry for two members).
        guard DictLayout.entries(of: first, count: members) != nil, let template = PyDict_Copy(first) else {
            PyErr_Clear()
            return false
        }
        guard let slots = DictLayout.entries(of: template, count: members) else {
            Py_DecRef(template)
            return false
        }
        let none = Self.none
        for index in 0..<members {
            // The first dict holds a reference to each value: dropping the copy's frees nothing.
            slots[2 * index + 1]?.pointee.ob_refcnt -= 1
            slots[2 * index + 1] = none
        }
        none.pointee.ob_refcnt += members
        if PyObject_GC_IsTracked(template) != 0 { PyObject_GC_UnTrack(template) }
        shapeObjects[shape] = template
        shapeStates[shape] = Self.template
        return true
    }

    /// `Parser.attach`: into the innermost container, with the budget checked.
    ///
    /// The key is borrowed (`keyObjects` holds it). Once the container holds `value`, our
    /// reference to it is dropped in place: it cannot be the last, so no deallocation is due.
    ///
    /// Into a copy, `value` goes into the entry its key has (the key was checked), and the copy
    /// is tracked by the garbage collector once it holds a container, as `PyDict_SetItem` does.
    @inline(__always)
    mutating func attach(_ value: PyPointer, isContainer: Bool) -> Bool {
        let top = stack + (depth - 1)
        spent &+= top.pointee.isObject ? Parser.dictSlotCost : Parser.listSlotCost
        guard spent <= budget else {
            refusal = .budget(budget)
            Py_DecRef(value)
            return false
        }
        if let slots = top.pointee.slots {
            let filled = top.pointee.filled
            slots[2 * filled + 1] = value
            top.pointee.filled = filled + 1
            if isContainer, !top.pointee.tracked {
                top.pointee.tracked = true
                if PyObject_GC_IsTracked(top.pointee.container) == 0 { PyObject_GC_Track(top.pointee.container) }
            }
            return true
        }
        let status: Int32
        if let key = top.pointee.key {
            top.pointee.key = nil
            status = PyDict_SetItem(top.pointee.container, key, value)
        } else {
            status = PyList_Append(top.pointee.container, value)
        }
        guard status == 0 else {
            Py_DecRef(value)
            return false
        }
        value.pointee.ob_refcnt -= 1
        return true
    }

    /// The key with index `index`, borrowed (`keyObjects` holds it): at its first use in the
    /// document made as `Parser.readKey` makes it (the known-key table, else a new `str` through
    /// the memo, with the same charges), afterwards the same object again at no charge, as
    /// `readKey` finds it.
    @inline(__always)
    mutating func key(
        _ index: Int, keys: UnsafeBufferPointer<JSONTape.Key>, unescaped: UnsafeBufferPointer<UInt8>
    ) -> PyPointer? {
        if let known = keyObjects[index] { return known }
        return newKey(index, keys: keys, unescaped: unescaped)
    }

    mutating func newKey(
        _ index: Int, keys: UnsafeBufferPointer<JSONTape.Key>, unescaped: UnsafeBufferPointer<UInt8>
    ) -> PyPointer? {
        let spec = keys[index]
        var lookup = KeyTable.Lookup.unusual
        let text: UnsafePointer<UInt8>
        if spec.escaped {
            guard let base = unescaped.baseAddress else { return nil }
            text = base + spec.offset
        } else {
            text = document + spec.offset
            lookup = KeyTable.known.find(from: text, count: spec.count, hash: spec.hash)
        }
        var key: PyPointer
        if case .found(let known, _) = lookup {
            Py_IncRef(known)
            key = known
        } else {
            let charged = spent
            spent &+= Parser.stringCost &+ spec.count
            guard let made = spec.ascii ? ascii(text, spec.count) : Self.utf8(text, spec.count) else {
                return nil
            }
            guard let shared = Parser.shared(made, memo: &memo, charged: charged, spent: &spent) else { return nil }
            key = shared
            if case .new(let hash, let count) = lookup {
                KeyTable.known.insert(from: text, hash: hash, count: count, object: key)
            }
        }
        keyObjects[index] = key
        return key
    }

    /// A `str` of plain ASCII bytes: made at its size and the bytes copied in (the empty string
    /// and one character are CPython's shared ones, as `PyUnicode_DecodeUTF8` gives them), in
    /// place when `StringLayout` vouches for the layout.
    @inline(__always)
    func ascii(_ text: UnsafePointer<UInt8>, _ count: Int) -> PyPointer? {
        Self.ascii(text, count, strings)
    }

    /// `ascii`, with the maker given (`fillCopy` keeps it in a register).
    @inline(__always)
    static func ascii(_ text: UnsafePointer<UInt8>, _ count: Int, _ strings: StringLayout.Maker?) -> PyPointer? {
        guard count > 1 else { return utf8(text, count) }
        if let strings { return strings.make(text, count) }
        guard let made = PyUnicode_New(count, 127) else { return nil }
        // A compact ASCII string's characters follow its `PyASCIIObject` header.
        (UnsafeMutableRawPointer(made) + MemoryLayout<PyASCIIObject>.size).copyMemory(from: text, byteCount: count)
        return made
    }

    @inline(__always)
    static func utf8(_ text: UnsafePointer<UInt8>, _ count: Int) -> PyPointer? {
        PyUnicode_DecodeUTF8(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self), count, "surrogatepass")
    }

    /// `object` (True, False, None), with a reference more (`Py_INCREF` in place).
    @inline(__always)
    static func newReference(_ object: PyPointer) -> PyPointer {
        object.pointee.ob_refcnt += 1
        return object
    }

    /// A number the scan left as text, read as `Parser.number` reads it.
    mutating func number(_ text: UnsafePointer<UInt8>, _ count: Int, isFloat: Bool) -> PyPointer? {
        Parser.number(text, count, isFloat: isFloat, scratch: &scratch)
    }
}

/// Object keys by their raw bytes, kept for the life of the process: an
/// open-addressing table of the distinct plain keys met so far (a key with an
/// escape is never entered), each with a copy of its bytes and a reference to
/// its `str`.
///
/// API answers repeat the same keys call after call (`login`, `id`, `url`…):
/// a key seen before, in this document or an earlier one, is found by its
/// bytes, with no decoding and no new `str` (a one-user call spent a seventh
/// of its instructions making its ~30 keys). Bounded: at most `capacity / 2`
/// keys of at most `longestKey` bytes (a longer key goes through the
/// document's memo only, as before); a full table is emptied and fills again
/// with the keys met from then on, so a server sending endless new keys costs
/// memory no more than once.
///
/// Touched only with the GIL held, and nothing inside `find` or `insert` runs
/// Python code (which could re-enter a parse), hence `nonisolated(unsafe)`.
private struct KeyTable {
    nonisolated(unsafe) static var known = KeyTable()

    /// Empty until the first key is entered: a process that parses no object allocates nothing.
    private var slots: [(start: UnsafePointer<UInt8>?, count: Int, hash: UInt32, object: PyPointer?)] = []
    /// The entered keys' bytes, back to back.
    private var bytes: UnsafeMutablePointer<UInt8>?
    private var bytesUsed = 0
    private var used = 0
    static let capacity = 2048
    static let longestKey = 64
    /// The most slots a lookup or an entry walks.
    static let longestProbe = 16

    /// What `find` learnt about a key's bytes.
    enum Lookup {
        /// Seen before: the key (borrowed from the table), and where the input continues
        /// after its closing quote.
        case found(PyPointer, after: UnsafePointer<UInt8>)
        /// A plain key not seen yet: its hash and length, for `insert` once it is decoded.
        case new(hash: UInt32, count: Int)
        /// A key with an escape (or no closing quote): never entered.
        case unusual
    }

    /// Looks up the key whose text starts at `first` (after its opening quote).
    func find(from first: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) -> Lookup {
        var hash: UInt32 = 2_166_136_261
        var probe = first
        while probe < end {
            let byte = probe.pointee
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return .unusual }
            hash = (hash ^ UInt32(byte)) &* 16_777_619
            probe += 1
        }
        guard probe < end else { return .unusual }
        return find(from: first, count: probe - first, hash: hash)
    }

    /// Looks up the plain key of `count` bytes at `first` whose hash `JSONTape.scan` worked out.
    func find(from first: UnsafePointer<UInt8>, count: Int, hash: UInt32) -> Lookup {
        guard !slots.isEmpty else { return .new(hash: hash, count: count) }
        let mask = slots.count - 1
        var index = Int(hash) & mask
        for _ in 0..<Self.longestProbe {
            guard let start = slots[index].start else { break }
            if slots[index].hash == hash, slots[index].count == count, let object = slots[index].object,
                memcmp(start, first, count) == 0
            {
                return .found(object, after: first + count + 1)
            }
            index = (index + 1) & mask
        }
        return .new(hash: hash, count: count)
    }

    /// Enters a plain key (its bytes at `first`, as `find` measured them; `object` borrowed,
    /// the table takes its own reference) while the table is under half full and the key short.
    mutating func insert(from first: UnsafePointer<UInt8>, hash: UInt32, count: Int, object: PyPointer) {
        guard count <= Self.longestKey else { return }
        if used == Self.capacity / 2 { clear() }
        if slots.isEmpty {
            slots = Array(repeating: (nil, 0, 0, nil), count: Self.capacity)
            bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.capacity / 2 * Self.longestKey)
        }
        guard let bytes else { return }
        let mask = slots.count - 1
        var index = Int(hash) & mask
        var probes = 0
        while slots[index].start != nil {
            probes += 1
            // Keys a server chose to collide (FNV is not keyed) are not entered: they go
            // through the document's memo, and no lookup walks more than `longestProbe` slots.
            guard probes < Self.longestProbe else { return }
            index = (index + 1) & mask
        }
        let copy = bytes + bytesUsed
        copy.update(from: first, count: count)
        bytesUsed += count
        Py_IncRef(object)
        slots[index] = (UnsafePointer(copy), count, hash, object)
        used += 1
    }

    /// Forgets every key (a full table starts again with the keys met from now on).
    private mutating func clear() {
        for index in slots.indices {
            if let object = slots[index].object { Py_DecRef(object) }
            slots[index] = (nil, 0, 0, nil)
        }
        bytesUsed = 0
        used = 0
    }
}
