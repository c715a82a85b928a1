/// Parses TOML text into plain Swift values: the model `plugin.toml` and `config.toml` are read into.
public indirect enum TOMLValue: Equatable, Sendable {
    case string(String)
    case integer(Int)
    case double(Double)
    case bool(Bool)
    case array([TOMLValue])
    case table([String: TOMLValue])
    /// A date, a time or a date-time, as Python's `isoformat()` writes it (`1979-05-27T07:32:00-07:00`).
    case other(String)

    /// Parses a whole document with `TOMLParser` (TOML 1.0, strict); any input that is not TOML is
    /// a `TOMLSyntaxError` with a message, line and column, never a crash.
    public static func parse(_ text: String) throws -> [String: TOMLValue] {
        var parser = TOMLParser(text)
        return try parser.document()
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
