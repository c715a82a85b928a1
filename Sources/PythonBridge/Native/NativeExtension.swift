import CPython

/// The module definition an extension module's `PyInit_NAME` returns (multi-phase
/// initialisation, PEP 489): its create slot returns the module `make` builds, a `NativeModule`
/// as the binary makes it, instead of one made from a table of C functions.
public enum NativeExtension {
    /// What the create slot calls (GIL held): the module, or nil with an exception set.
    nonisolated(unsafe) private static var make: (() -> PyRef?)?
    /// The definition, made once and kept for the life of the process as CPython requires.
    nonisolated(unsafe) private static var definition: UnsafeMutablePointer<PyModuleDef>?

    /// `PyModuleDef_Init` of a definition named `name` whose module is made by `make` when
    /// Python runs the create slot; return it from `PyInit_NAME`.
    public static func initialize(name: String, make: @escaping () -> PyRef?) -> UnsafeMutableRawPointer? {
        self.make = make
        if definition == nil {
            let create: @convention(c) (PyPointer?, UnsafeMutablePointer<PyModuleDef>?) -> PyPointer? = { _, _ in
                NativeExtension.make?()?.release()
            }
            let slots = UnsafeMutablePointer<PyModuleDef_Slot>.allocate(capacity: 2)
            slots[0] = PyModuleDef_Slot(
                slot: Py_mod_create, value: unsafeBitCast(create, to: UnsafeMutableRawPointer.self))
            slots[1] = PyModuleDef_Slot(slot: 0, value: nil)
            let made = UnsafeMutablePointer<PyModuleDef>.allocate(capacity: 1)
            made.initialize(
                to: PyModuleDef(
                    m_base: apimacro_ModuleDefHeadInit(), m_name: strdup(name), m_doc: nil, m_size: 0, m_methods: nil,
                    m_slots: slots, m_traverse: nil, m_clear: nil, m_free: nil))
            definition = made
        }
        return PyModuleDef_Init(definition).map { UnsafeMutableRawPointer($0) }
    }
}
