import Clients
import PythonBridge
import WebAPI

/// `_apimacro._redact(value)`: what every `apimacro.APIError` applies to its message, url, body
/// and (for `GraphQLError`) its `errors` when it is made, so that `str(e)`, `repr(e)`, `e.args`,
/// `e.body` and `e.errors` never hold a secret the process knows, wherever the error was raised
/// (a parse error of a body that echoes the token, a GraphQL error message that quotes it, a
/// macro's own `raise`).
enum ErrorRedaction {
    /// Containers nested deeper than this are replaced whole (no error a server sends is this deep).
    static let maximumDepth = 1_000

    /// Adds `_redact` to `module`, redacting with the secrets `secrets` knows at each call.
    static func install(in module: NativeModule, secrets: SecretRegistry) throws {
        try module.addFunction(
            "_redact",
            doc: """
                _redact(value) -> value with every secret apimacro knows replaced by REDACTED: a str, or the str
                inside lists, tuples and dicts (keys too). Any other value comes back as it is.
                """
        ) { arguments in
            let slots = try arguments.bind("_redact", ["value"], required: 1)
            return try redacted(slots[0] ?? .none, secrets.redactor)
        }
    }

    /// `object` with its text redacted (GIL held).
    static func redacted(_ object: PyRef, _ redactor: Redactor) throws -> PyRef {
        if object.isNone { return object }
        if object.typeName == "str" { return try PyRef(string: redactor.redact(try String(pythonString: object))) }
        let value: PythonValue
        do {
            value = try PythonValue(python: object)
        } catch {
            // Not plain data (a set, an object): nothing apimacro made, passed on as it is.
            PythonRaise.clear()
            return object
        }
        let changed = redacted(value, redactor, depth: 0)
        return changed == value ? object : try changed.toPython()
    }

    /// `value` with every string in it redacted; a container past `maximumDepth` becomes `REDACTED`.
    static func redacted(_ value: PythonValue, _ redactor: Redactor, depth: Int) -> PythonValue {
        guard depth < maximumDepth else { return .string("REDACTED") }
        switch value {
        case .string(let text): return .string(redactor.redact(text))
        case .list(let items): return .list(items.map { redacted($0, redactor, depth: depth + 1) })
        case .tuple(let items): return .tuple(items.map { redacted($0, redactor, depth: depth + 1) })
        case .dict(let entries):
            return .dict(
                entries.map {
                    .init(redacted($0.key, redactor, depth: depth + 1), redacted($0.value, redactor, depth: depth + 1))
                })
        default: return value
        }
    }
}
