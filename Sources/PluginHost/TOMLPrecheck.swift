/// Refuses, before TOMLKit sees them, the inputs on which its parser (toml++) stops on an
/// internal assertion instead of reporting a syntax error: in a debug build that aborts the
/// whole host, in a release build it is undefined behaviour. Found by `scripts/fuzz Manifest`.
///
/// Today that is a table header whose name does not start with a key character or a quote
/// (`[!x]`, `[[ =a]]`). Headers are found the way TOML defines them: at the start of a line,
/// outside strings, comments, arrays and inline tables.
enum TOMLPrecheck {
    static func check(_ text: String) throws {
        let characters = Array(text.unicodeScalars)
        // A byte-order mark is not content: toml++ skips it, so the first line still starts after it.
        var index = characters.first == "\u{FEFF}" ? 1 : 0
        var line = 1
        var depth = 0  // open [ and { of values
        var lineStart = true
        var expectingValue = false  // after `=`, a `[` opens an array, not a header
        func at(_ offset: Int) -> Unicode.Scalar? {
            index + offset < characters.count ? characters[index + offset] : nil
        }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "\n":
                line += 1
                lineStart = true
                if depth == 0 { expectingValue = false }
                index += 1
                continue
            case " ", "\t", "\r":
                index += 1
                continue
            case "#":
                while index < characters.count, characters[index] != "\n" { index += 1 }
                continue
            case "\"", "'":
                let triple = at(1) == character && at(2) == character
                index += triple ? 3 : 1
                while index < characters.count {
                    let current = characters[index]
                    if current == "\n" { line += 1 }
                    if character == "\"", current == "\\" {
                        index += 2
                        continue
                    }
                    if current == character, !triple || (at(1) == character && at(2) == character) {
                        index += triple ? 3 : 1
                        break
                    }
                    if current == "\n", !triple { break }
                    index += 1
                }
            case "[" where depth == 0 && lineStart && !expectingValue:
                index += at(1) == "[" ? 2 : 1
                while let next = at(0), next == " " || next == "\t" { index += 1 }
                guard let first = at(0), first == "\"" || first == "'" || isBareKeyCharacter(first) else {
                    throw TOMLSyntaxError(
                        message: "a table header needs a name: write [name] or [\"any name\"]", line: line, column: 1)
                }
            case "[", "{":
                depth += 1
                index += 1
            case "]", "}":
                depth = max(0, depth - 1)
                index += 1
            case "=":
                expectingValue = true
                index += 1
            default:
                index += 1
            }
            lineStart = false
        }
    }

    static func isBareKeyCharacter(_ character: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(character) || ("A"..."Z").contains(character) || ("0"..."9").contains(character)
            || character == "_" || character == "-"
    }
}
