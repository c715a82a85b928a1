import CPython

/// Thrown when a CPython call failed and left its exception set on this
/// thread: the exception is still there for the caller to propagate to
/// Python (return NULL) or to fetch with `PythonException.fetch()`.
public struct PythonErrorSet: Error, Sendable {
    public init() {}
}

/// An error that knows which Python exception it becomes when it crosses
/// the boundary back into Python.
public protocol PythonRaisable: Error {
    /// Sets this error as the current Python exception (GIL held).
    func raiseInPython()
}

/// A Python exception taken out of the interpreter as plain Swift values.
public struct PythonException: Error, Sendable, CustomStringConvertible {
    /// The exception's type name, such as `ValueError`.
    public let typeName: String
    /// `str(exception)`.
    public let message: String
    /// The whole traceback as Python prints it, ending with the
    /// `Type: message` line.
    public let traceback: String

    public init(typeName: String, message: String, traceback: String) {
        self.typeName = typeName
        self.message = message
        self.traceback = traceback
    }

    public var description: String { message.isEmpty ? typeName : "\(typeName): \(message)" }

    /// Takes the current exception out of the interpreter (GIL held), clearing it.
    ///
    /// Returns nil when no exception is set.
    public static func fetch() -> PythonException? {
        guard let (type, value, traceback) = fetchRaw() else { return nil }
        return describe(type: type, value: value, traceback: traceback)
    }

    /// The current exception as owned references (type, value, traceback),
    /// normalised, with the error indicator cleared.
    public static func fetchRaw() -> (PyRef, PyRef?, PyRef?)? {
        var type: PyPointer?
        var value: PyPointer?
        var traceback: PyPointer?
        PyErr_Fetch(&type, &value, &traceback)
        guard type != nil else { return nil }
        PyErr_NormalizeException(&type, &value, &traceback)
        if let value, let traceback { PyException_SetTraceback(value, traceback) }
        guard let type else { return nil }
        return (PyRef(owned: type), value.map { PyRef(owned: $0) }, traceback.map { PyRef(owned: $0) })
    }

    /// Formats an exception with the `traceback` module; never throws.
    public static func describe(type: PyRef, value: PyRef?, traceback: PyRef?) -> PythonException {
        let name = (try? type.attribute("__name__").str()) ?? "Exception"
        let message = (try? value?.str()) ?? ""
        var text = ""
        if let module = try? PyRef.checked(PyImport_ImportModule("traceback")),
            let lines = try? module.callMethod(
                "format_exception", [type, value ?? .none, traceback ?? .none]),
            let joined = try? PyRef(string: "").callMethod("join", [lines]),
            let formatted = try? String(pythonString: joined)
        {
            text = formatted
        }
        PyErr_Clear()
        if text.isEmpty { text = message.isEmpty ? "\(name)\n" : "\(name): \(message)\n" }
        return PythonException(typeName: name, message: message, traceback: text)
    }
}

/// Ends an iteration: raises `StopIteration` in Python.
public struct StopIterationSignal: Error, PythonRaisable {
    public init() {}
    public func raiseInPython() { PythonRaise.builtin(.stopIteration, "") }
}

/// Sets a Python exception of a built-in class by name (GIL held).
public enum PythonRaise {
    /// The built-in exception classes the bridge raises.
    public enum Builtin: Sendable {
        case typeError, valueError, runtimeError, overflowError, keyboardInterrupt, keyError, attributeError
        case systemExit, stopIteration

        var pointer: PyPointer? {
            switch self {
            case .typeError: apimacro_Exc_TypeError()
            case .valueError: apimacro_Exc_ValueError()
            case .runtimeError: apimacro_Exc_RuntimeError()
            case .overflowError: apimacro_Exc_OverflowError()
            case .keyboardInterrupt: apimacro_Exc_KeyboardInterrupt()
            case .keyError: apimacro_Exc_KeyError()
            case .attributeError: apimacro_Exc_AttributeError()
            case .systemExit: apimacro_Exc_SystemExit()
            case .stopIteration: apimacro_Exc_StopIteration()
            }
        }
    }

    /// `raise <builtin>(message)`.
    public static func builtin(_ kind: Builtin, _ message: String) {
        PyErr_SetString(kind.pointer, message)
    }

    /// `raise type(message)` for a class object (for example one made by the module).
    public static func type(_ type: PyRef, _ message: String) {
        PyErr_SetString(type.pointer, message)
    }

    /// `raise instance`.
    public static func instance(_ instance: PyRef) {
        guard let type = PyObject_Type(instance.pointer) else { return }
        PyErr_SetObject(type, instance.pointer)
        Py_DecRef(type)
    }

    /// Clears the exception set on this thread, if any.
    public static func clear() {
        PyErr_Clear()
    }

    /// Whether an exception class (from `PythonException.fetchRaw`) is `builtin` or a subclass of it.
    public static func matches(_ type: PyRef, _ builtin: Builtin) -> Bool {
        PyErr_GivenExceptionMatches(type.pointer, builtin.pointer) != 0
    }

    /// Whether an exception is set on this thread.
    public static var isSet: Bool { PyErr_Occurred() != nil }

    /// Raises `error` in Python: a `PythonRaisable` raises itself, a pending
    /// CPython error stays, anything else becomes `RuntimeError`.
    public static func error(_ error: any Error) {
        switch error {
        case is PythonErrorSet:
            if PyErr_Occurred() == nil {
                builtin(.runtimeError, "apimacro: a native call failed without an exception")
            }
        case let raisable as PythonRaisable:
            raisable.raiseInPython()
        default:
            builtin(.runtimeError, String(describing: error))
        }
    }
}
