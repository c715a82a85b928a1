/// The four kinds of TOML string: basic (`"…"`, with escapes), literal (`'…'`), and the
/// multi-line form of each (`"""…"""`, `'''…'''`).
extension TOMLParser {
    /// The rest of a basic string whose opening quote is behind the current position.
    mutating func basicString(multiline: Bool) throws -> String {
        var result = String.UnicodeScalarView()
        while true {
            guard let character = at() else {
                throw failure("the string is not closed: \(multiline ? "\"\"\"" : "\"") is missing at its end")
            }
            if character == "\"" {
                if !multiline {
                    position += 1
                    return String(result)
                }
                if starts(with: "\"\"\"") {
                    position += 3
                    return String(result)
                }
                result.append(character)
                position += 1
                continue
            }
            if character == "\\" {
                try escape(multiline: multiline, into: &result)
                continue
            }
            if Self.isControl(character), !(multiline && character == "\n") {
                throw failure(
                    "a string cannot hold the control character \(describe(character)); write it as an escape (\\u0001)"
                )
            }
            result.append(character)
            position += 1
        }
    }

    /// A backslash and what follows it.
    private mutating func escape(multiline: Bool, into result: inout String.UnicodeScalarView) throws {
        let code = at(1)
        position += 2
        if multiline, code == " " || code == "\t" || code == "\n" {
            // A backslash that ends a line joins the next non-blank character to the text.
            if code != "\n" {
                skipSpaces()
                guard let next = at() else { return }
                guard next == "\n" else {
                    throw failure("only spaces may follow a backslash that ends a line in a multi-line string")
                }
                position += 1
            }
            while let next = at(), next == " " || next == "\t" || next == "\n" { position += 1 }
            return
        }
        switch code {
        case "u"?: result.append(try hexadecimalScalar(digits: 4))
        case "U"?: result.append(try hexadecimalScalar(digits: 8))
        case "b"?: result.append("\u{08}")
        case "t"?: result.append("\t")
        case "n"?: result.append("\n")
        case "f"?: result.append("\u{0C}")
        case "r"?: result.append("\r")
        case "\""?: result.append("\"")
        case "\\"?: result.append("\\")
        default:
            position -= 2
            throw failure(
                "unknown escape in a string; use \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX or \\UXXXXXXXX (or a 'literal string')"
            )
        }
    }

    /// The scalar of `\uXXXX` or `\UXXXXXXXX` (the digits start at the current position).
    private mutating func hexadecimalScalar(digits: Int) throws -> Unicode.Scalar {
        var value: UInt32 = 0
        for offset in 0..<digits {
            guard let character = at(offset), let digit = Self.hexadecimalDigit(character) else {
                throw failure("\\u needs 4 hexadecimal digits and \\U 8 (\\u00E9, \\U0001F600)")
            }
            value = value << 4 | digit
        }
        position += digits
        guard let scalar = Unicode.Scalar(value) else {
            throw failure("the escape names no Unicode character (a surrogate, or past U+10FFFF)")
        }
        return scalar
    }

    private static func hexadecimalDigit(_ character: Unicode.Scalar) -> UInt32? {
        switch character {
        case "0"..."9": character.value - 0x30
        case "a"..."f": character.value - 0x61 + 10
        case "A"..."F": character.value - 0x41 + 10
        default: nil
        }
    }

    /// `'…'`: the text as written, on one line.
    mutating func literalString() throws -> String {
        position += 1
        let start = position
        while true {
            guard let character = at() else { throw failure("the string is not closed: ' is missing at its end") }
            if character == "'" { break }
            if Self.isControl(character) {
                throw failure(
                    "a literal string cannot hold \(describe(character)); close it on its line, or use '''…''' over several lines"
                )
            }
            position += 1
        }
        defer { position += 1 }
        return String(String.UnicodeScalarView(text[start..<position]))
    }

    /// `"""…"""` or `'''…'''`: a newline right after the opening quotes is not part of the text,
    /// and up to two quotes may stand just before the closing three.
    mutating func multilineString(literal: Bool) throws -> String {
        position += 3
        if at() == "\n" { position += 1 }
        let quote: Unicode.Scalar = literal ? "'" : "\""
        var result: String
        if literal {
            let start = position
            while !starts(with: "'''") {
                guard let character = at() else {
                    throw failure("the string is not closed: ''' is missing at its end")
                }
                if Self.isControl(character), character != "\n" {
                    throw failure("a literal string cannot hold the control character \(describe(character))")
                }
                position += 1
            }
            result = String(String.UnicodeScalarView(text[start..<position]))
            position += 3
        } else {
            result = try basicString(multiline: true)
        }
        for _ in 0..<2 where at() == quote {
            result.unicodeScalars.append(quote)
            position += 1
        }
        return result
    }
}
