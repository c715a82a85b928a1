import CPython

extension PythonValue {
    /// Builds the Python object for this value (GIL held).
    public func toPython() throws -> PyRef {
        var builder = ObjectBuilder()
        return try builder.build(self)
    }

    /// Reads a Python object into Swift (GIL held).
    ///
    /// Dict and list subclasses count as dicts and lists; bool is told apart
    /// from int.
    public init(python object: PyRef) throws {
        var reader = ValueReader()
        self = try reader.read(object.pointer)
    }
}

/// Swift → Python without recursion: containers are created empty and filled
/// from an explicit stack of frames.
private struct ObjectBuilder {
    private enum Frame {
        case sequence(PyRef, items: [PythonValue], next: Int, isTuple: Bool)
        case dict(PyRef, entries: [PythonValue.Entry], next: Int, key: PyRef?)
    }

    private var stack: [Frame] = []

    mutating func build(_ root: PythonValue) throws -> PyRef {
        if let leaf = try start(root) { return leaf }
        while let top = stack.popLast() {
            switch top {
            case .sequence(let container, let items, let next, let isTuple):
                if next == items.count {
                    if let done = try finish(container) { return done }
                    continue
                }
                stack.append(.sequence(container, items: items, next: next + 1, isTuple: isTuple))
                if let leaf = try start(items[next]) { try attach(leaf) }
            case .dict(let container, let entries, let next, let key):
                if next == entries.count {
                    if let done = try finish(container) { return done }
                    continue
                }
                stack.append(.dict(container, entries: entries, next: next, key: key))
                let entry = entries[next]
                if let leaf = try start(key == nil ? entry.key : entry.value) { try attach(leaf) }
            }
        }
        throw ConversionError(description: "internal: conversion ended without a value", isTypeError: false)
    }

    /// A leaf's object, or nil after pushing a frame for a container.
    private mutating func start(_ value: PythonValue) throws -> PyRef? {
        switch value {
        case .none: return PyRef.none
        case .bool(let flag): return .bool(flag)
        case .int(let number): return try PyRef.checked(PyLong_FromLongLong(Int64(number)))
        case .bigInt(let digits): return try PyRef.checked(PyLong_FromString(digits, nil, 10))
        case .float(let number): return try PyRef.checked(PyFloat_FromDouble(number))
        case .string(let text): return try PyRef(string: text)
        case .bytes(let bytes):
            return try PyRef.checked(
                bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) {
                        PyBytes_FromStringAndSize($0.baseAddress, $0.count)
                    }
                })
        case .list(let items):
            stack.append(.sequence(try PyRef.checked(PyList_New(items.count)), items: items, next: 0, isTuple: false))
            return nil
        case .tuple(let items):
            stack.append(.sequence(try PyRef.checked(PyTuple_New(items.count)), items: items, next: 0, isTuple: true))
            return nil
        case .dict(let entries):
            stack.append(.dict(try PyRef.checked(PyDict_New()), entries: entries, next: 0, key: nil))
            return nil
        }
    }

    /// Hands a finished container to its parent; returns it when it is the root.
    private mutating func finish(_ container: PyRef) throws -> PyRef? {
        if stack.isEmpty { return container }
        try attach(container)
        return nil
    }

    /// Puts a finished child into the container on top of the stack.
    private mutating func attach(_ child: PyRef) throws {
        guard let top = stack.popLast() else { return }
        switch top {
        case .sequence(let container, let items, let next, let isTuple):
            // `next` already points past the slot being filled.
            let index = next - 1
            if isTuple {
                apimacro_TupleSetItem(container.pointer, index, child.release())
            } else {
                apimacro_ListSetItem(container.pointer, index, child.release())
            }
            stack.append(.sequence(container, items: items, next: next, isTuple: isTuple))
        case .dict(let container, let entries, let next, let key):
            if let key {
                if PyDict_SetItem(container.pointer, key.pointer, child.pointer) != 0 { throw PythonErrorSet() }
                stack.append(.dict(container, entries: entries, next: next + 1, key: nil))
            } else {
                stack.append(.dict(container, entries: entries, next: next, key: child))
            }
        }
    }
}

/// Python → Swift without recursion: each open container is a frame that
/// collects its converted children.
private struct ValueReader {
    private enum Kind { case list, tuple, dict }

    private struct Frame {
        let kind: Kind
        let object: PyPointer
        let count: Int
        var index = 0
        var position: Py_ssize_t = 0  // PyDict_Next's cursor
        var items: [PythonValue] = []
        var entries: [PythonValue.Entry] = []
        var pendingKey: PythonValue?
        var pendingValue: PyPointer?
    }

    private var stack: [Frame] = []

    mutating func read(_ root: PyPointer) throws -> PythonValue {
        if let leaf = try start(root) { return leaf }
        while !stack.isEmpty {
            let last = stack.count - 1
            var child: PyPointer?
            switch stack[last].kind {
            case .list, .tuple:
                let frame = stack[last]
                // A list may shrink only if Python code ran, which it does not here;
                // still, never read past its current size.
                let size = frame.kind == .list ? PyList_Size(frame.object) : frame.count
                if frame.index < min(frame.count, size) {
                    child =
                        frame.kind == .list
                        ? apimacro_ListGetItem(frame.object, frame.index)
                        : apimacro_TupleGetItem(frame.object, frame.index)
                    stack[last].index += 1
                }
            case .dict:
                if let value = stack[last].pendingValue {
                    child = value
                    stack[last].pendingValue = nil
                } else {
                    var key: PyPointer?
                    var value: PyPointer?
                    if PyDict_Next(stack[last].object, &stack[last].position, &key, &value) != 0, let key {
                        stack[last].pendingValue = value
                        child = key
                    }
                }
            }
            guard let child else {
                let done = stack.removeLast()
                let value: PythonValue =
                    switch done.kind {
                    case .list: .list(done.items)
                    case .tuple: .tuple(done.items)
                    case .dict: .dict(done.entries)
                    }
                if stack.isEmpty { return value }
                add(value)
                continue
            }
            if let leaf = try start(child) { add(leaf) }
        }
        throw ConversionError(description: "internal: conversion ended without a value", isTypeError: false)
    }

    private mutating func add(_ value: PythonValue) {
        let last = stack.count - 1
        switch stack[last].kind {
        case .list, .tuple:
            stack[last].items.append(value)
        case .dict:
            if let key = stack[last].pendingKey {
                stack[last].entries.append(PythonValue.Entry(key, value))
                stack[last].pendingKey = nil
            } else {
                stack[last].pendingKey = value
            }
        }
    }

    /// A leaf's value, or nil after pushing a frame for a container.
    private mutating func start(_ object: PyPointer) throws -> PythonValue? {
        if apimacro_IsNone(object) != 0 { return PythonValue.none }
        if apimacro_BoolCheck(object) != 0 { return .bool(object == apimacro_True()) }
        if apimacro_LongCheck(object) != 0 {
            var overflow: Int32 = 0
            let number = PyLong_AsLongLongAndOverflow(object, &overflow)
            if overflow == 0 {
                if number == -1, PyErr_Occurred() != nil { throw PythonErrorSet() }
                return .int(Int(number))
            }
            let text = try PyRef.checked(PyNumber_ToBase(object, 10))
            return .bigInt(try String(pythonString: text))
        }
        if apimacro_FloatCheck(object) != 0 {
            let number = PyFloat_AsDouble(object)
            if number == -1, PyErr_Occurred() != nil { throw PythonErrorSet() }
            return .float(number)
        }
        if apimacro_UnicodeCheck(object) != 0 {
            return .string(try String(pythonString: PyRef(borrowed: object)))
        }
        if apimacro_BytesCheck(object) != 0 {
            let size = PyBytes_Size(object)
            guard let data = PyBytes_AsString(object) else { throw PythonErrorSet() }
            return .bytes(
                data.withMemoryRebound(to: UInt8.self, capacity: size) {
                    Array(UnsafeBufferPointer(start: $0, count: size))
                })
        }
        let kind: Kind
        let count: Int
        if apimacro_ListCheck(object) != 0 {
            kind = .list
            count = PyList_Size(object)
        } else if apimacro_TupleCheck(object) != 0 {
            kind = .tuple
            count = PyTuple_Size(object)
        } else if apimacro_DictCheck(object) != 0 {
            kind = .dict
            count = PyDict_Size(object)
        } else {
            throw ConversionError.unsupported(String(cString: apimacro_TypeName(object)))
        }
        guard stack.count < PythonValue.maximumDepth else { throw ConversionError.tooDeep(PythonValue.maximumDepth) }
        var frame = Frame(kind: kind, object: object, count: count)
        if kind == .dict { frame.entries.reserveCapacity(count) } else { frame.items.reserveCapacity(count) }
        stack.append(frame)
        return nil
    }
}
