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
        value(
            in: root, path: path, count: { ($0 as? [Any])?.count },
            element: { node, index in (node as? [Any])?[index] },
            member: { node, key in (node as? [String: Any])?[key] })
    }

    /// The value at `path` inside a document decoded into any other form (Python objects):
    /// `count` is an array's length (nil for a node that is no array), `element` an array's
    /// item, `member` an object's member (nil when it has none).
    ///
    /// The rule is the one above: in an array a key is a decimal index, in an object a
    /// member's name.
    public static func value<Node>(
        in root: Node, path: [String], count: (Node) -> Int?, element: (Node, Int) -> Node?,
        member: (Node, String) -> Node?
    ) -> Node? {
        var cursor = root
        for key in path {
            if let length = count(cursor) {
                guard let index = Int(key), (0..<length).contains(index), let next = element(cursor, index) else {
                    return nil
                }
                cursor = next
            } else {
                guard let next = member(cursor, key) else { return nil }
                cursor = next
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
