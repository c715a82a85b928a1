import TOMLKit

/// Parses TOML text into plain Swift values, so the rest of PluginHost never
/// touches TOMLKit's types.
public indirect enum TOMLValue: Equatable, Sendable {
    case string(String)
    case integer(Int)
    case double(Double)
    case bool(Bool)
    case array([TOMLValue])
    case table([String: TOMLValue])
    case other(String)

    /// Parses a whole document; a syntax error is a `TOMLSyntaxError` with TOMLKit's text, line and column.
    public static func parse(_ text: String) throws -> [String: TOMLValue] {
        try TOMLPrecheck.check(text)
        do {
            return convert(try TOMLTable(string: text))
        } catch let error as TOMLParseError {
            throw TOMLSyntaxError(
                message: error.description, line: error.source.begin.line, column: error.source.begin.column)
        }
    }

    static func convert(_ table: TOMLTable) -> [String: TOMLValue] {
        var out: [String: TOMLValue] = [:]
        for (key, value) in table { out[key] = convert(value) }
        return out
    }

    static func convert(_ value: TOMLValueConvertible) -> TOMLValue {
        if let s = value.string { return .string(s) }
        if let b = value.bool { return .bool(b) }
        if let i = value.int { return .integer(i) }
        if let d = value.double { return .double(d) }
        if let a = value.array { return .array(a.map { convert($0) }) }
        if let t = value.table { return .table(convert(t)) }
        return .other(String(describing: value))
    }

    /// The TOML type's name, for error messages ("expected a string, found an integer").
    public var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .double: "a float"
        case .bool: "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .other: "a date or time"
        }
    }
}

/// A TOML document that does not parse: TOMLKit's message and where.
public struct TOMLSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// TOMLKit's message.
    public let message: String
    /// Where the error starts (1-based).
    public let line: Int
    public let column: Int

    /// `line L, column C: MESSAGE`.
    public var description: String { "line \(line), column \(column): \(message)" }
}
