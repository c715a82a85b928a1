import CPython
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded CPython interpreter: one per process, started once.
public enum Interpreter {
    /// Why the interpreter could not start.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    private static let started = Mutex(false)

    /// The version of the linked libpython, such as `3.11.2`.
    public static var version: String {
        let full = String(cString: Py_GetVersion())
        return String(full.prefix { $0 != " " })
    }

    /// `major.minor` of the linked libpython, such as `3.11`.
    public static var minorVersion: String { "\(PY_MAJOR_VERSION).\(PY_MINOR_VERSION)" }

    /// Starts the interpreter isolated from the user's `PYTHON*` variables
    /// (a `PYTHONHOME` meant for another Python would break it), in UTF-8
    /// mode, with Python's signal handlers and a chained Ctrl-C hook, then
    /// releases the GIL: every later entry goes through `withGIL`.
    ///
    /// Call from the main thread before anything else touches Python; later
    /// calls do nothing.
    public static func start(programName: String = "apimacro", argv: [String] = []) throws {
        try started.withLock { isStarted in
            guard !isStarted else { return }
            var preconfig = PyPreConfig()
            PyPreConfig_InitPythonConfig(&preconfig)
            preconfig.utf8_mode = 1
            preconfig.use_environment = 0
            try check(Py_PreInitialize(&preconfig))

            var config = PyConfig()
            PyConfig_InitPythonConfig(&config)
            defer { PyConfig_Clear(&config) }
            config.use_environment = 0
            config.parse_argv = 0
            config.install_signal_handlers = 1
            config.safe_path = 1
            try withUnsafeMutablePointer(to: &config) { pointer in
                guard let field = pointer.pointer(to: \.program_name) else { return }
                try check(PyConfig_SetBytesString(pointer, field, programName))
            }
            try check(Py_InitializeFromConfig(&config))
            Interrupts.mainThread = pthread_self()
            Interrupts.install()
            ForkedChildError.recordOwner()
            isStarted = true
            _ = PyEval_SaveThread()
        }
    }

    /// Adopts an interpreter another program started (`_apimacro` imported by `python3`; GIL held).
    ///
    /// Later `start` calls do nothing, Python's main thread is the one Ctrl-C is looked for on,
    /// and the process is the one `fork()` children are told apart from. The host's signal
    /// handlers and interpreter are left as they are: native waits see a Ctrl-C through
    /// `PyErr_CheckSignals` on the main thread.
    public static func attach() throws {
        let ident = try Interpreter.import("threading").callMethod("main_thread").attribute("ident")
        let thread = PyLong_AsUnsignedLong(ident.pointer)
        if PyErr_Occurred() != nil { throw PythonErrorSet() }
        started.withLock { isStarted in
            guard !isStarted else { return }
            Interrupts.mainThread = pthread_t(thread)
            ForkedChildError.recordOwner()
            isStarted = true
        }
    }

    private static func check(_ status: PyStatus) throws {
        if PyStatus_Exception(status) != 0 {
            let message = status.err_msg.map { String(cString: $0) } ?? "unknown error"
            throw StartError(description: "cannot start the embedded Python \(minorVersion): \(message)")
        }
    }

    /// Imports a module by name (GIL held).
    public static func `import`(_ name: String) throws -> PyRef {
        try PyRef.checked(PyImport_ImportModule(name))
    }

    /// Compiles and runs `source` in `globals` (GIL held), as `exec` does; the compiled code
    /// comes from `CodeCache` when it holds this source.
    public static func exec(_ source: String, globals: PyRef, filename: String = "<apimacro>") throws {
        let code = try CodeCache.code(for: source, filename: filename)
        _ = try PyRef.checked(PyEval_EvalCode(code.pointer, globals.pointer, globals.pointer))
    }

    /// Compiles a file's bytes as `compile(source, filename, "exec", dont_inherit=True)` does
    /// (GIL held): a coding cookie is honoured, no `__future__` flag is inherited.
    ///
    /// Calls the C compiler directly: the builtin `compile()` first checks whether it was given
    /// an AST, which builds the `ast` module's hundred-odd node types (9 M instructions,
    /// a fifth of an empty macro's start-up). Bytes holding a NUL go to the builtin, which
    /// raises its own error for them.
    public static func compileFile(_ source: [UInt8], filename: String) throws -> PyRef {
        guard !source.contains(0) else {
            let builtins = try Interpreter.import("builtins")
            return try builtins.callMethod(
                "compile",
                [PythonValue.bytes(source).toPython(), PyRef(string: filename), PyRef(string: "exec")],
                kwargs: [("dont_inherit", .bool(true))])
        }
        let name = try PyRef(string: filename)
        var flags = PyCompilerFlags(cf_flags: PyCF_SOURCE_IS_UTF8, cf_feature_version: PY_MINOR_VERSION)
        let text = source + [0]
        return try text.withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) {
                try PyRef.checked(Py_CompileStringObject($0.baseAddress, name.pointer, Py_file_input, &flags, -1))
            }
        }
    }

    /// Evaluates one expression in `globals` (GIL held).
    public static func eval(_ expression: String, globals: PyRef) throws -> PyRef {
        let code = try PyRef.checked(Py_CompileString(expression, "<apimacro>", Py_eval_input))
        return try PyRef.checked(PyEval_EvalCode(code.pointer, globals.pointer, globals.pointer))
    }

    /// A fresh globals dict with `__builtins__`, `__name__` and optional extras.
    public static func newGlobals(name: String = "__apimacro__") throws -> PyRef {
        let globals = try PyRef.checked(PyDict_New())
        let builtins = try PyRef.checked(PyImport_ImportModule("builtins"))
        try globals.setItem("__builtins__", builtins)
        try globals.setItem("__name__", PyRef(string: name))
        return globals
    }

    /// Flushes `sys.stdout` and `sys.stderr` (GIL held); errors are ignored.
    public static func flushStandardStreams() {
        for name in ["stdout", "stderr"] {
            if let stream = PySys_GetObject(name) {
                let ref = PyRef(borrowed: stream)
                if !ref.isNone { _ = try? ref.callMethod("flush") }
            }
        }
        PyErr_Clear()
    }
}
