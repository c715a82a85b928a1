import CPython

/// Where a `dict`'s values are, for filling a copy of a dict in place: the one thing the tape's
/// build does below the C API.
///
/// A list of records (an API's page: 100 repositories, each with the same ~80 keys in the same
/// order) costs CPython a hash probe, an entry and some resizing per key when each record is
/// built with `PyDict_SetItem`: a third of a page's build. The build instead makes the second
/// and later records of one shape with `PyDict_Copy` of a template (the first record's keys,
/// values `None`), which copies the key table whole, and then puts each value in its entry.
/// The result is the dict `PyDict_SetItem` would have built: the same keys (the same `str`
/// objects), order, size and table, and the same tracking by the garbage collector.
///
/// The entries are in CPython 3.11's `PyDictKeysObject` (Include/internal/pycore_dict.h), which
/// the C API does not show. So the layout is checked once, on dicts built through the C API
/// (`usable`), before any is written: anything unexpected (another Python, another layout)
/// and every dict is built with `PyDict_SetItem`, as before. And each copy is checked again
/// before its entries are written: a combined table of exact-`str` keys with exactly the
/// template's entries.
///
/// Touched only with the GIL held, hence `nonisolated(unsafe)`.
enum DictLayout {
    /// `PyDictKeysObject`'s fields in CPython 3.11: `dk_log2_index_bytes`, `dk_kind`,
    /// `dk_nentries`, and the start of `dk_indices` (its entries follow the indices).
    static let log2IndexBytesOffset = 9
    static let kindOffset = 10
    static let entryCountOffset = 24
    static let indicesOffset = 32
    /// `DICT_KEYS_UNICODE`: every key an exact `str`, entries of (key, value).
    static let unicodeKind: UInt8 = 1

    nonisolated(unsafe) private static var checked: Bool?

    /// Whether `entries` may be used in this process (checked at the first call; GIL held).
    static var usable: Bool {
        if let checked { return checked }
        let answer = probe()
        checked = answer
        return answer
    }

    /// The entries of `dict` when it is a combined table of `count` `str` keys, none deleted.
    ///
    /// Entry `i`'s key is at `result[2 * i]`, its value at `result[2 * i + 1]`; nil for any other
    /// dict. Only after `usable` said yes.
    @inline(__always)
    static func entries(of dict: PyPointer, count: Int) -> UnsafeMutablePointer<PyPointer?>? {
        let object = UnsafeMutableRawPointer(dict).assumingMemoryBound(to: PyDictObject.self)
        guard object.pointee.ma_values == nil, object.pointee.ma_used == count,
            let keys = UnsafeMutableRawPointer(object.pointee.ma_keys)
        else { return nil }
        guard keys.load(fromByteOffset: kindOffset, as: UInt8.self) == unicodeKind,
            keys.load(fromByteOffset: entryCountOffset, as: Int.self) == count
        else { return nil }
        let indexBytes = 1 << Int(keys.load(fromByteOffset: log2IndexBytesOffset, as: UInt8.self))
        return (keys + indicesOffset + indexBytes).assumingMemoryBound(to: PyPointer?.self)
    }

    /// Builds dicts of 3, 20 and 200 keys with `PyDict_SetItem`, and their copies, and checks
    /// that `entries` finds each key and value where CPython put them, and that a value written
    /// there is the one `PyDict_GetItem` then finds.
    static func probe() -> Bool {
        guard Py_Version >> 16 == 0x030B else { return false }
        for count in [3, 20, 200] { guard probe(count: count) else { return false } }
        return true
    }

    private static func probe(count: Int) -> Bool {
        guard let dict = PyDict_New() else {
            PyErr_Clear()
            return false
        }
        defer { Py_DecRef(dict) }
        var keys: [PyPointer] = []
        var values: [PyPointer] = []
        defer {
            for object in keys + values { Py_DecRef(object) }
        }
        for index in 0..<count {
            guard let key = PyUnicode_FromString("apimacro-dict-probe-\(index)") else { break }
            keys.append(key)
            guard let value = PyLong_FromLong(100_000 + index) else { break }
            values.append(value)
            guard PyDict_SetItem(dict, key, value) == 0 else { break }
        }
        guard values.count == count, PyDict_Size(dict) == count else {
            PyErr_Clear()
            return false
        }
        guard holds(dict, keys: keys, values: values), let copy = PyDict_Copy(dict) else {
            PyErr_Clear()
            return false
        }
        defer { Py_DecRef(copy) }
        guard holds(copy, keys: keys, values: values), let slots = entries(of: copy, count: count),
            let replacement = PyLong_FromLong(-7)
        else {
            PyErr_Clear()
            return false
        }
        // The copy's entries are its own: write one, as the build does, and read it back.
        let last = count - 1
        let old = slots[2 * last + 1]
        slots[2 * last + 1] = replacement
        if let old { Py_DecRef(old) }
        return PyDict_GetItem(copy, keys[last]) == replacement && PyDict_GetItem(dict, keys[last]) == values[last]
            && entries(of: dict, count: count)?[2 * last + 1] == values[last]
    }

    /// Whether `dict`'s entries, as `entries` finds them, are `keys` and `values` in order.
    private static func holds(_ dict: PyPointer, keys: [PyPointer], values: [PyPointer]) -> Bool {
        guard let slots = entries(of: dict, count: keys.count) else { return false }
        for index in keys.indices where slots[2 * index] != keys[index] || slots[2 * index + 1] != values[index] {
            return false
        }
        return true
    }
}
