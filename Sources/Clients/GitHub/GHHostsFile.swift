/// `gh`'s `hosts.yml`, read with no YAML library: the small part of YAML that `gh` writes
/// there, mappings of plain or quoted scalars by indentation, and nothing else.
///
/// `gh` keeps one entry per host, with the active account's token beside its name unless the
/// token is in the system keyring (then only `user` and `git_protocol` are there), and since
/// gh 2.40 every account under `users`:
///
/// ```yaml
/// github.com:
///     users:
///         monalisa:
///             oauth_token: gho_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
///     git_protocol: https
///     user: monalisa
///     oauth_token: gho_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
/// ```
///
/// Anything outside that part (sequences, flow collections other than an empty `{}`, anchors,
/// tags, block scalars, tabs, more than one document, nesting deeper than 16) makes the whole
/// file unreadable: a partial reading could take the wrong host's token.
public struct GHHostsFile: Sendable, Equatable {
    /// A node of the file: a scalar or a mapping (keys in order).
    public indirect enum Node: Sendable, Equatable {
        case scalar(String)
        case mapping([Entry])

        /// The value under `key`, when this is a mapping that has it.
        public subscript(key: String) -> Node? {
            guard case .mapping(let entries) = self else { return nil }
            return entries.first { $0.key == key }?.value
        }

        /// The text, when this is a non-empty scalar.
        public var text: String? {
            guard case .scalar(let text) = self, !text.isEmpty else { return nil }
            return text
        }
    }

    /// One key and its value.
    public struct Entry: Sendable, Equatable {
        public let key: String
        public let value: Node
    }

    /// Why a text is not a `hosts.yml` apimacro reads.
    public struct Unreadable: Error, Sendable, CustomStringConvertible, Equatable {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// The whole file.
    public let root: Node

    /// Nesting deeper than this is refused.
    static let maximumDepth = 16

    /// Parses `text`.
    ///
    /// - Throws: `Unreadable` naming the line and what is outside the part of YAML `gh` writes.
    public init(parsing text: String) throws {
        var lines: [Line] = []
        var number = 0
        var sawContent = false
        // "\r\n" is one Character in Swift: lines end at either.
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            let line = Substring(raw)
            let indent = line.prefix { $0 == " " }.count
            let rest = line.dropFirst(indent)
            if rest.first == "\t" { throw Unreadable(line: number, reason: "a tab in the indentation") }
            let content = try Self.withoutComment(rest, line: number)
            if content.isEmpty { continue }
            if content == "---" {
                if sawContent { throw Unreadable(line: number, reason: "a second document") }
                continue
            }
            sawContent = true
            lines.append(try Self.entryLine(content, indent: indent, number: number))
        }
        var index = 0
        root = try Self.mapping(lines, &index, indent: lines.first?.indent ?? 0, depth: 0)
        if index < lines.count {
            throw Unreadable(line: lines[index].number, reason: "indentation that matches no key above it")
        }
    }

    /// The token `gh` would use for `host`: the entry's `oauth_token`, else the token of its
    /// active `user` under `users`; nil when the entry has none (the keyring holds it).
    public func token(for host: String) -> String? {
        guard let entry = root[host] else { return nil }
        if let token = entry["oauth_token"]?.text { return token }
        guard let user = entry["user"]?.text else { return nil }
        return entry["users"]?[user]?["oauth_token"]?.text
    }

    /// The active user of `host`'s entry, if named.
    public func user(for host: String) -> String? {
        root[host]?["user"]?.text
    }

    // MARK: parsing

    private struct Line {
        let indent: Int
        let number: Int
        let key: String
        /// The value after `key:`, or nil when a nested mapping (or nothing) follows.
        let value: Node?
    }

    private static func mapping(_ lines: [Line], _ index: inout Int, indent: Int, depth: Int) throws -> Node {
        guard depth <= maximumDepth else {
            throw Unreadable(line: lines[min(index, lines.count - 1)].number, reason: "nesting deeper than 16")
        }
        var entries: [Entry] = []
        while index < lines.count, lines[index].indent == indent {
            let line = lines[index]
            index += 1
            if entries.contains(where: { $0.key == line.key }) {
                throw Unreadable(line: line.number, reason: "the key \(line.key.debugDescription) twice")
            }
            if let value = line.value {
                if index < lines.count, lines[index].indent > indent {
                    throw Unreadable(line: lines[index].number, reason: "indentation under a key that has a value")
                }
                entries.append(Entry(key: line.key, value: value))
            } else if index < lines.count, lines[index].indent > indent {
                let child = try mapping(lines, &index, indent: lines[index].indent, depth: depth + 1)
                entries.append(Entry(key: line.key, value: child))
            } else {
                entries.append(Entry(key: line.key, value: .scalar("")))
            }
        }
        if index < lines.count, lines[index].indent > indent {
            throw Unreadable(line: lines[index].number, reason: "indentation that matches no key above it")
        }
        return .mapping(entries)
    }

    /// `content` without a trailing comment (a `#` at its start or after a space, outside quotes).
    private static func withoutComment(_ content: Substring, line: Int) throws -> Substring {
        var quote: Character?
        var previous: Character = " "
        for index in content.indices {
            let character = content[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "#", previous == " " {
                return trimmed(content[..<index])
            }
            previous = character
        }
        return trimmed(content)
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }

    /// `key: value` or `key:`.
    private static func entryLine(_ content: Substring, indent: Int, number: Int) throws -> Line {
        var rest = content
        let key: String
        if let first = rest.first, first == "'" || first == "\"" {
            let (text, after) = try quoted(rest, line: number)
            key = text
            rest = after
            guard rest.first == ":" else { throw Unreadable(line: number, reason: "a quoted key without ':'") }
            rest = rest.dropFirst()
        } else {
            guard let colon = separator(in: rest) else {
                throw Unreadable(line: number, reason: "a line that is not 'key: value'")
            }
            key = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
            try checkPlain(key, line: number)
        }
        guard rest.isEmpty || rest.first == " " else {
            throw Unreadable(line: number, reason: "no space after ':'")
        }
        let valueText = rest.drop { $0 == " " }
        guard !valueText.isEmpty else { return Line(indent: indent, number: number, key: key, value: nil) }
        return Line(indent: indent, number: number, key: key, value: try scalar(valueText, line: number))
    }

    /// Where the `:` that ends a plain key is: the first followed by a space or the line's end.
    private static func separator(in text: Substring) -> Substring.Index? {
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(after: index)
            if text[index] == ":", next == text.endIndex || text[next] == " " { return index }
            index = next
        }
        return nil
    }

    private static func scalar(_ text: Substring, line: Int) throws -> Node {
        if text == "{}" { return .mapping([]) }
        if let first = text.first, first == "'" || first == "\"" {
            let (value, after) = try quoted(text, line: line)
            guard after.isEmpty else { throw Unreadable(line: line, reason: "text after a quoted value") }
            return .scalar(value)
        }
        try checkPlain(String(text), line: line)
        if ["null", "~"].contains(text) { return .scalar("") }
        return .scalar(String(text))
    }

    /// A plain scalar may not start with YAML's indicators: what follows would mean something else.
    private static func checkPlain(_ text: String, line: Int) throws {
        guard let first = text.first else { throw Unreadable(line: line, reason: "an empty key") }
        if "[]{}&*!|>%@`-?,".contains(first) {
            throw Unreadable(line: line, reason: "YAML apimacro does not read (\(String(first).debugDescription))")
        }
    }

    /// A single- or double-quoted scalar at the start of `text`, and what follows it.
    private static func quoted(_ text: Substring, line: Int) throws -> (String, Substring) {
        guard let open = text.first else { throw Unreadable(line: line, reason: "an empty value") }
        var value = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if open == "'" {
                if character == "'" {
                    if index < text.endIndex, text[index] == "'" {
                        value.append("'")
                        index = text.index(after: index)
                        continue
                    }
                    return (value, text[index...])
                }
                value.append(character)
            } else {
                if character == "\"" { return (value, text[index...]) }
                guard character == "\\" else {
                    value.append(character)
                    continue
                }
                guard index < text.endIndex else { break }
                let escaped = text[index]
                index = text.index(after: index)
                switch escaped {
                case "\\", "\"", "/": value.append(escaped)
                case "n": value.append("\n")
                case "t": value.append("\t")
                default: throw Unreadable(line: line, reason: "an escape apimacro does not read (\\\(escaped))")
                }
            }
        }
        throw Unreadable(line: line, reason: "a quote that does not end on its line")
    }
}
