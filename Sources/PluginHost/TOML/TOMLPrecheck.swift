/// Refuses, before TOMLKit sees them, the inputs on which its parser (toml++) stops on an
/// internal assertion instead of reporting a syntax error: in a debug build that aborts the
/// whole host, in a release build it is undefined behaviour. Each rule below was found by
/// `scripts/fuzz Manifest` (the inputs are in Fuzz/regressions/Manifest/):
///
/// - a table header whose name does not start with a key character or a quote (`[!x]`);
/// - a value that starts with a character that ends values (`a = }`, `[}`, `[1, ,]`, `a = # x`);
/// - an inline-table key that does not start with a key character or a quote (`{ !a = 1 }`, `{a = 1,}`);
/// - a closing bracket that does not match the open one (`[1}`, `{a = 1]`).
///
/// Headers, keys and values are found the way TOML defines them: outside strings and comments,
/// headers at the start of a line outside arrays and inline tables.
enum TOMLPrecheck {
    /// What the next significant character must be.
    private enum Expectation {
        case anything
        /// After `=`, or after `[` / `,` in an array: a value (in an array also `]`).
        case value
        /// After `{` (also `}`) or `,` in an inline table: a key.
        case key(closing: Bool)
    }

    static func check(_ text: String) throws {
        let characters = Array(text.unicodeScalars)
        // A byte-order mark is not content: toml++ skips it, so the first line still starts after it.
        var index = characters.first == "\u{FEFF}" ? 1 : 0
        var line = 1
        var open: [Unicode.Scalar] = []  // the [ and { of values, innermost last
        var lineStart = true
        var expectation = Expectation.anything
        func at(_ offset: Int) -> Unicode.Scalar? {
            index + offset < characters.count ? characters[index + offset] : nil
        }
        func fail(_ message: String) -> TOMLSyntaxError { TOMLSyntaxError(message: message, line: line, column: 1) }

        while index < characters.count {
            let character = characters[index]
            if character == " " || character == "\t" || character == "\r" {
                index += 1
                continue
            }
            if character == "\n" {
                // toml++ itself reports a line that ends where a value should be.
                if case .value = expectation, open.last != "[" { expectation = .anything }
                line += 1
                lineStart = true
                index += 1
                continue
            }
            if character == "#" {
                if case .value = expectation, open.last != "[" { throw fail("a value is missing before the comment") }
                while index < characters.count, characters[index] != "\n" { index += 1 }
                continue
            }
            switch expectation {
            case .anything:
                break
            case .value:
                let closesArray = character == "]" && open.last == "["
                if !closesArray,
                    character == "]" || character == "}" || character == "," || character.properties.isWhitespace
                {
                    throw fail("a value is missing before '\(character)'")
                }
            case .key(let closing):
                let closesTable = closing && character == "}"
                if !closesTable, !(character == "\"" || character == "'" || isBareKeyCharacter(character)) {
                    throw fail("an inline table needs a key before '\(character)': write { key = value }")
                }
            }
            expectation = .anything
            switch character {
            case "\"", "'":
                index = try skipString(characters, from: index, line: &line)
                lineStart = false
                continue
            case "[" where open.isEmpty && lineStart:
                index += at(1) == "[" ? 2 : 1
                while let next = at(0), next == " " || next == "\t" { index += 1 }
                guard let first = at(0), first == "\"" || first == "'" || isBareKeyCharacter(first) else {
                    throw fail("a table header needs a name: write [name] or [\"any name\"]")
                }
                lineStart = false
                continue
            case "[":
                open.append("[")
                expectation = .value
            case "{":
                open.append("{")
                expectation = .key(closing: true)
            case "]", "}":
                let opener: Unicode.Scalar = character == "]" ? "[" : "{"
                if let last = open.last {
                    guard last == opener else { throw fail("'\(last)' is closed by '\(character)'") }
                    open.removeLast()
                }
            case "=":
                expectation = .value
            case ",":
                if open.last == "[" { expectation = .value }
                if open.last == "{" { expectation = .key(closing: false) }
            default:
                break
            }
            lineStart = false
            index += 1
        }
    }

    /// The index after the string starting at `start` (basic, literal, or multi-line of either).
    private static func skipString(_ characters: [Unicode.Scalar], from start: Int, line: inout Int) throws -> Int {
        let quote = characters[start]
        func at(_ index: Int) -> Unicode.Scalar? { index < characters.count ? characters[index] : nil }
        let triple = at(start + 1) == quote && at(start + 2) == quote
        var index = start + (triple ? 3 : 1)
        while index < characters.count {
            let current = characters[index]
            if quote == "\"", current == "\\" {
                if at(index + 1) == "\n" { line += 1 }
                index += 2
                continue
            }
            if current == quote, !triple || (at(index + 1) == quote && at(index + 2) == quote) {
                return index + (triple ? 3 : 1)
            }
            if current == "\n" {
                if !triple { return index }  // toml++ reports the unterminated string itself
                line += 1
            }
            index += 1
        }
        return index
    }

    static func isBareKeyCharacter(_ character: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(character) || ("A"..."Z").contains(character) || ("0"..."9").contains(character)
            || character == "_" || character == "-"
    }
}
