import Clients
import Platform
import WebAPI

/// `apimacro api --template TEXT`: each item of the answer as a line, placeholders in the
/// style of Python's `str.format` (not gh's Go templates): `{name}`, `{owner.login}` (a
/// member of a member), `{topics[0]}` (an element of a list), `{{` and `}}` for braces.
///
/// Strings print as they are, numbers and booleans as JSON writes them (`42`, `true`), null
/// and a missing member as nothing, a list or an object as compact JSON. An answer that is a
/// list (or, with `--paginate`, every page's items) prints one line per item; an object
/// prints one line.
struct ApiTemplate: Sendable {
    /// A piece of the template: text as it is, or the path of a placeholder.
    enum Piece: Sendable, Equatable {
        case text(String)
        case field([Step])
    }

    /// One step of a placeholder's path.
    enum Step: Sendable, Equatable {
        case member(String)
        case index(Int)
    }

    let pieces: [Piece]

    /// The template `text`, read.
    ///
    /// - Throws: `ExitReport.usage` for a lone `{` or `}`, an empty `{}`, or a format spec
    ///   (`{name:>10}`), which this reading does not take.
    init(_ text: String) throws {
        var pieces: [Piece] = []
        var literal = ""
        var index = text.startIndex
        func fail(_ why: String) -> ExitReport {
            ExitReport.usage(
                "--template \(text.debugDescription): \(why); write placeholders as {name} or {owner.login}, "
                    + "and {{ or }} for a brace")
        }
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if character == "}" {
                guard next < text.endIndex, text[next] == "}" else { throw fail("a '}' with no '{' before it") }
                literal.append("}")
                index = text.index(after: next)
                continue
            }
            guard character == "{" else {
                literal.append(character)
                index = next
                continue
            }
            if next < text.endIndex, text[next] == "{" {
                literal.append("{")
                index = text.index(after: next)
                continue
            }
            guard let close = text[next...].firstIndex(of: "}") else { throw fail("a '{' that is never closed") }
            let name = String(text[next..<close])
            if name.contains(":") || name.contains("!") {
                throw fail("{\(name)} has a conversion or format spec, which --template does not take")
            }
            guard let path = Self.path(name) else { throw fail("{\(name)} is not a field's name") }
            if !literal.isEmpty { pieces.append(.text(literal)) }
            literal = ""
            pieces.append(.field(path))
            index = text.index(after: close)
        }
        if !literal.isEmpty { pieces.append(.text(literal)) }
        self.pieces = pieces
    }

    /// `owner.login`, `topics[0]`, `a.b[2].c` as steps; nil when empty or malformed.
    static func path(_ name: String) -> [Step]? {
        var steps: [Step] = []
        for part in name.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(part)
            let member = rest.prefix { $0 != "[" }
            guard !member.isEmpty, !member.contains("]") else { return nil }
            steps.append(.member(String(member)))
            rest = rest.dropFirst(member.count)
            while !rest.isEmpty {
                guard rest.first == "[", let end = rest.firstIndex(of: "]"),
                    let number = Int(rest[rest.index(after: rest.startIndex)..<end])
                else { return nil }
                steps.append(.index(number))
                rest = rest[rest.index(after: end)...]
            }
        }
        return steps.isEmpty ? nil : steps
    }

    /// One line per item of `value` (a list), or one line for anything else; each ends with a newline.
    func render(items value: Any) -> String {
        let items = value as? [Any] ?? [value]
        return items.map { line(for: $0) + "\n" }.joined()
    }

    /// The template filled from `item`.
    func line(for item: Any) -> String {
        pieces.map { piece in
            switch piece {
            case .text(let text): return text
            case .field(let path): return Self.text(Self.value(at: path, in: item))
            }
        }.joined()
    }

    static func value(at path: [Step], in item: Any) -> Any? {
        var current: Any? = item
        for step in path {
            switch step {
            case .member(let name): current = (current as? [String: Any])?[name]
            case .index(let number):
                guard let list = current as? [Any] else { return nil }
                let position = number < 0 ? list.count + number : number
                current = list.indices.contains(position) ? list[position] : nil
            }
        }
        return current
    }

    /// A value as the line shows it.
    static func text(_ value: Any?) -> String {
        switch value {
        case nil: return ""
        case let value? where JSONValue.isNull(value): return ""
        case let string as String: return string
        case let flag as Bool: return flag ? "true" : "false"
        case let number as Int: return String(number)
        case let number as Double: return "\(number)"
        case let value?:
            guard let data = JSONValue.encoded(native: value, [.sortedKeys]) else { return "\(value)" }
            return String(decoding: data, as: UTF8.self)
        }
    }
}
