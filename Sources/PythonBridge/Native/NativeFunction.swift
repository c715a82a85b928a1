import CPython

/// The arguments of a call from Python into a native function, borrowed for
/// the duration of the call.
public struct PyArguments {
    /// Positional arguments, in order.
    public let positional: [PyRef]
    /// Keyword arguments, in call order.
    public let keywords: [(String, PyRef)]

    init(args: PyPointer?, kwargs: PyPointer?) throws {
        var positional: [PyRef] = []
        if let args {
            let count = PyTuple_Size(args)
            positional.reserveCapacity(count)
            for index in 0..<count {
                positional.append(PyRef(borrowed: apimacro_TupleGetItem(args, index)))
            }
        }
        var keywords: [(String, PyRef)] = []
        if let kwargs {
            var position: Py_ssize_t = 0
            var key: PyPointer?
            var value: PyPointer?
            while PyDict_Next(kwargs, &position, &key, &value) != 0 {
                guard let key, let value else { continue }
                keywords.append((try String(pythonString: PyRef(borrowed: key)), PyRef(borrowed: value)))
            }
        }
        self.positional = positional
        self.keywords = keywords
    }

    /// Matches the arguments against a signature and returns one slot per
    /// parameter (nil where not given), raising Python's usual `TypeError`s.
    ///
    /// - Parameters:
    ///   - function: the name shown in errors.
    ///   - parameters: parameter names in positional order.
    ///   - required: how many leading parameters must be given.
    ///   - positionalLimit: how many may be passed positionally (default: all).
    /// - Returns: one slot per name in `parameters`, in order: the argument given for it, or nil.
    /// - Throws: `ArgumentError` (Python's `TypeError`) for too many positional arguments, an
    ///   unknown keyword, a value given twice or a missing required argument.
    public func bind(
        _ function: String, _ parameters: [String], required: Int = 0, positionalLimit: Int? = nil
    ) throws -> [PyRef?] {
        let limit = positionalLimit ?? parameters.count
        guard positional.count <= limit else {
            throw ArgumentError(
                "\(function)() takes \(limit == 0 ? "no" : "at most \(limit)") positional argument\(limit == 1 ? "" : "s") (\(positional.count) given)"
            )
        }
        var slots: [PyRef?] = Array(repeating: nil, count: parameters.count)
        for (index, value) in positional.enumerated() { slots[index] = value }
        for (name, value) in keywords {
            guard let index = parameters.firstIndex(of: name) else {
                throw ArgumentError("\(function)() got an unexpected keyword argument '\(name)'")
            }
            guard slots[index] == nil else {
                throw ArgumentError("\(function)() got multiple values for argument '\(name)'")
            }
            slots[index] = value
        }
        for index in 0..<required where slots[index] == nil {
            throw ArgumentError("\(function)() missing required argument '\(parameters[index])'")
        }
        return slots
    }
}

/// A wrong call from Python: becomes `TypeError`, or the built-in class given (a value out of
/// range is a `ValueError` or an `OverflowError`, as Python's own functions raise).
public struct ArgumentError: Error, Sendable, CustomStringConvertible, PythonRaisable {
    public let description: String
    let kind: PythonRaise.Builtin
    public init(_ description: String, raising kind: PythonRaise.Builtin = .typeError) {
        self.description = description
        self.kind = kind
    }
    public func raiseInPython() { PythonRaise.builtin(kind, description) }
}

/// The Swift closure behind a native function.
public typealias NativeBody = (PyArguments) throws -> PyRef

/// Holds a native function's closure; kept alive by the capsule that is the
/// function's `self`.
private final class FunctionBox {
    let name: String
    let body: NativeBody
    init(name: String, body: @escaping NativeBody) {
        self.name = name
        self.body = body
    }
}

/// The one entry point from Python into every native function: the boundary
/// wrapper.
///
/// It finds the closure, runs it, and turns any thrown error into a Python
/// exception (never a crash).
private let trampoline: @convention(c) (PyPointer?, PyPointer?, PyPointer?) -> PyPointer? = { capsule, args, kwargs in
    guard let capsule, let raw = PyCapsule_GetPointer(capsule, NativeFunction.capsuleName) else {
        return nil
    }
    let box = Unmanaged<FunctionBox>.fromOpaque(raw).takeUnretainedValue()
    do {
        let arguments = try PyArguments(args: args, kwargs: kwargs)
        // A new reference for CPython; the PyRef (which may be cached by
        // the callee, like a Response's headers) keeps its own.
        let result = try box.body(arguments)
        Py_IncRef(result.pointer)
        return result.pointer
    } catch {
        PythonRaise.error(error)
        return nil
    }
}

private let releaseBox: @convention(c) (PyPointer?) -> Void = { capsule in
    guard let capsule, let raw = PyCapsule_GetPointer(capsule, NativeFunction.capsuleName) else {
        PyErr_Clear()
        return
    }
    Unmanaged<FunctionBox>.fromOpaque(raw).release()
}

/// Builds Python callables backed by Swift closures.
public enum NativeFunction {
    /// The capsule name; CPython keeps the pointer, so it lives for the process.
    nonisolated(unsafe) static let capsuleName: UnsafePointer<CChar> = ProcessLifetime.cString("apimacro.native")

    /// A Python function named `name` that runs `body` (GIL held).
    ///
    /// When `doc` begins with the call (`name(parameters) -> …`), `inspect.signature()` and
    /// `help()` show those parameters (`TextSignature`). The method table entry and the name
    /// are allocated for the life of the process, because CPython keeps pointers to them.
    public static func make(
        _ name: String, doc: String? = nil, module: String? = nil, _ body: @escaping NativeBody
    ) throws -> PyRef {
        try make(name, doc: doc, module: module, method: false, body)
    }

    /// `make`, for a function that `NativeClass` binds to an instance: its signature starts with `self`.
    static func make(
        _ name: String, doc: String?, module: String?, method: Bool, _ body: @escaping NativeBody
    ) throws -> PyRef {
        let definition = UnsafeMutablePointer<PyMethodDef>.allocate(capacity: 1)
        definition.initialize(
            to: PyMethodDef(
                ml_name: ProcessLifetime.cString(name),
                ml_meth: unsafeBitCast(trampoline, to: PyCFunction.self),
                ml_flags: apimacro_MethVarargsKeywords(),
                ml_doc: doc.map {
                    ProcessLifetime.cString(TextSignature.internalDoc(name: name, doc: $0, method: method))
                }))
        let box = Unmanaged.passRetained(FunctionBox(name: name, body: body))
        guard let capsule = PyCapsule_New(box.toOpaque(), capsuleName, releaseBox) else {
            box.release()
            throw PythonErrorSet()
        }
        let capsuleRef = PyRef(owned: capsule)
        let moduleName = try module.map { try PyRef(string: $0) }
        return try PyRef.checked(PyCFunction_NewEx(definition, capsuleRef.pointer, moduleName?.pointer))
    }
}

/// Memory that CPython keeps pointers to for the rest of the process.
enum ProcessLifetime {
    /// A NUL-terminated copy of `text` that is never freed.
    static func cString(_ text: String) -> UnsafePointer<CChar> {
        let utf8 = Array(text.utf8CString)
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count)
        buffer.initialize(from: utf8, count: utf8.count)
        return UnsafePointer(buffer)
    }
}
