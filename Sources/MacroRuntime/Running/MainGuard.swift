/// Whether a macro's source calls its `main()` itself, behind `if __name__ == "__main__":`.
///
/// The same test as the pattern `__name__\s*==\s*['"]__main__['"]` (either quote at either
/// end, any ASCII whitespace around `==`), written as a scan over the bytes: Foundation's
/// regular expressions start ICU's regex engine, which cost an empty macro 14 M instructions,
/// 7 % of its start-up (issue 43).
enum MainGuard {
    /// True when `source` holds `__name__ == "__main__"` in any of the spellings above.
    static func present(in source: [UInt8]) -> Bool {
        let name = Array("__name__".utf8)
        let main = Array("__main__".utf8)
        var start = 0
        while let found = firstIndex(of: name, in: source, from: start) {
            start = found + 1
            var index = skipSpaces(source, from: found + name.count)
            guard index + 1 < source.count, source[index] == UInt8(ascii: "="), source[index + 1] == UInt8(ascii: "=")
            else { continue }
            index = skipSpaces(source, from: index + 2)
            guard index < source.count, isQuote(source[index]) else { continue }
            index += 1
            guard index + main.count < source.count, Array(source[index..<index + main.count]) == main,
                isQuote(source[index + main.count])
            else { continue }
            return true
        }
        return false
    }

    private static func isQuote(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"")
    }

    /// The index of the first byte at or after `index` that is not `\s` (space, tab, line feed,
    /// vertical tab, form feed, carriage return).
    private static func skipSpaces(_ source: [UInt8], from index: Int) -> Int {
        var index = index
        while index < source.count, source[index] == 0x20 || (0x09...0x0D).contains(source[index]) { index += 1 }
        return index
    }

    private static func firstIndex(of needle: [UInt8], in source: [UInt8], from start: Int) -> Int? {
        guard needle.count <= source.count, start <= source.count - needle.count else { return nil }
        var index = start
        while index <= source.count - needle.count {
            if source[index] == needle[0], Array(source[index..<index + needle.count]) == needle { return index }
            index += 1
        }
        return nil
    }
}
