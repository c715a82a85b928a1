/// What the one-pass parser (`JSONToPython`) and the tape's scan (`JSONTape`) share of JSON's
/// grammar, read on bytes: literals and the extent of a number.
enum JSONGrammar {
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// Moves `cursor` past `text` if the input continues with it; false (the cursor unmoved)
    /// otherwise.
    @inline(__always)
    static func literal(_ text: StaticString, _ cursor: inout UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) -> Bool {
        let count = text.utf8CodeUnitCount
        guard end - cursor >= count else { return false }
        let expected = text.utf8Start
        for offset in 0..<count where cursor[offset] != expected[offset] { return false }
        cursor += count
        return true
    }

    /// Where a number's parts end (`number`).
    struct NumberParts {
        /// Just past the integer part's digits.
        var integerEnd: UnsafePointer<UInt8>
        /// Just past the fraction's digits (`integerEnd` when there is none).
        var fractionEnd: UnsafePointer<UInt8>
        /// The exponent's sign or first digit (after the `e`), nil when there is none.
        var exponentStart: UnsafePointer<UInt8>?
        /// Whether it has a fraction or an exponent: a float to Python.
        var isFloat: Bool
    }

    /// Reads `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?` from `cursor`, as CPython's scanner does.
    ///
    /// A `.` or an `e` not followed by digits ends the number before it (what follows is then
    /// not JSON, which the caller finds). Moves `cursor` past the number; nil when no digit
    /// follows the optional sign.
    @inline(__always)
    static func number(_ cursor: inout UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) -> NumberParts? {
        if cursor.pointee == UInt8(ascii: "-") { cursor += 1 }
        guard cursor < end, isDigit(cursor.pointee) else { return nil }
        if cursor.pointee == UInt8(ascii: "0") {
            cursor += 1
        } else {
            while cursor < end, isDigit(cursor.pointee) { cursor += 1 }
        }
        var parts = NumberParts(integerEnd: cursor, fractionEnd: cursor, exponentStart: nil, isFloat: false)
        if cursor + 1 < end, cursor.pointee == UInt8(ascii: "."), isDigit(cursor[1]) {
            parts.isFloat = true
            cursor += 2
            while cursor < end, isDigit(cursor.pointee) { cursor += 1 }
            parts.fractionEnd = cursor
        }
        if cursor < end, cursor.pointee | 0x20 == UInt8(ascii: "e") {
            var probe = cursor + 1
            if probe < end, probe.pointee == UInt8(ascii: "+") || probe.pointee == UInt8(ascii: "-") { probe += 1 }
            if probe < end, isDigit(probe.pointee) {
                parts.isFloat = true
                parts.exponentStart = cursor + 1
                cursor = probe
                while cursor < end, isDigit(cursor.pointee) { cursor += 1 }
            }
        }
        return parts
    }
}
