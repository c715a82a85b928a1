/// A value a caller gives an endpoint parameter, before it is checked
/// against the declared type and put in the path, query or body.
public enum ParameterValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    /// The Python name of the value's type, for messages (`str`, `int`).
    public var typeName: String {
        switch self {
        case .string: "str"
        case .int: "int"
        case .double: "float"
        case .bool: "bool"
        }
    }

    /// Whether the value fits `type` (an int is a valid float).
    func fits(_ type: PluginParameter.ParameterType) -> Bool {
        switch (self, type) {
        case (.string, .string), (.int, .int), (.int, .float), (.double, .float), (.bool, .bool): true
        default: false
        }
    }

    /// The value as query or path text: bools as `true`/`false`.
    public var text: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case .bool(let value): value ? "true" : "false"
        }
    }

    /// The value for a JSON body.
    var json: Any {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .double(let value): value
        case .bool(let value): value
        }
    }
}
