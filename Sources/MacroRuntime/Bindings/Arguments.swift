import Clients
import PythonBridge
import WebAPI

/// Reading Python arguments of the native functions into Swift values, with
/// the `TypeError`s a Python user expects.
enum Arguments {
    /// A required `str`.
    static func string(_ value: PyRef?, _ name: String, in function: String) throws -> String {
        guard let value, case .string(let text) = try PythonValue(python: value) else {
            throw ArgumentError("\(function)() argument '\(name)' must be str, not \(value?.typeName ?? "missing")")
        }
        return text
    }

    /// An optional `str` (None → nil).
    static func optionalString(_ value: PyRef?, _ name: String, in function: String) throws -> String? {
        guard let value, !value.isNone else { return nil }
        return try string(value, name, in: function)
    }

    /// `function(path, params=None)`'s arguments, and with `limited`, `function(path,
    /// params=None, limit=None)`'s (the calls on a path relative to a client's base URL).
    static func pathCall(_ arguments: PyArguments, _ function: String, limited: Bool = false) throws -> (
        path: String, parameters: [(String, String)], limit: Int?
    ) {
        let slots = try arguments.bind(function, ["path", "params"] + (limited ? ["limit"] : []), required: 1)
        return (
            try string(slots[0], "path", in: function), try pairs(slots[1], "params", in: function),
            limited ? try limit(slots[2], in: function) : nil
        )
    }

    /// An optional non-negative `int` (None → nil).
    static func limit(_ value: PyRef?, in function: String) throws -> Int? {
        guard let value, !value.isNone else { return nil }
        guard case .int(let number) = try PythonValue(python: value), number >= 0 else {
            throw ArgumentError(
                "\(function)() argument 'limit' must be a non-negative int or None, not \(value.typeName)")
        }
        return number
    }

    /// An optional number of seconds (None → nil).
    static func seconds(_ value: PyRef?, _ name: String, in function: String) throws -> Double? {
        guard let value, !value.isNone else { return nil }
        let what = "\(function)() argument '\(name)'"
        let number = try span(number(value, what), what)
        guard number > 0 else {
            throw ArgumentError("\(what) must be a positive number of seconds", raising: .valueError)
        }
        return number
    }

    /// An int or a float as a `Double` (an int past 64 bits as an infinity of its sign); else `TypeError`.
    static func number(_ value: PyRef, _ what: String) throws -> Double {
        switch try PythonValue(python: value) {
        case .int(let number): return Double(number)
        case .bigInt(let digits): return digits.hasPrefix("-") ? -.infinity : .infinity
        case .float(let number): return number
        default: throw ArgumentError("\(what) must be a number of seconds, not '\(value.typeName)'")
        }
    }

    /// `value` when it is a span a macro may ask for (0 to `Seconds.longest`); else the error Python's
    /// `time.sleep` raises: `ValueError` for NaN or a negative number, `OverflowError` past the longest.
    static func span(_ value: Double, _ what: String) throws -> Double {
        switch Seconds.check(value) {
        case .notANumber?:
            throw ArgumentError("\(what) must be a number of seconds, not NaN", raising: .valueError)
        case .negative?:
            throw ArgumentError("\(what) must not be negative (\(value) seconds)", raising: .valueError)
        case .tooLong?:
            throw ArgumentError(
                "\(what) is too long: at most \(SecondsText.format(Seconds.longest)) seconds (about 31 years), "
                    + "not \(value)", raising: .overflowError)
        case nil:
            return value
        }
    }

    /// Query parameters from a dict, a list of pairs, or None.
    ///
    /// Values become text: bools as `true`/`false`, None values are left out, lists
    /// repeat the key.
    static func pairs(_ value: PyRef?, _ name: String, in function: String) throws -> [(String, String)] {
        guard let value, !value.isNone else { return [] }
        let entries: [(PythonValue, PythonValue)]
        switch try PythonValue(python: value) {
        case .dict(let items):
            entries = items.map { ($0.key, $0.value) }
        case .list(let items), .tuple(let items):
            entries = try items.map { item in
                guard case .tuple(let pair) = item, pair.count == 2 else {
                    throw ArgumentError(
                        "\(function)() argument '\(name)' must be a dict or a list of (key, value) pairs")
                }
                return (pair[0], pair[1])
            }
        default:
            throw ArgumentError("\(function)() argument '\(name)' must be a dict or a list of (key, value) pairs")
        }
        return try pairs(entries, name, in: function)
    }

    /// Query parameters from keyword arguments (`github.repos(login, type="owner")`).
    static func pairs(keywords: [(String, PyRef)], in function: String) throws -> [(String, String)] {
        try pairs(keywords.map { (.string($0.0), try PythonValue(python: $0.1)) }, "params", in: function)
    }

    /// Key–value entries as text pairs: bools as `true`/`false`, None left out, lists repeat the key.
    static func pairs(_ entries: [(PythonValue, PythonValue)], _ name: String, in function: String) throws -> [(
        String, String
    )] {
        var result: [(String, String)] = []
        for (key, item) in entries {
            let keyText = try text(key, name, function)
            switch item {
            case .none: continue
            case .list(let values), .tuple(let values):
                for element in values { result.append((keyText, try text(element, name, function))) }
            default:
                result.append((keyText, try text(item, name, function)))
            }
        }
        return result
    }

    static func text(_ value: PythonValue, _ name: String, _ function: String) throws -> String {
        switch value {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .bigInt(let digits): return digits
        case .float(let number):
            return number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .bytes(let bytes): return String(decoding: bytes, as: UTF8.self)
        default: throw ArgumentError("\(function)() argument '\(name)': values must be str, int, float or bool")
        }
    }
}
