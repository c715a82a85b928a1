import Foundation

/// Reads small values out of JSON bodies (error messages, envelope fields)
/// without a model type for every API.
public enum JSONPath {
    /// The value at `path` (object keys, or array indices as decimal strings), if the body is JSON.
    public static func value(in body: [UInt8], path: [String]) -> Any? {
        guard let root = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else {
            return nil
        }
        return value(in: root, path: path)
    }

    /// The value at `path` inside an already decoded document.
    public static func value(in root: Any, path: [String]) -> Any? {
        var cursor: Any = root
        for key in path {
            if let object = cursor as? [String: Any], let next = object[key] {
                cursor = next
            } else if let array = cursor as? [Any], let index = Int(key), array.indices.contains(index) {
                cursor = array[index]
            } else {
                return nil
            }
        }
        return cursor
    }

    /// The string (or number, as text) at `path`.
    public static func string(in body: [UInt8], path: [String]) -> String? {
        switch value(in: body, path: path) {
        case let text as String: text
        case let number as NSNumber: number.stringValue
        default: nil
        }
    }

    /// Splits `a.b.0.c` into its keys.
    public static func split(_ dotted: String) -> [String] {
        dotted.split(separator: ".").map(String.init)
    }
}
