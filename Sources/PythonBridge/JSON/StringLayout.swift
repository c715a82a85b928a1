import CPython

/// Plain ASCII `str` objects made in place, for the tape's build: the object `PyUnicode_New(count,
/// 127)` makes, with the bytes copied in, without the call.
///
/// Strings are most of a page's objects (~4,900 new ones in a page of 100 repositories), and
/// `PyUnicode_New` spends ~60 instructions on each besides its allocation (the general case's
/// kinds and checks) and a short one's copy another ~30 through `memcpy`. Here a string is its
/// allocation (`PyObject_Malloc`, the same size), its `PyASCIIObject` header written (type,
/// length, hash -1, the state of a compact ASCII string, no `wstr`), its reference count set by
/// `_Py_NewReference` (as `PyUnicode_New` does, tracemalloc included), and its bytes copied
/// (up to 16 in two words) with the NUL after them.
///
/// The header is CPython 3.11's `PyASCIIObject` (Include/cpython/unicodeobject.h, public but
/// below the C API's functions). So the layout is checked once per process before any string
/// is made (`maker`): the state bits against a string `PyUnicode_New` made, and a made string
/// read back through the C API (its text, length, UTF-8 in place, hash, equality); anything
/// unexpected and every string is made by `PyUnicode_New`, as before.
///
/// Touched only with the GIL held, hence `nonisolated(unsafe)`.
enum StringLayout {
    /// `PyASCIIObject`'s size and fields' offsets in CPython 3.11 (x86-64, arm64): literals, so
    /// that `make` reads no global; `probe` checks them against the imported struct.
    static let headerSize = 48
    static let typeOffset = 8
    static let lengthOffset = 16
    static let hashOffset = 24
    static let stateOffset = 32
    static let wstrOffset = 40

    /// The state's used bits: `interned` (2), `kind` (3), `compact`, `ascii`, `ready`.
    static let stateBits: UInt32 = 0xFF

    /// What `make` writes that is not the string's own: `str`, and the state of a compact
    /// ASCII string, as `probe` found them (a build keeps a copy: no global read per string).
    struct Maker {
        let type: UnsafeMutablePointer<PyTypeObject>
        let state: UInt32

        /// A new `str` of the `count` (2 or more) plain ASCII bytes at `text`; nil, with
        /// `MemoryError` set, when it cannot be allocated.
        @inline(__always)
        func make(_ text: UnsafePointer<UInt8>, _ count: Int) -> PyPointer? {
            guard let raw = PyObject_Malloc(StringLayout.headerSize + count + 1) else { return PyErr_NoMemory() }
            raw.storeBytes(of: type, toByteOffset: StringLayout.typeOffset, as: UnsafeMutablePointer<PyTypeObject>.self)
            raw.storeBytes(of: count, toByteOffset: StringLayout.lengthOffset, as: Int.self)
            raw.storeBytes(of: -1, toByteOffset: StringLayout.hashOffset, as: Int.self)
            raw.storeBytes(of: state, toByteOffset: StringLayout.stateOffset, as: UInt32.self)
            raw.storeBytes(of: nil, toByteOffset: StringLayout.wstrOffset, as: UnsafeMutableRawPointer?.self)
            let object = raw.assumingMemoryBound(to: PyObject.self)
            _Py_NewReference(object)
            StringLayout.copy(text, to: raw + StringLayout.headerSize, count)
            return object
        }
    }

    nonisolated(unsafe) private static var checked: Maker??

    /// What makes strings in place in this process, nil when the layout is not the one `make`
    /// writes (checked at the first call; GIL held).
    static var maker: Maker? {
        if let checked { return checked }
        let answer = probe()
        checked = .some(answer)
        return answer
    }

    /// `count` (2 or more) bytes from `source` to `target`, then a NUL: up to 16 in two
    /// overlapping words (never reading or writing past either end), longer ones by `memcpy`.
    @inline(__always)
    static func copy(_ source: UnsafePointer<UInt8>, to target: UnsafeMutableRawPointer, _ count: Int) {
        let from = UnsafeRawPointer(source)
        if count > 16 {
            target.copyMemory(from: from, byteCount: count)
        } else if count >= 8 {
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            let head = from.loadUnaligned(as: UInt32.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        } else {
            let head = from.loadUnaligned(as: UInt16.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)
            target.storeBytes(of: head, as: UInt16.self)
            target.storeBytes(of: tail, toByteOffset: count - 2, as: UInt16.self)
        }
        target.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
    }

    /// Takes `str` and the compact ASCII state from a string `PyUnicode_New` made, then makes
    /// strings of 2 to 40 bytes and reads each back through the C API.
    static func probe() -> Maker? {
        typealias Layout = MemoryLayout<PyASCIIObject>
        guard Py_Version >> 16 == 0x030B, Layout.size == headerSize,
            Layout.offset(of: \PyASCIIObject.ob_base.ob_type) == typeOffset,
            Layout.offset(of: \PyASCIIObject.length) == lengthOffset,
            Layout.offset(of: \PyASCIIObject.hash) == hashOffset,
            Layout.offset(of: \PyASCIIObject.state) == stateOffset, Layout.offset(of: \PyASCIIObject.wstr) == wstrOffset
        else { return nil }
        guard let reference = PyUnicode_New(5, 127) else {
            PyErr_Clear()
            return nil
        }
        defer { Py_DecRef(reference) }
        let raw = UnsafeMutableRawPointer(reference)
        let state = raw.load(fromByteOffset: stateOffset, as: UInt32.self) & stateBits
        // interned 0, kind 1 (bits 2–4), compact, ascii, ready: LSB-first bit-fields.
        guard state == 0b1110_0100,
            let type = raw.load(fromByteOffset: typeOffset, as: UnsafeMutablePointer<PyTypeObject>?.self),
            type == apimacro_Type(reference)
        else { return nil }
        let maker = Maker(type: type, state: state)
        let text = Array("apimacro-probe: ASCII strings made in place, 0123456789".utf8)
        let good = text.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            for count in 2...40 { guard probe(maker, base, count) else { return false } }
            return true
        }
        return good ? maker : nil
    }

    private static func probe(_ maker: Maker, _ text: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        guard let made = maker.make(text, count) else {
            PyErr_Clear()
            return false
        }
        defer { Py_DecRef(made) }
        guard
            let expected = PyUnicode_DecodeUTF8(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self), count, nil)
        else {
            PyErr_Clear()
            return false
        }
        defer { Py_DecRef(expected) }
        var size = 0
        let utf8 = PyUnicode_AsUTF8AndSize(made, &size)
        let same =
            PyUnicode_Compare(made, expected) == 0 && PyUnicode_GetLength(made) == count && size == count
            && UnsafeRawPointer(utf8) == UnsafeRawPointer(made) + headerSize
            && PyObject_Hash(made) == PyObject_Hash(expected)
            && UnsafeRawPointer(made).load(fromByteOffset: headerSize + count, as: UInt8.self) == 0
        PyErr_Clear()
        return same
    }
}
