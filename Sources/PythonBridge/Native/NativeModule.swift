import CPython

/// Builds a native module and makes it importable.
///
/// The module is created after the interpreter starts and placed in
/// `sys.modules`, so `import NAME` finds it; no `PyImport_AppendInittab`
/// table (and none of its process-lifetime strings) is needed.
public struct NativeModule {
    /// The module object.
    public let object: PyRef
    /// The module's name.
    public let name: String

    /// A new, empty module named `name`, with `__doc__`.
    public init(name: String, doc: String) throws {
        self.name = name
        object = try PyRef.checked(PyModule_New(name))
        try object.setAttribute("__doc__", PyRef(string: doc))
    }

    /// Adds a native function.
    public func addFunction(_ name: String, doc: String? = nil, _ body: @escaping NativeBody) throws {
        try object.setAttribute(name, NativeFunction.make(name, doc: doc, module: self.name, body))
    }

    /// Sets an attribute of the module.
    public func set(_ name: String, _ value: PyRef) throws {
        try object.setAttribute(name, value)
    }

    /// Runs Python source in the module's namespace (to define pure-Python
    /// helpers such as exception classes next to the native functions).
    public func exec(_ source: String) throws {
        let namespace = try PyRef.checked(PyModule_GetDict(object.pointer).map { PyRef(borrowed: $0).release() })
        if try namespace.item("__builtins__") == nil {
            try namespace.setItem("__builtins__", Interpreter.import("builtins"))
        }
        try Interpreter.exec(source, globals: namespace, filename: "<\(name)>")
    }

    /// Registers the module in `sys.modules`.
    public func register() throws {
        guard let modules = PyImport_GetModuleDict() else { throw PythonErrorSet() }
        if PyDict_SetItemString(modules, name, object.pointer) != 0 { throw PythonErrorSet() }
    }
}
