import CPython

extension NativeModule {
    /// Attributes of the module made the first time something reads one of them (PEP 562's
    /// module `__getattr__`): each group's `names` are listed by `dir()` from the start, and
    /// reading any of them runs the group's `build` once, which sets them all on the module.
    ///
    /// `build` runs with the GIL held. A build may run Python code, which lets other threads
    /// in: builds take one re-entrant lock (`_thread.RLock`, waited for without the GIL), and
    /// a thread that finds its group built while it waited reads what the first one set. A
    /// build that throws leaves its group unbuilt (the error goes to the reader; the next read
    /// tries again). A name that is no group's raises the `AttributeError` Python raises for a
    /// module without `__getattr__`.
    public struct LazyGroup {
        /// The attributes `build` sets.
        public let names: [String]
        /// Sets `names` on the module (GIL held).
        public let build: () throws -> Void

        public init(names: [String], build: @escaping () throws -> Void) {
            self.names = names
            self.build = build
        }
    }

    /// Installs `__getattr__` and `__dir__` serving `groups` (GIL held); call once.
    public func setLazy(_ groups: [LazyGroup]) throws {
        let table = LazyTable(groups)
        let module = object
        let moduleName = name
        try addFunction("__getattr__") { arguments in
            guard arguments.positional.count == 1, arguments.keywords.isEmpty else {
                throw ArgumentError("__getattr__() takes exactly one argument (\(arguments.positional.count) given)")
            }
            let attribute = try String(pythonString: arguments.positional[0])
            // A name of no group, or of the group this thread is building (its build read it
            // before setting it): what a module without `__getattr__` says.
            guard table.pending(attribute) != nil, try table.buildOnce(attribute, in: module) else {
                PythonRaise.builtin(.attributeError, "module '\(moduleName)' has no attribute '\(attribute)'")
                throw PythonErrorSet()
            }
            return try module.attribute(attribute)
        }
        try addFunction("__dir__") { _ in
            // What `dir()` of a module lists by default, its `__dict__`'s keys, and the names not built yet.
            let keys = try PyRef.checked(PyDict_Keys(PyModule_GetDict(module.pointer)))
            var names = Set(table.names)
            for index in 0..<PySequence.count(keys) {
                if let key = PySequence.item(keys, index) {
                    names.insert(try String(pythonString: PyRef(borrowed: key)))
                }
            }
            return try PySequence.list(names.sorted().map { try PyRef(string: $0) })
        }
    }
}

/// The lazy groups of one module, and which are still to build (read and changed with the GIL held).
private final class LazyTable {
    private let groups: [NativeModule.LazyGroup]
    /// Each unbuilt name's group.
    private var unbuilt: [String: Int] = [:]
    /// The lock builds take, made by the first build.
    private var lock: PyRef?

    init(_ groups: [NativeModule.LazyGroup]) {
        self.groups = groups
        for (index, group) in groups.enumerated() {
            for name in group.names { unbuilt[name] = index }
        }
    }

    /// Every lazy name, built or not.
    var names: [String] { groups.flatMap(\.names) }

    /// The group of `name` if it is not built yet.
    func pending(_ name: String) -> Int? { unbuilt[name] }

    /// Builds `name`'s group unless another thread built it while this one waited for the lock;
    /// false when this thread is building it already.
    ///
    /// - Throws: what the build threw, or `LazyAttributeError` when it did not set all its names.
    func buildOnce(_ name: String, in module: PyRef) throws -> Bool {
        if lock == nil { lock = try Interpreter.import("_thread").callMethod("RLock") }
        guard let lock else { return false }
        // `acquire` lets the GIL go while it waits, so the thread building can finish.
        _ = try lock.callMethod("acquire")
        defer { Self.release(lock) }
        guard let index = unbuilt[name] else { return true }
        // The lock is re-entrant: only this thread can be building the group.
        guard !building.contains(index) else { return false }
        building.insert(index)
        defer { building.remove(index) }
        try groups[index].build()
        let namespace = PyModule_GetDict(module.pointer)
        if let missing = groups[index].names.first(where: { PyDict_GetItemString(namespace, $0) == nil }) {
            throw LazyAttributeError(description: "the build of \(groups[index].names) did not set \(missing)")
        }
        for built in groups[index].names { unbuilt[built] = nil }
        return true
    }

    /// The groups this thread is building now (a build may read another group's names).
    private var building: Set<Int> = []

    /// Releases `lock`, keeping the exception a failed build set (if any) for the reader.
    private static func release(_ lock: PyRef) {
        var type: PyPointer?
        var value: PyPointer?
        var traceback: PyPointer?
        PyErr_Fetch(&type, &value, &traceback)
        _ = try? lock.callMethod("release")
        PyErr_Restore(type, value, traceback)
    }
}

/// A lazy group's build that did not set every name it declares (a programming error).
struct LazyAttributeError: Error, CustomStringConvertible {
    let description: String
}
