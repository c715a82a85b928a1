import CPython

/// Builds a Python class whose methods and properties are Swift closures and
/// whose instances carry a Swift object as their native state.
///
/// The class is made with `type(name, bases, namespace)`; methods are native
/// functions wrapped in `instancemethod` so they bind `self`; the state lives
/// in a capsule under the attribute `_native`.
public final class NativeClass<State: AnyObject> {
    /// The class object, once `build()` has run.
    public private(set) var type: PyRef?
    private let name: String
    private let module: String
    private let doc: String
    private var members: [(String, PyRef)] = []
    /// Whether `iterator` made the instances iterators (`build` then sets `tp_iternext`).
    private var iterates = false
    /// A keyword-only parameter every public method added after it is set takes (a client's
    /// `cache=`): it is taken out of the arguments before the method's body binds them, its
    /// signature shows it, and `around` runs the body with its value (nil when not given).
    public var sharedKeyword: (name: String, around: (PyRef?, () throws -> PyRef) throws -> PyRef)?

    /// Starts a class `module.name`.
    public init(name: String, module: String, doc: String = "") {
        self.name = name
        self.module = module
        self.doc = doc
    }

    /// Adds a method; `body` receives the instance's state and the arguments after `self`.
    ///
    /// Returns the underlying function (what `instance.method.__func__` is).
    @discardableResult
    public func method(
        _ name: String, doc: String? = nil, _ body: @escaping (State, PyArguments) throws -> PyRef
    ) throws -> PyRef {
        let className = self.name
        if let shared = sharedKeyword, !name.hasPrefix("_") {
            let function = try NativeFunction.make(
                name, doc: doc.map { TextSignature.adding(keyword: shared.name, to: $0, of: name) }, module: module,
                method: true
            ) { arguments in
                let (state, rest) = try NativeClass.split(arguments, className: className)
                let value = rest.keywords.last { $0.0 == shared.name }?.1
                let others = PyArguments(
                    positional: rest.positional, keywords: rest.keywords.filter { $0.0 != shared.name })
                return try shared.around(value) { try body(state, others) }
            }
            members.append((name, try PyRef.checked(PyInstanceMethod_New(function.pointer))))
            return function
        }
        let function = try NativeFunction.make(name, doc: doc, module: module, method: true) { arguments in
            let (state, rest) = try NativeClass.split(arguments, className: className)
            return try body(state, rest)
        }
        members.append((name, try PyRef.checked(PyInstanceMethod_New(function.pointer))))
        return function
    }

    /// Adds a method that returns the instance itself (such as `__iter__` of an iterator).
    public func returnsSelf(_ name: String) throws {
        let className = self.name
        let function = try NativeFunction.make(name, module: module) { arguments in
            guard let instance = arguments.positional.first else {
                throw ArgumentError("\(className).\(name)() called without an instance")
            }
            return instance
        }
        members.append((name, try PyRef.checked(PyInstanceMethod_New(function.pointer))))
    }

    /// Makes the instances iterators: `__iter__` returns the instance and `__next__` the item
    /// `next` gives, a new reference (nil: the end, `StopIteration`).
    ///
    /// `for`, `list()` and `next()` reach `next` straight from the class's `tp_iternext` slot
    /// (`iterateNext`), not through a call of the `__next__` method (a bound method, an argument
    /// tuple, `PyArguments`, `_native` as a `PyRef`: ~2 k instructions an item, a tenth of a
    /// page iterator's Python thread). `it.__next__()` calls the method, with the same answer; a
    /// subclass, or a `__next__` assigned to the class, goes through the method as CPython does.
    public func iterator(_ next: @escaping (State) throws -> PyPointer?) throws {
        try returnsSelf("__iter__")
        try method("__next__") { state, _ in
            guard let item = try next(state) else { throw StopIterationSignal() }
            return PyRef(owned: item)
        }
        let className = name
        let box = Unmanaged.passRetained(
            IteratorBox { object in
                do {
                    guard let state = NativeClass.state(ofPointer: object) else {
                        throw ArgumentError(
                            "expected a \(className) object, got '\(String(cString: apimacro_TypeName(object)))'")
                    }
                    return try next(state)
                } catch {
                    PythonRaise.error(error)
                    return nil
                }
            })
        guard let capsule = PyCapsule_New(box.toOpaque(), iteratorCapsuleName, releaseIterator) else {
            box.release()
            throw PythonErrorSet()
        }
        members.append((iteratorAttribute, PyRef(owned: capsule)))
        iterates = true
    }

    /// Adds a read-only property computed from the state.
    public func property(_ name: String, doc: String? = nil, _ getter: @escaping (State) throws -> PyRef) throws {
        let className = self.name
        let function = try NativeFunction.make(name, doc: doc, module: module) { arguments in
            try getter(NativeClass.split(arguments, className: className).0)
        }
        let property = try Interpreter.import("builtins").attribute("property")
        members.append(
            (name, try property.call([function], kwargs: doc.map { [("doc", try PyRef(string: $0))] } ?? [])))
    }

    /// Creates the class object.
    @discardableResult
    public func build() throws -> PyRef {
        let namespace = try PyRef.checked(PyDict_New())
        for (key, value) in members { try namespace.setItem(key, value) }
        try namespace.setItem("__module__", PyRef(string: module))
        try namespace.setItem("__doc__", PyRef(string: doc))
        let builtins = try Interpreter.import("builtins")
        let bases = try PythonValue.tuple([]).toPython()
        let made = try builtins.attribute("type").call([try PyRef(string: name), bases, namespace])
        if iterates {
            // `type()` set the slot to call `__next__`; the same answer without the call.
            let object = UnsafeMutableRawPointer(made.pointer).assumingMemoryBound(to: PyTypeObject.self)
            object.pointee.tp_iternext = iterateNext
            PyType_Modified(object)
        }
        type = made
        return made
    }

    /// A new instance holding `state`.
    public func instance(_ state: State) throws -> PyRef {
        guard let type else { throw ArgumentError("class \(name) used before it was built") }
        let object = try PyRef.checked(PyObject_CallNoArgs(type.pointer))
        let box = Unmanaged.passRetained(StateBox(state))
        guard let capsule = PyCapsule_New(box.toOpaque(), stateCapsuleName, releaseState) else {
            box.release()
            throw PythonErrorSet()
        }
        try object.setAttribute("_native", PyRef(owned: capsule))
        return object
    }

    /// The state of an instance of this class.
    public func state(of object: PyRef) throws -> State {
        try NativeClass.state(of: object, className: name)
    }

    private static func state(of object: PyRef, className: String) throws -> State {
        guard let capsule = nativeAttribute(of: object),
            let raw = PyCapsule_GetPointer(capsule.pointer, stateCapsuleName),
            let state = Unmanaged<StateBox>.fromOpaque(raw).takeUnretainedValue().value as? State
        else {
            PyErr_Clear()
            throw ArgumentError("expected a \(className) object, got '\(object.typeName)'")
        }
        return state
    }

    /// The state of `object` when it is an instance of this class (GIL held; no exception left set).
    @inline(__always)
    private static func state(ofPointer object: PyPointer) -> State? {
        if nativeAttributeName == nil { nativeAttributeName = PyUnicode_InternFromString("_native") }
        guard let name = nativeAttributeName, let capsule = PyObject_GetAttr(object, name) else {
            PyErr_Clear()
            return nil
        }
        defer { Py_DecRef(capsule) }
        guard let raw = PyCapsule_GetPointer(capsule, stateCapsuleName) else {
            PyErr_Clear()
            return nil
        }
        return Unmanaged<StateBox>.fromOpaque(raw).takeUnretainedValue().value as? State
    }

    private static func split(_ arguments: PyArguments, className: String) throws -> (State, PyArguments) {
        guard let first = arguments.positional.first else {
            throw ArgumentError("\(className) method called without an instance")
        }
        let state = try state(of: first, className: className)
        return (state, PyArguments(positional: Array(arguments.positional.dropFirst()), keywords: arguments.keywords))
    }
}

extension PyArguments {
    /// Arguments made in Swift (to bind a subset of another call's arguments).
    public init(positional: [PyRef], keywords: [(String, PyRef)]) {
        self.positional = positional
        self.keywords = keywords
    }
}

private final class StateBox {
    let value: AnyObject
    init(_ value: AnyObject) { self.value = value }
}

nonisolated(unsafe) private let stateCapsuleName: UnsafePointer<CChar> = ProcessLifetime.cString("apimacro.state")

/// `_native` as an interned `str`, made at the first method call (GIL held, as every use).
nonisolated(unsafe) private var nativeAttributeName: PyPointer?

/// `object._native`, nil when it has none (no exception left set).
///
/// Every native method call reads it (a page iterator's `__next__` once an item): through one
/// interned name, not a new `str` from a C string each time as `attributeIfPresent` makes.
private func nativeAttribute(of object: PyRef) -> PyRef? {
    if nativeAttributeName == nil { nativeAttributeName = PyUnicode_InternFromString("_native") }
    guard let name = nativeAttributeName, let value = PyObject_GetAttr(object.pointer, name) else {
        PyErr_Clear()
        return nil
    }
    return PyRef(owned: value)
}

/// What a class's `tp_iternext` runs (`NativeClass.iterator`): the next item of `object`, a
/// new reference, or nil with an exception set or (the end) none.
private final class IteratorBox {
    let next: (PyPointer) -> PyPointer?
    init(_ next: @escaping (PyPointer) -> PyPointer?) { self.next = next }
}

/// The class attribute holding a class's `IteratorBox` (a capsule).
private let iteratorAttribute = "_native_next"
nonisolated(unsafe) private let iteratorCapsuleName: UnsafePointer<CChar> = ProcessLifetime.cString("apimacro.next")
/// `iteratorAttribute` as an interned `str`, made at the first item (GIL held, as every use).
nonisolated(unsafe) private var iteratorAttributeName: PyPointer?

/// `tp_iternext` of a `NativeClass` made an iterator: its `IteratorBox`, from the class's own dictionary.
///
/// An instance of a class without one (never reached: a subclass's slot calls `__next__`) has
/// its `__next__` called.
private let iterateNext: @convention(c) (PyPointer?) -> PyPointer? = { object in
    guard let object else { return nil }
    if iteratorAttributeName == nil { iteratorAttributeName = PyUnicode_InternFromString(iteratorAttribute) }
    guard let name = iteratorAttributeName, let dictionary = apimacro_Type(object).pointee.tp_dict,
        let capsule = PyDict_GetItemWithError(dictionary, name),
        let raw = PyCapsule_GetPointer(capsule, iteratorCapsuleName)
    else {
        PyErr_Clear()
        guard let method = PyObject_GetAttrString(object, "__next__") else { return nil }
        defer { Py_DecRef(method) }
        return PyObject_CallNoArgs(method)
    }
    return Unmanaged<IteratorBox>.fromOpaque(raw).takeUnretainedValue().next(object)
}

private let releaseIterator: @convention(c) (PyPointer?) -> Void = { capsule in
    guard let capsule, let raw = PyCapsule_GetPointer(capsule, iteratorCapsuleName) else {
        PyErr_Clear()
        return
    }
    Unmanaged<IteratorBox>.fromOpaque(raw).release()
}

private let releaseState: @convention(c) (PyPointer?) -> Void = { capsule in
    guard let capsule, let raw = PyCapsule_GetPointer(capsule, stateCapsuleName) else {
        PyErr_Clear()
        return
    }
    Unmanaged<StateBox>.fromOpaque(raw).release()
}
