import PythonBridge
import Testing

/// Starts the interpreter once for the test process and runs `body` on a
/// Python thread.
func python<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try Interpreter.start()
    return try await onPythonThread(body)
}

/// Evaluates a Python expression after running `setup` in a fresh namespace.
func evaluate(_ expression: String, setup: String = "") throws -> PyRef {
    let globals = try Interpreter.newGlobals()
    if !setup.isEmpty { try Interpreter.exec(setup, globals: globals) }
    return try Interpreter.eval(expression, globals: globals)
}

/// Runs `body`, fetching any Python exception it leaves as a `PythonException`.
func fetching<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch is PythonErrorSet {
        throw PythonException.fetch() ?? PythonException(typeName: "?", message: "no exception set", traceback: "")
    }
}
