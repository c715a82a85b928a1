public import Platform

/// A JSON value (the MCP server's messages, answers and files read without Foundation proper):
/// Sendable, so a message can go to the
/// thread that answers it.
public enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value.isFinite ? value : 0)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Reads one JSON text (`JSONReader`); nil when it is not JSON (or nests deeper than 512).
    public static func parse(_ data: Data) -> JSONValue? {
        JSONReader.read(Array(data))
    }

    /// The value as compact JSON, keys sorted.
    public var text: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }

    /// The member `key` of an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Every string in the value (keys too) passed through `transform`: redaction.
    public func mapStrings(_ transform: (String) -> String) -> JSONValue {
        switch self {
        case .string(let value): return .string(transform(value))
        case .array(let items): return .array(items.map { $0.mapStrings(transform) })
        case .object(let members):
            return .object(
                Dictionary(
                    members.map { (transform($0.key), $0.value.mapStrings(transform)) }, uniquingKeysWith: { a, _ in a }
                ))
        default: return self
        }
    }
}
