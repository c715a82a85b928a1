/// When an API reports an error inside a 2xx answer (Slack's `{"ok": false, "error": …}`,
/// YOURLS' `statusCode`), the endpoint's rule for seeing it: `error_when = { path = "ok",
/// equals = false }` and `error_path = "error"` (where the message is).
///
/// With `when`, the answer failed when the value at its path equals its value; with only
/// `messagePath`, when that value is present and neither null, false nor empty.
public struct AnswerErrorRule: Sendable, Equatable {
    /// What `error_when.equals` may hold: a TOML scalar.
    public enum Scalar: Sendable, Equatable, CustomStringConvertible {
        case bool(Bool)
        case int(Int)
        case string(String)

        public var description: String {
            switch self {
            case .bool(let value): String(value)
            case .int(let value): String(value)
            case .string(let value): "\"\(value)\""
            }
        }
    }

    /// A value read from the answer, as far as the rule needs it.
    public enum Found: Sendable, Equatable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        /// A list or an object, written as text (for the message).
        case other(String)

        /// The value as it goes into a message.
        var text: String {
            switch self {
            case .null: "null"
            case .bool(let value): String(value)
            case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
            case .string(let value): value
            case .other(let text): text
            }
        }

        /// Whether the value says nothing went wrong (absent, null, false or empty).
        var isEmpty: Bool {
            switch self {
            case .null, .bool(false): true
            case .string(let value): value.isEmpty
            default: false
            }
        }

        func matches(_ scalar: Scalar) -> Bool {
            switch (self, scalar) {
            case (.bool(let found), .bool(let wanted)): found == wanted
            case (.number(let found), .int(let wanted)): found == Double(wanted)
            case (.string(let found), .string(let wanted)): found == wanted
            default: false
            }
        }
    }

    /// `error_when`: the path and the value that mean "failed".
    public let when: (path: [String], equals: Scalar)?
    /// `error_path`: where the message is.
    public let messagePath: [String]?

    public init(when: (path: [String], equals: Scalar)?, messagePath: [String]?) {
        self.when = when
        self.messagePath = messagePath
    }

    public static func == (left: AnswerErrorRule, right: AnswerErrorRule) -> Bool {
        left.messagePath == right.messagePath && left.when?.path == right.when?.path
            && left.when?.equals == right.when?.equals
    }

    /// The error's message when the answer failed by this rule, else nil; `value` reads the
    /// decoded answer at a path (nil where it has nothing).
    public func failure(_ value: ([String]) throws -> Found?) rethrows -> String? {
        let message = try messagePath.flatMap { try value($0) }
        if let when {
            guard let found = try value(when.path), found.matches(when.equals) else { return nil }
            return message.map(\.text) ?? "\(when.path.joined(separator: ".")) is \(when.equals)"
        }
        guard let message, !message.isEmpty else { return nil }
        return message.text
    }

    /// How `plugins show` describes it.
    public var summary: String {
        let path = messagePath.map { ", the message at \($0.joined(separator: "."))" } ?? ""
        if let when {
            return "an answer whose \(when.path.joined(separator: ".")) is \(when.equals) is an error\(path)"
        }
        return "an answer with \(messagePath?.joined(separator: ".") ?? "") set is an error"
    }
}
