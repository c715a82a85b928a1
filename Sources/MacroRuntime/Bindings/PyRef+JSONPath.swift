import Clients
import PythonBridge
import WebAPI

extension PyRef {
    /// The value at a JSON path of decoded JSON (WebAPI's `JSONPath` rule: a key, or a
    /// decimal index into a list), or nil; a lookup that fails leaves no Python error set.
    ///
    /// How a binding reads the paths a client or a manifest declares (an envelope's
    /// `data`, a page's `next_url`) out of a page decoded into Python objects.
    func value(at path: [String]) -> PyRef? {
        JSONPath.value(
            in: self, path: path, count: { PySequence.isList($0) ? PySequence.count($0) : nil },
            element: { list, index in try? PyRef.checked(PySequence.item(list, index)) },
            member: { node, key in
                guard let item = try? node.item(key) else {
                    PythonRaise.clear()
                    return nil
                }
                return item
            })
    }
}
