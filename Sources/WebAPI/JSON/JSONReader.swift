/// Reads one JSON text (RFC 8259) into a `JSONValue`, as `JSONSerialization` read it.
///
/// As with `.fragmentsAllowed`: a number with a fraction or an exponent is a `.double` (`3.0`, `1e3`,
/// `-0.0` stay floating point, which `JSONDecoder` turned into integers), a whole number in
/// `Int64`'s range an `.int`, a larger one a `.double`; a UTF-8 byte order mark is skipped; a
/// comma before a closing bracket is allowed (as Foundation's parser allows it); a later
/// duplicate key wins. Nil for anything else: bad syntax, bytes after the value, invalid
/// UTF-8 or a lone surrogate in a string, nesting deeper than `maxDepth`.
struct JSONReader {
    /// The deepest nesting read (`JSONSerialization`'s own limit).
    static let maxDepth = 512

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    /// The document in `bytes`, or nil when it is not one JSON text.
    static func read(_ bytes: [UInt8]) -> JSONValue? {
        var reader = JSONReader(bytes)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.index == reader.bytes.count ? value : nil
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        skipSpace()
        guard index < bytes.count, depth <= Self.maxDepth else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count,
            word.withUTF8Buffer({ $0.elementsEqual(bytes[index..<index + count]) })
        else { return nil }
        index += count
        return value
    }

    private mutating func object(depth: Int) -> JSONValue? {
        var members: [String: JSONValue] = [:]
        let closed = elements(closedBy: UInt8(ascii: "}")) { reader in
            guard reader.next(is: UInt8(ascii: "\"")), let key = reader.string() else { return false }
            reader.skipSpace()
            guard reader.next(is: UInt8(ascii: ":")) else { return false }
            reader.index += 1
            guard let member = reader.value(depth: depth) else { return false }
            members[key] = member
            return true
        }
        return closed ? .object(members) : nil
    }

    private mutating func array(depth: Int) -> JSONValue? {
        var items: [JSONValue] = []
        let closed = elements(closedBy: UInt8(ascii: "]")) { reader in
            guard let item = reader.value(depth: depth) else { return false }
            items.append(item)
            return true
        }
        return closed ? .array(items) : nil
    }

    /// Reads an object's members or an array's items from the opening bracket through `close`,
    /// each by `element`, with commas between them (and one allowed before `close`); false on bad
    /// syntax.
    @inline(__always)
    private mutating func elements(closedBy close: UInt8, _ element: (inout JSONReader) -> Bool) -> Bool {
        index += 1
        while true {
            skipSpace()
            if next(is: close) {
                index += 1
                return true
            }
            guard element(&self) else { return false }
            skipSpace()
            guard index < bytes.count else { return false }
            let separator = bytes[index]
            index += 1
            if separator == close { return true }
            guard separator == UInt8(ascii: ",") else { return false }
        }
    }

    /// Whether the next byte is `byte`.
    private func next(is byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    /// A string from its opening quote; its bytes must be UTF-8 and its escapes whole.
    private mutating func string() -> String? {
        index += 1
        var text: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    text.append(contentsOf: String(scalar).utf8)
                default: return nil
                }
            case 0x00..<0x20:
                return nil
            default:
                text.append(byte)
            }
        }
        return nil
    }

    /// The scalar of a `\u` escape (the `\u` read), joining a surrogate pair.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hexQuad() else { return nil }
        if (0xDC00...0xDFFF).contains(high) { return nil }
        guard (0xD800...0xDBFF).contains(high) else { return Unicode.Scalar(high) }
        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
        else { return nil }
        index += 2
        guard let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
        return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    private mutating func hexQuad() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = hexDigit(byte) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A number in JSON's grammar: `-`? int frac? exp?, int without leading zeros.
    private mutating func number() -> JSONValue? {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return nil }
            isInteger = false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { return nil }
            isInteger = false
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { return nil }
        return .double(value)
    }
}
