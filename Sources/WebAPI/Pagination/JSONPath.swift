/// Reads small values out of JSON bodies (error messages, envelope fields)
/// without a model type for every API.
///
/// Bodies come from servers, so one holding more than `maxValues` values is not decoded (nil,
/// as for a body that is not JSON): a decoded tree costs far more than the JSON text, and what
/// these readers look for (an error envelope's `message`, a `next_url`, a GraphQL answer's `errors`) sits in
/// documents of a few MB at most. A macro's pages are decoded by the runtime's own decoder,
/// which has its own bound.
public enum JSONPath {
    /// The most values (and keys) a body may hold to be decoded here: 100,000, about five
    /// GitHub pages of 100 repositories (`JSONValue.native(in:path:)` reads a whole body with this bound).
    public static let maxValues = 100_000

    /// The value at `path` (object keys, or array indices as decimal strings) as plain Swift
    /// (`JSONValue.native`), if the body is JSON of at most `maxValues` values.
    public static func value(in body: [UInt8], path: [String]) -> Any? {
        JSONValue.native(in: body, path: path)
    }

    /// Whether `body` holds at most `limit` JSON values and keys (the document itself aside),
    /// counted without decoding: outside strings, every `,` and `:` starts one, and so does a
    /// `{` or `[` that is not empty.
    public static func holds(atMost limit: Int, _ body: [UInt8]) -> Bool {
        var count = 0
        var inString = false
        var escaped = false
        var opened = false
        for byte in body {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                opened = false
                continue
            default:
                break
            }
            if opened {
                opened = false
                count += 1
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): opened = true
            case UInt8(ascii: ","), UInt8(ascii: ":"): count += 1
            default: break
            }
            if count > limit { return false }
        }
        return true
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

    /// The string (or number, as text) at `path`: numbers as `JSONSerialization`'s `NSNumber`
    /// wrote them (`42`, `1.5`, `1e+20`; a boolean `1` or `0`).
    public static func string(in body: [UInt8], path: [String]) -> String? {
        switch JSONValue.parse(body, atMost: maxValues)?.value(at: path) {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): "\(number)"
        case .bool(let flag): flag ? "1" : "0"
        default: nil
        }
    }

    /// Splits `a.b.0.c` into its keys.
    public static func split(_ dotted: String) -> [String] {
        dotted.split(separator: ".").map(String.init)
    }
}
