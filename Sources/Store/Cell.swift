import Platform
import WebAPI

/// One value of a row bound for a destination: a JSON scalar, or a nested value already
/// encoded as JSON text.
public enum Cell: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case text(String)
    /// A list or dict, as compact JSON text: TEXT in SQLite and CSV, nested in JSON Lines.
    case json(String)

    /// The SQLite column type this value asks for; nil for null, which fits any column.
    var columnType: ColumnType? {
        switch self {
        case .null: nil
        case .bool, .integer: .integer
        case .real: .real
        case .text, .json: .text
        }
    }

    /// Short words for a type-clash message ("an integer", "text").
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a bool"
        case .integer: "an integer"
        case .real: "a float"
        case .text: "text"
        case .json: "a list or dict (JSON text)"
        }
    }

    /// The value as JSON text (JSON Lines, `.json`).
    var jsonText: String {
        switch self {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .real(let number): Cell.jsonNumber(number)
        case .text(let text): Cell.jsonString(text)
        case .json(let text): text
        }
    }

    /// The value as a CSV field's text, as `apimacro.output` prints it: "" for null,
    /// true/false, JSON for nested values (what JSON writes, strings unquoted).
    var csvText: String {
        switch self {
        case .null: ""
        case .text(let text), .json(let text): text
        case .bool, .integer, .real: jsonText
        }
    }

    /// A finite double as JSON writes it (`1.0`, `2.5e-07`).
    static func jsonNumber(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e16 { return PrintfText.format("%.1f", number) }
        return "\(number)"
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String { WebAPI.JSONText.string(text) }
}

/// A row: its fields in order.
///
/// A field a row leaves out is not the same as a null one: an upsert keeps the stored
/// value of a field left out.
public struct Row: Sendable, Equatable {
    /// The fields, in the row's order.
    public var fields: [(name: String, value: Cell)]

    /// A row of `fields`.
    public init(_ fields: [(name: String, value: Cell)]) {
        self.fields = fields
    }

    /// The value of field `name`, or nil when the row has no such field.
    public subscript(name: String) -> Cell? {
        fields.first(where: { $0.name == name })?.value
    }

    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }
}
