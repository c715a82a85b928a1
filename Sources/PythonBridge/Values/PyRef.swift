public import CPython

/// A pointer to a CPython object.
public typealias PyPointer = UnsafeMutablePointer<PyObject>

/// An owned reference to a Python object; `deinit` releases it.
///
/// Built only through labelled initialisers that say whether the pointer is
/// already owned (a "new reference" in CPython's terms) or borrowed (and so
/// retained here). Not `Sendable`: a `PyRef` is only touched with the GIL
/// held, and `withoutGIL`'s `@Sendable` body cannot capture one.
public final class PyRef {
    /// The object; valid while this reference lives.
    public let pointer: PyPointer
    private var owned = true

    /// Takes ownership of a new reference.
    public init(owned pointer: PyPointer) {
        self.pointer = pointer
    }

    /// Retains a borrowed reference.
    public init(borrowed pointer: PyPointer) {
        Py_IncRef(pointer)
        self.pointer = pointer
    }

    /// Takes ownership of the result of a C API call that returns a new
    /// reference or NULL with an exception set.
    public static func checked(_ pointer: PyPointer?) throws -> PyRef {
        guard let pointer else { throw PythonErrorSet() }
        return PyRef(owned: pointer)
    }

    /// Gives the reference to CPython (for APIs that steal one); this object
    /// no longer releases it.
    public func release() -> PyPointer {
        precondition(owned, "PyRef released twice")
        owned = false
        return pointer
    }

    deinit {
        if owned { Py_DecRef(pointer) }
    }
}

extension PyRef {
    /// `None`.
    public static var none: PyRef { PyRef(borrowed: apimacro_None()) }

    /// The Python `bool` for `value`.
    public static func bool(_ value: Bool) -> PyRef {
        PyRef(borrowed: value ? apimacro_True() : apimacro_False())
    }

    /// Whether the object can be called.
    public var isCallable: Bool { apimacro_CallableCheck(pointer) != 0 }

    /// Whether this is `None`.
    public var isNone: Bool { apimacro_IsNone(pointer) != 0 }

    /// The name of the object's type, such as `dict`.
    public var typeName: String { String(cString: apimacro_TypeName(pointer)) }

    /// `getattr(self, name)`.
    public func attribute(_ name: String) throws -> PyRef {
        try PyRef.checked(PyObject_GetAttrString(pointer, name))
    }

    /// `getattr(self, name, None)` without raising when it is missing.
    public func attributeIfPresent(_ name: String) -> PyRef? {
        guard let value = PyObject_GetAttrString(pointer, name) else {
            PyErr_Clear()
            return nil
        }
        return PyRef(owned: value)
    }

    /// `setattr(self, name, value)`.
    public func setAttribute(_ name: String, _ value: PyRef) throws {
        if PyObject_SetAttrString(pointer, name, value.pointer) != 0 { throw PythonErrorSet() }
    }

    /// `self(*args, **kwargs)`.
    @discardableResult
    public func call(_ args: [PyRef] = [], kwargs: [(String, PyRef)] = []) throws -> PyRef {
        let tuple = try PyRef.checked(PyTuple_New(args.count))
        for (index, arg) in args.enumerated() {
            Py_IncRef(arg.pointer)
            apimacro_TupleSetItem(tuple.pointer, index, arg.pointer)
        }
        var kwDict: PyRef?
        if !kwargs.isEmpty {
            let dict = try PyRef.checked(PyDict_New())
            for (key, value) in kwargs {
                if PyDict_SetItemString(dict.pointer, key, value.pointer) != 0 { throw PythonErrorSet() }
            }
            kwDict = dict
        }
        return try PyRef.checked(PyObject_Call(pointer, tuple.pointer, kwDict?.pointer))
    }

    /// `self.name(*args, **kwargs)`.
    @discardableResult
    public func callMethod(_ name: String, _ args: [PyRef] = [], kwargs: [(String, PyRef)] = []) throws -> PyRef {
        try attribute(name).call(args, kwargs: kwargs)
    }

    /// `str(self)`.
    public func str() throws -> String {
        let text = try PyRef.checked(PyObject_Str(pointer))
        return try String(pythonString: text)
    }

    /// `repr(self)`.
    public func repr() throws -> String {
        let text = try PyRef.checked(PyObject_Repr(pointer))
        return try String(pythonString: text)
    }

    /// `isinstance(self, type)`.
    public func isInstance(of type: PyRef) throws -> Bool {
        let result = PyObject_IsInstance(pointer, type.pointer)
        if result < 0 { throw PythonErrorSet() }
        return result == 1
    }

    /// `self[key]` for a mapping, or nil when the key is missing.
    public func item(_ key: String) throws -> PyRef? {
        let pyKey = try PyRef(string: key)
        guard let value = PyObject_GetItem(pointer, pyKey.pointer) else {
            if PyErr_ExceptionMatches(apimacro_Exc_KeyError()) != 0 {
                PyErr_Clear()
                return nil
            }
            throw PythonErrorSet()
        }
        return PyRef(owned: value)
    }

    /// `self[key] = value`.
    public func setItem(_ key: String, _ value: PyRef) throws {
        let pyKey = try PyRef(string: key)
        if PyObject_SetItem(pointer, pyKey.pointer, value.pointer) != 0 { throw PythonErrorSet() }
    }

    /// A new `str` holding `string`.
    public convenience init(string: String) throws {
        var copy = string
        let object = copy.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                PyUnicode_FromStringAndSize($0.baseAddress, $0.count)
            }
        }
        guard let object else { throw PythonErrorSet() }
        self.init(owned: object)
    }
}

extension String {
    /// The text of a Python `str` (UTF-8; lone surrogates raise `UnicodeEncodeError`).
    public init(pythonString object: PyRef) throws {
        var size: Py_ssize_t = 0
        guard let utf8 = PyUnicode_AsUTF8AndSize(object.pointer, &size) else { throw PythonErrorSet() }
        self = utf8.withMemoryRebound(to: UInt8.self, capacity: size) {
            String(decoding: UnsafeBufferPointer(start: $0, count: size), as: UTF8.self)
        }
    }
}

/// List and sequence access for code outside the bridge.
public enum PySequence {
    /// Whether `object` is a list (or subclass).
    public static func isList(_ object: PyRef) -> Bool { apimacro_ListCheck(object.pointer) != 0 }

    /// `len(object)` for a list, or -1 for anything else.
    public static func count(_ object: PyRef) -> Int {
        apimacro_ListCheck(object.pointer) != 0 ? PyList_Size(object.pointer) : -1
    }

    /// `object[index]` for a list (a new reference), or NULL with `IndexError` set.
    public static func item(_ object: PyRef, _ index: Int) -> PyPointer? {
        guard let item = PyList_GetItem(object.pointer, index) else { return nil }
        Py_IncRef(item)
        return item
    }

    /// A new list of the given items.
    public static func list(_ items: [PyRef]) throws -> PyRef {
        let list = try PyRef.checked(PyList_New(items.count))
        for (index, item) in items.enumerated() {
            Py_IncRef(item.pointer)
            apimacro_ListSetItem(list.pointer, index, item.pointer)
        }
        return list
    }
}
