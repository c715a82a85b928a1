/// An ordered JSON value: objects keep their key order and numbers keep their literal text, so a
/// fixture parsed and serialized again comes out byte for byte as GitHub sent it (compact form).
enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, kept as its JSON literal (`42`, `1.0`, `-3e2`).
    case number(String)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    /// A number from an integer.
    static func int(_ value: Int) -> JSON { .number(String(value)) }

    /// A string, or `null` when `value` is nil.
    static func nullable(_ value: String?) -> JSON {
        guard let value else { return .null }
        return .string(value)
    }

    static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member named `key` of an object (the first one if repeated).
    subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The string payload, if this is a string.
    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// A copy of this object with `key` set to `value` (replaced in place, or appended).
    func setting(_ key: String, _ value: JSON) -> JSON {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.0 == key }) {
            members[index].1 = value
        } else {
            members.append((key, value))
        }
        return .object(members)
    }

    /// A copy of this object without `key`.
    func removing(_ key: String) -> JSON {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { $0.0 != key })
    }

    /// A copy with `transform` applied to every string value (not to keys), recursively.
    func mapStrings(_ transform: (String) -> String) -> JSON {
        switch self {
        case .string(let value): return .string(transform(value))
        case .array(let items): return .array(items.map { $0.mapStrings(transform) })
        case .object(let members): return .object(members.map { ($0.0, $0.1.mapStrings(transform)) })
        default: return self
        }
    }
}
