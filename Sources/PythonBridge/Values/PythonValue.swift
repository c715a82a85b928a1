/// A Python value as plain Swift data: what crosses between Swift code that
/// knows nothing of Python and the interpreter.
///
/// Conversions in both directions are iterative, so a document nested
/// thousands of levels deep converts without exhausting the native stack.
public enum PythonValue: Sendable, Equatable {
    case none
    case bool(Bool)
    case int(Int)
    /// An integer beyond 64 bits, as decimal digits with an optional `-`.
    case bigInt(String)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case list([PythonValue])
    case tuple([PythonValue])
    /// Entries in insertion order; keys must be hashable in Python.
    case dict([Entry])

    /// One key–value pair of a dict.
    public struct Entry: Sendable, Equatable {
        public var key: PythonValue
        public var value: PythonValue
        public init(_ key: PythonValue, _ value: PythonValue) {
            self.key = key
            self.value = value
        }
    }

    /// A dict with string keys, in the given order.
    public static func object(_ pairs: [(String, PythonValue)]) -> PythonValue {
        .dict(pairs.map { Entry(.string($0.0), $0.1) })
    }

    /// The value under a string key of a dict, if any.
    public subscript(key: String) -> PythonValue? {
        guard case .dict(let entries) = self else { return nil }
        return entries.first { $0.key == .string(key) }?.value
    }
}

/// Why a value could not cross between Swift and Python.
public struct ConversionError: Error, Sendable, CustomStringConvertible, PythonRaisable {
    public let description: String
    let isTypeError: Bool

    /// A Python value of a type with no Swift form.
    public static func unsupported(_ typeName: String) -> ConversionError {
        ConversionError(
            description:
                "cannot convert a Python '\(typeName)' (expected None, bool, int, float, str, bytes, list, tuple or dict)",
            isTypeError: true)
    }

    /// Nesting deeper than `PythonValue.maximumDepth` (or a container that holds itself).
    public static func tooDeep(_ limit: Int) -> ConversionError {
        ConversionError(
            description: "value nested deeper than \(limit) levels (or a container that contains itself)",
            isTypeError: false)
    }

    /// A wrongly typed argument.
    public static func expected(_ what: String, got typeName: String) -> ConversionError {
        ConversionError(description: "expected \(what), got '\(typeName)'", isTypeError: true)
    }

    public func raiseInPython() {
        PythonRaise.builtin(isTypeError ? .typeError : .valueError, description)
    }
}

extension PythonValue {
    /// The deepest nesting converted from Python; deeper input (or a
    /// self-containing list) raises `ValueError` instead of looping.
    public static let maximumDepth = 100_000
}
