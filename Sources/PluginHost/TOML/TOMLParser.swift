/// A strict TOML 1.0 parser: text in, `TOMLValue`s or one `TOMLSyntaxError` out, and no input
/// that can stop the process (no assertion, no trap, no unbounded recursion).
///
/// It follows CPython's `tomllib` rule for rule (the same statements, the same regular shapes
/// for numbers and dates, the same bookkeeping of redefinitions in `TOMLFlags`): tomllib is the
/// reference `TOMLDifferentialTests` compares it with. Two differences, both deliberate:
/// an integer must fit in 64 bits (TOML 1.0 asks for an error; tomllib keeps any size), and
/// tables and arrays nest at most `maximumDepth` deep (tomllib ends in a `RecursionError` a few
/// hundred levels down; here a deeper document is a syntax error, so the stack stays small).
///
/// The text is read as Unicode scalars, so columns count what a person sees in an editor, as
/// tomllib's do; `\r\n` is read as `\n` (the specification allows it, tomllib does it).
struct TOMLParser {
    /// How deep tables, arrays and inline tables may nest, dotted keys and headers included.
    static let maximumDepth = 128

    let text: [Unicode.Scalar]
    var position = 0
    let root = TOMLTableBuilder()
    let flags = TOMLFlags()

    init(_ source: String) {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(source.utf8.count)
        for scalar in source.unicodeScalars {
            if scalar == "\n", scalars.last == "\r" { scalars.removeLast() }
            scalars.append(scalar)
        }
        text = scalars
    }

    /// The whole document (`tomllib.loads`): one statement per line.
    mutating func document() throws -> [String: TOMLValue] {
        var header: [String] = []
        while true {
            skipSpaces()
            guard let character = at() else { break }
            if character == "\n" {
                position += 1
                continue
            }
            if Self.startsKey(character) {
                try keyValueStatement(header: header)
                skipSpaces()
            } else if character == "[" {
                flags.finalizePending()
                header = at(1) == "[" ? try arrayOfTablesHeader() : try tableHeader()
                skipSpaces()
            } else if character != "#" {
                throw failure("expected a key, a [table] header or a comment, found \(describe(character))")
            }
            try skipComment()
            guard let end = at() else { break }
            guard end == "\n" else {
                throw failure("expected the end of the line after a statement, found \(describe(end))")
            }
            position += 1
        }
        return root.value()
    }

    // MARK: statements

    /// `[a.b]`: the section that follows belongs to table `a.b`.
    private mutating func tableHeader() throws -> [String] {
        position += 1
        skipSpaces()
        let key = try self.key()
        if flags.isSet(key, .explicitNest) || flags.isSet(key, .frozen) {
            throw failure("cannot redefine table '\(Self.dotted(key))'")
        }
        flags.set(key, .explicitNest, recursive: false)
        guard root.nest(key) != nil else {
            throw failure("cannot redefine '\(Self.dotted(key))' as a table: it already holds a value")
        }
        guard at() == "]" else { throw failure("expected ']' at the end of the table header, found \(describe(at()))") }
        position += 1
        return key
    }

    /// `[[a.b]]`: a new table at the end of the array of tables `a.b`.
    private mutating func arrayOfTablesHeader() throws -> [String] {
        position += 2
        skipSpaces()
        let key = try self.key()
        if flags.isSet(key, .frozen) {
            throw failure("cannot redefine '\(Self.dotted(key))': an array written as a value cannot be extended")
        }
        // The new element starts afresh; the array itself still may not become a [table].
        flags.unsetAll(key)
        flags.set(key, .explicitNest, recursive: false)
        guard root.appendTable(at: key) else {
            throw failure(
                "cannot redefine '\(Self.dotted(key))' as an array of tables: it already holds something else")
        }
        guard at() == "]", at(1) == "]" else {
            throw failure("expected ']]' at the end of the array-of-tables header, found \(describe(at()))")
        }
        position += 2
        return key
    }

    /// `key = value` in the current section.
    private mutating func keyValueStatement(header: [String]) throws {
        let (key, value) = try keyValuePair(depth: header.count)
        guard let stem = key.last else { return }
        let parent = header + key.dropLast()
        for count in 1..<key.count {
            let container = header + key.prefix(count)
            if flags.isSet(container, .explicitNest) {
                throw failure("cannot redefine table '\(Self.dotted(container))' with a dotted key")
            }
            // Tables made by dotted keys may not be defined again by a later section.
            flags.addPending(container, .explicitNest)
        }
        if flags.isSet(parent, .frozen) {
            throw failure("cannot redefine '\(Self.dotted(parent))': an inline table or array cannot be extended")
        }
        guard let table = root.nest(parent) else {
            throw failure("cannot redefine '\(Self.dotted(parent))' as a table: it already holds a value")
        }
        guard table.entries[stem] == nil else {
            throw failure("cannot redefine key '\(Self.dotted(header + key))'")
        }
        if case .table = value { flags.set(header + key, .frozen, recursive: true) }
        if case .array = value { flags.set(header + key, .frozen, recursive: true) }
        table.entries[stem] = .value(value)
    }

    /// `key = value`; `depth` counts the tables around the key.
    private mutating func keyValuePair(depth: Int) throws -> ([String], TOMLValue) {
        let key = try self.key()
        guard at() == "=" else {
            throw failure("expected '=' after the key '\(Self.dotted(key))', found \(describe(at()))")
        }
        position += 1
        skipSpaces()
        return (key, try value(depth: depth + key.count))
    }

    // MARK: keys

    /// A key: parts joined by dots, spaces allowed around the dots.
    private mutating func key() throws -> [String] {
        var key = [try keyPart()]
        skipSpaces()
        while at() == "." {
            position += 1
            skipSpaces()
            key.append(try keyPart())
            skipSpaces()
            guard key.count <= Self.maximumDepth else {
                throw failure("the key has more than \(Self.maximumDepth) parts")
            }
        }
        return key
    }

    private mutating func keyPart() throws -> String {
        switch at() {
        case let character? where Self.isBareKey(character):
            let start = position
            while let next = at(), Self.isBareKey(next) { position += 1 }
            return String(String.UnicodeScalarView(text[start..<position]))
        case "'"?:
            return try literalString()
        case "\""?:
            position += 1
            return try basicString(multiline: false)
        case let other:
            throw failure(
                "expected a key (letters, digits, '-' and '_', or a quoted string), found \(describe(other))")
        }
    }

    // MARK: values

    /// One value; `depth` counts the tables and arrays around it.
    mutating func value(depth: Int) throws -> TOMLValue {
        switch at() {
        case "\""?:
            if starts(with: "\"\"\"") { return .string(try multilineString(literal: false)) }
            position += 1
            return .string(try basicString(multiline: false))
        case "'"?:
            if starts(with: "'''") { return .string(try multilineString(literal: true)) }
            return .string(try literalString())
        case "t"? where starts(with: "true"):
            position += 4
            return .bool(true)
        case "f"? where starts(with: "false"):
            position += 5
            return .bool(false)
        case "["?:
            return try array(depth: depth)
        case "{"?:
            return try inlineTable(depth: depth)
        default:
            break
        }
        if let dateTime = try dateTime() { return .other(dateTime) }
        if let time = localTime() { return .other(time) }
        if let number = try number() { return number }
        for (word, number) in Self.specialFloats where starts(with: word) {
            position += word.unicodeScalars.count
            return .double(number)
        }
        let expected =
            "expected a value (a \"string\", a number, true, false, a date, [an array] or {an inline table})"
        if let word = unquotedWord() {
            // `format = csv`: text meant as a string, written without its quotes.
            var error = failure("\(expected), found \(word); text goes in quotes: \"\(word)\"")
            error.messageWithoutValue = "\(expected), found text without quotes; text goes in quotes: \"...\""
            throw error
        }
        throw failure("\(expected), found \(describe(at()))")
    }

    /// The text from here to the end of the value, when it starts with a letter: a word written
    /// without quotes (`csv`, `https://x`), cut at 60 characters; nil otherwise.
    private func unquotedWord() -> String? {
        guard let first = at(), first.properties.isAlphabetic, !Self.isInvisible(first) else { return nil }
        var word = String.UnicodeScalarView()
        var offset = 0
        while let character = at(offset), !character.properties.isWhitespace, !Self.isInvisible(character),
            !",]}#\"'".unicodeScalars.contains(character)
        {
            if word.count == 60 { return String(word) + "…" }
            word.append(character)
            offset += 1
        }
        return String(word)
    }

    private static let specialFloats: [(String, Double)] = [
        ("inf", .infinity), ("nan", .nan), ("+inf", .infinity), ("-inf", -.infinity), ("+nan", .nan), ("-nan", -.nan),
    ]

    /// `[1, 2, 3]`, over several lines if need be, with comments and a trailing comma.
    private mutating func array(depth: Int) throws -> TOMLValue {
        try checkDepth(depth)
        position += 1
        var items: [TOMLValue] = []
        try skipBlanksAndComments()
        if at() == "]" {
            position += 1
            return .array(items)
        }
        while true {
            items.append(try value(depth: depth + 1))
            try skipBlanksAndComments()
            let next = at()
            if next == "]" {
                position += 1
                return .array(items)
            }
            guard next == "," else { throw failure("expected ',' or ']' in the array, found \(describe(next))") }
            position += 1
            try skipBlanksAndComments()
            if at() == "]" {
                position += 1
                return .array(items)
            }
        }
    }

    /// `{ a = 1, b.c = 2 }`: on one line, no trailing comma, never extended afterwards.
    private mutating func inlineTable(depth: Int) throws -> TOMLValue {
        try checkDepth(depth)
        position += 1
        let table = TOMLTableBuilder()
        let inlineFlags = TOMLFlags()
        skipSpaces()
        if at() == "}" {
            position += 1
            return .table([:])
        }
        while true {
            let (key, value) = try keyValuePair(depth: depth)
            guard let stem = key.last else { continue }
            if inlineFlags.isSet(key, .frozen) {
                throw failure("cannot redefine '\(Self.dotted(key))': an inline table or array cannot be extended")
            }
            guard let nest = table.nest(key.dropLast(), throughArrays: false) else {
                throw failure("cannot redefine '\(Self.dotted(key.dropLast()))' as a table: it already holds a value")
            }
            guard nest.entries[stem] == nil else {
                throw failure("cannot redefine key '\(Self.dotted(key))' in the inline table")
            }
            nest.entries[stem] = .value(value)
            skipSpaces()
            let next = at()
            if next == "}" {
                position += 1
                return .table(table.value())
            }
            guard next == "," else {
                throw failure(
                    "expected ',' or '}' in the inline table (it is written on one line), found \(describe(next))")
            }
            if case .table = value { inlineFlags.set(key, .frozen, recursive: true) }
            if case .array = value { inlineFlags.set(key, .frozen, recursive: true) }
            position += 1
            skipSpaces()
        }
    }

    private func checkDepth(_ depth: Int) throws {
        guard depth <= Self.maximumDepth else {
            throw failure("tables and arrays nest more than \(Self.maximumDepth) deep")
        }
    }

    // MARK: blanks and comments

    mutating func skipSpaces() {
        while let character = at(), character == " " || character == "\t" { position += 1 }
    }

    /// A comment up to the end of its line (the newline is left); control characters are refused.
    private mutating func skipComment() throws {
        guard at() == "#" else { return }
        position += 1
        while let character = at(), character != "\n" {
            if Self.isControl(character) {
                throw failure("a comment cannot hold the control character \(describe(character))")
            }
            position += 1
        }
    }

    /// Spaces, newlines and comments between an array's values.
    private mutating func skipBlanksAndComments() throws {
        while true {
            let before = position
            while let character = at(), character == " " || character == "\t" || character == "\n" { position += 1 }
            try skipComment()
            if position == before { return }
        }
    }

    // MARK: reading

    /// The scalar `offset` after the current one; nil past the end.
    func at(_ offset: Int = 0) -> Unicode.Scalar? {
        let index = position + offset
        return index >= 0 && index < text.count ? text[index] : nil
    }

    /// Whether the text at the current position starts with `literal`.
    func starts(with literal: String) -> Bool {
        var index = position
        for scalar in literal.unicodeScalars {
            guard index < text.count, text[index] == scalar else { return false }
            index += 1
        }
        return true
    }

    /// A syntax error at the current position.
    func failure(_ message: String) -> TOMLSyntaxError {
        let end = min(max(position, 0), text.count)
        var line = 1
        var lineStart = 0
        for index in 0..<end where text[index] == "\n" {
            line += 1
            lineStart = index + 1
        }
        return TOMLSyntaxError(message: message, line: line, column: end - lineStart + 1)
    }

    /// A character as a message names it: `'x'`, `the end of the line`, `U+0007`.
    func describe(_ character: Unicode.Scalar?) -> String {
        guard let character else { return "the end of the file" }
        if character == "\n" { return "the end of the line" }
        if Self.isInvisible(character) || character.properties.isWhitespace {
            let hex = String(character.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return "'\(character)'"
    }

    static func startsKey(_ character: Unicode.Scalar) -> Bool {
        isBareKey(character) || character == "\"" || character == "'"
    }

    static func isBareKey(_ character: Unicode.Scalar) -> Bool {
        switch character {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_": true
        default: false
        }
    }

    /// The ASCII control characters but tab: refused in comments and strings.
    static func isControl(_ character: Unicode.Scalar) -> Bool {
        (character.value < 0x20 && character != "\t") || character.value == 0x7F
    }

    /// Control, formatting (such as U+202E, which reverses the text after it) and unassigned
    /// characters: never printed as they are.
    static func isInvisible(_ character: Unicode.Scalar) -> Bool {
        switch character.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }

    /// A key as a message shows it: `a.b`, `"with space".c`; a quoted part's control and
    /// invisible characters are written as escapes, so a message stays one plain line.
    static func dotted(_ key: some Sequence<String>) -> String {
        key.map { part in
            if !part.isEmpty && part.unicodeScalars.allSatisfy(isBareKey) { return part }
            var quoted = "\""
            for scalar in part.unicodeScalars {
                if isInvisible(scalar) {
                    quoted += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    quoted += scalar == "\"" || scalar == "\\" ? "\\" + String(scalar) : String(scalar)
                }
            }
            return quoted + "\""
        }.joined(separator: ".")
    }
}
