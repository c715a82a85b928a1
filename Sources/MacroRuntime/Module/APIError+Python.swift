import Clients
public import PythonBridge
public import WebAPI

/// The one table from WebAPI's error kinds to the exception classes of SPEC §3.
extension APIError: PythonRaisable {
    /// The `_apimacro` class name for each kind; invalid requests are `ValueError`.
    static func pythonClass(for kind: Kind) -> String? {
        switch kind {
        case .network: "NetworkError"
        case .timeout: "Timeout"
        case .notFound: "NotFound"
        case .unauthorized: "Unauthorized"
        case .forbidden: "Forbidden"
        case .rateLimited: "RateLimited"
        case .parse: "ParseError"
        case .auth: "AuthError"
        case .offline: "OfflineError"
        case .http: "HTTPError"
        default: nil
        }
    }

    public func raiseInPython() {
        if kind == .cancelled {
            // A request cancelled by Ctrl-C: Python sees the interrupt, never a network error.
            PythonRaise.builtin(.keyboardInterrupt, "")
            return
        }
        guard let className = APIError.pythonClass(for: kind) else {
            PythonRaise.builtin(.valueError, message)
            return
        }
        do {
            let module = try Interpreter.import("_apimacro")
            var type = try module.attribute(className)
            // Only the Graph API's errors carry details (code, subcode, fbtrace_id): they are
            // raised as the class's subclass that is also a GraphAPIError, which declares them.
            if !details.isEmpty { type = try module.attribute("_graph_class").call([type]) }
            var keywords: [(String, PyRef)] = [
                ("status", try status.map { try PythonValue.int($0).toPython() } ?? .none),
                ("url", try url.map { try PyRef(string: $0) } ?? .none),
                ("api", try api.map { try PyRef(string: $0) } ?? .none),
                ("body", try body.map { try PyRef(string: $0) } ?? .none),
            ]
            if kind == .rateLimited {
                keywords.append(("reset_at", try resetAt.map { try PythonValue.int($0).toPython() } ?? .none))
                keywords.append(("retry_after", try retryAfter.map { try PythonValue.float($0).toPython() } ?? .none))
                keywords.append(("secondary", .bool(isSecondary)))
            }
            // The API's list of what was wrong (JSON text, redacted): a list, or left out when it
            // does not decode as one.
            if let errorList,
                let list = try? Interpreter.import("json").callMethod("loads", [PyRef(string: errorList)]),
                PySequence.isList(list)
            {
                keywords.append(("errors", list))
            }
            PythonRaise.clear()
            let instance = try type.call([try PyRef(string: message)], kwargs: keywords)
            for detail in details {
                let value: PyRef
                switch detail.value {
                case .int(let number): value = try PythonValue.int(number).toPython()
                case .string(let text): value = try PyRef(string: text)
                case .none: value = .none
                }
                try instance.setAttribute(detail.name, value)
            }
            PythonRaise.instance(instance)
        } catch {
            PythonRaise.builtin(.runtimeError, message)
        }
    }
}
