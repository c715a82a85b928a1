import Platform
import WebAPI

/// The `-f key=value` and `-F key=value` of `apimacro api`, read as `gh api` reads them: `-f`
/// is always a string; `-F` turns `true`, `false`, `null` and integers into JSON, and reads
/// `@FILE` (`@-`: stdin) as the file's text.
///
/// For a GET (or HEAD) they go to the query string; for any other method into a JSON body,
/// where `key[]=v` appends to an array and `key[inner]=v` sets a key of an object.
struct ApiFields {
    /// One field's value.
    indirect enum Value: Sendable {
        case string(String)
        /// An integer as written.
        case number(String)
        case bool(Bool)
        case null
        case array([Value])
        case object([(String, Value)])

        /// The value as JSON text.
        var json: String {
            switch self {
            case .string(let text): ApiFields.quoted(text)
            case .number(let text): text
            case .bool(let flag): flag ? "true" : "false"
            case .null: "null"
            case .array(let items): "[" + items.map(\.json).joined(separator: ",") + "]"
            case .object(let members):
                "{" + members.map { ApiFields.quoted($0.0) + ":" + $0.1.json }.joined(separator: ",") + "}"
            }
        }

        /// The value in a query string: a string as it is, `null` empty, others as JSON.
        var queryText: String {
            switch self {
            case .string(let text): text
            case .null: ""
            default: json
            }
        }
    }

    /// The fields in the order given: the key as written, its value.
    var fields: [(key: String, value: Value)] = []

    /// Whether there are none.
    var isEmpty: Bool { fields.isEmpty }

    /// Reads `-f` (`raw`) and `-F` (`typed`) fields; `read` reads `@FILE` (`-` for stdin).
    ///
    /// - Throws: `ExitReport.usage` for a field without `=`, or a file that cannot be read.
    init(raw: [String], typed: [String], read: (String) throws -> Data = ApiFields.readFile) throws {
        for text in raw {
            let (key, value) = try Self.split(text, flag: "-f")
            fields.append((key, .string(value)))
        }
        for text in typed {
            let (key, value) = try Self.split(text, flag: "-F")
            fields.append((key, try Self.typed(value, read: read)))
        }
    }

    /// `key=value` split at its first `=`.
    static func split(_ text: String, flag: String) throws -> (String, String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw ExitReport.usage("\(flag) \(text.debugDescription): write key=value")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    /// A `-F` value: `true`, `false`, `null`, an integer, `@FILE`, else a string.
    static func typed(_ text: String, read: (String) throws -> Data) throws -> Value {
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "null": return .null
        default: break
        }
        if let first = text.first, first == "-" || first.isNumber, Int(text) != nil { return .number(text) }
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            let data: Data
            do {
                data = try read(path)
            } catch {
                throw ExitReport.usage(
                    "-F: cannot read \(path == "-" ? "stdin" : path): \(SystemErrorText.reason(error))")
            }
            guard let contents = String(data: data, encoding: .utf8) else {
                throw ExitReport.usage("-F: \(path == "-" ? "stdin" : path) is not UTF-8 text")
            }
            return .string(contents)
        }
        return .string(text)
    }

    /// Reads a file, or stdin for `-`.
    static func readFile(_ path: String) throws -> Data {
        if path == "-" { return Data(StandardStreams.readInput()) }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// The fields as query parameters, keys as written.
    var query: [(String, String)] {
        fields.map { ($0.key, $0.value.queryText) }
    }

    /// The fields as one JSON object: `key[]` appends to an array, `key[inner]` nests.
    ///
    /// - Throws: `ExitReport.usage` for a key it cannot read (`a[`, `[]`, `a[][b]`), or one that
    ///   is both a value and an object or array.
    func body() throws -> Value {
        var root: [(String, Value)] = []
        for (key, value) in fields {
            try Self.insert(value, at: Self.path(of: key), into: &root, key: key)
        }
        return .object(root)
    }

    /// `a[b][]` as ["a", "b", ""]; the empty segment (an append) may only come last.
    static func path(of key: String) throws -> [String] {
        guard let open = key.firstIndex(of: "[") else { return [key] }
        var path = [String(key[..<open])]
        var rest = key[open...]
        while !rest.isEmpty {
            guard rest.first == "[", let close = rest.firstIndex(of: "]") else { throw badKey(key) }
            path.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        guard !path[0].isEmpty, !path.dropLast().contains("") else { throw badKey(key) }
        return path
    }

    private static func badKey(_ key: String) -> ExitReport {
        .usage("-F/-f key \(key.debugDescription): write name, name[] (an array) or name[key] (an object)")
    }

    /// Puts `value` at `path` in the object `members`.
    private static func insert(_ value: Value, at path: [String], into members: inout [(String, Value)], key: String)
        throws
    {
        let name = path[0]
        let index = members.firstIndex { $0.0 == name }
        if path.count == 1 {
            if let index { members[index].1 = value } else { members.append((name, value)) }
            return
        }
        if path[1].isEmpty {  // name[]: append
            var items: [Value] = []
            if let index {
                guard case .array(let existing) = members[index].1 else { throw conflict(key) }
                items = existing
            }
            items.append(value)
            if let index { members[index].1 = .array(items) } else { members.append((name, .array(items))) }
            return
        }
        var inner: [(String, Value)] = []
        if let index {
            guard case .object(let existing) = members[index].1 else { throw conflict(key) }
            inner = existing
        }
        try insert(value, at: Array(path.dropFirst()), into: &inner, key: key)
        if let index { members[index].1 = .object(inner) } else { members.append((name, .object(inner))) }
    }

    private static func conflict(_ key: String) -> ExitReport {
        .usage("-F/-f \(key.debugDescription): its name already holds another kind of value")
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String { JSONText.string(text) }
}
