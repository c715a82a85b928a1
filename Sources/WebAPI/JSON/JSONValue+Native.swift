public import Platform

/// JSON read and written without `JSONSerialization` (Foundation proper, which brings ICU):
/// the same documents as `JSONValue`, and the plain Swift trees (`[String: Any]`, `[Any]`,
/// `String`, `Int`, `Double`, `Bool`) the readers of answers and files work on.
extension JSONValue {
    /// The document in `bytes`, or nil when it is not JSON or holds more than `limit` values
    /// and keys (`JSONPath.holds`: a server's body is bounded before it is decoded).
    public static func parse(_ bytes: [UInt8], atMost limit: Int = JSONPath.maxValues) -> JSONValue? {
        guard JSONPath.holds(atMost: limit, bytes) else { return nil }
        return JSONReader.read(bytes)
    }

    /// The value at `path` (object keys, or array indices as decimal strings), as
    /// `JSONPath.value(in:path:)` finds it.
    public func value(at path: [String]) -> JSONValue? {
        JSONPath.value(
            in: self, path: path, count: { $0.array?.count },
            element: { node, index in node.array?[index] },
            member: { node, key in node[key] })
    }

    /// The plain Swift value at `path` in `body` (see `native`), if the body is JSON of at most
    /// `JSONPath.maxValues` values.
    public static func native(in body: [UInt8], path: [String]) -> Any? {
        parse(body)?.value(at: path)?.native
    }

    /// The value as plain Swift: `[String: Any]`, `[Any]`, `String`, `Int` (a whole number in
    /// `Int64`'s range), `Double`, `Bool`, and `JSONValue.null` for null (so that it survives
    /// a trip back through `init(native:)`).
    public var native: Any {
        switch self {
        case .null: JSONValue.null
        case .bool(let value): value
        case .int(let value): Int(value)
        case .double(let value): value
        case .string(let value): value
        case .array(let items): items.map(\.native)
        case .object(let members): members.mapValues(\.native)
        }
    }

    /// The JSON form of a plain Swift value (the kinds `native` gives, `Int64`, `Int32`, a
    /// `JSONValue`), or nil when it holds anything else or a number that is not finite (which
    /// `JSONSerialization` refused too).
    public init?(native value: Any) {
        switch value {
        case let value as JSONValue: self = value
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .int(Int64(value))
        case let value as Int64: self = .int(value)
        case let value as Int32: self = .int(Int64(value))
        case let value as Double:
            guard value.isFinite else { return nil }
            self = .double(value)
        case let value as String: self = .string(value)
        case let value as Substring: self = .string(String(value))
        case let items as [Any]:
            var converted: [JSONValue] = []
            converted.reserveCapacity(items.count)
            for item in items {
                guard let item = JSONValue(native: item) else { return nil }
                converted.append(item)
            }
            self = .array(converted)
        case let members as [String: Any]:
            var converted: [String: JSONValue] = [:]
            for (key, member) in members {
                guard let member = JSONValue(native: member) else { return nil }
                converted[key] = member
            }
            self = .object(converted)
        default: return nil
        }
    }

    /// A number in a plain Swift tree (`Int`, `Int64` or `Double`; not `true` or `false`), as a
    /// `Double`.
    public static func number(_ value: Any?) -> Double? {
        switch value {
        case let value as Int: Double(value)
        case let value as Int64: Double(value)
        case let value as Double: value
        default: nil
        }
    }

    /// Whether a value of a plain Swift tree is JSON's null.
    public static func isNull(_ value: Any?) -> Bool {
        (value as? JSONValue) == .null
    }

    /// The items of an array.
    public var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The members of an object.
    public var object: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The value as JSON text formatted as `formatting` says; nil only if encoding fails.
    ///
    /// With `.sortedKeys`, `.withoutEscapingSlashes` or `.prettyPrinted`: the same bytes
    /// `JSONSerialization` wrote for the same document with the same options.
    public func encoded(_ formatting: JSONEncoder.OutputFormatting) -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = formatting
        return try? encoder.encode(self)
    }

    /// A plain Swift value (see `init(native:)`) as JSON text, as `encoded(_:)`; nil when it
    /// holds something JSON has no form for.
    public static func encoded(native value: Any, _ formatting: JSONEncoder.OutputFormatting) -> Data? {
        JSONValue(native: value)?.encoded(formatting)
    }
}
