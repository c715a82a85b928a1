/// The signature a native function shows to `inspect.signature()` and `help()`, read from its
/// doc string's first line.
///
/// CPython reads a builtin's signature from the start of its `ml_doc` when that start is
/// `name(parameters)\n--\n\n`: the part in parentheses becomes `__text_signature__` and is cut
/// from `__doc__`. apimacro's doc strings begin with the call as a user writes it
/// (`repos(login, limit=None, **params) -> iterator of dicts`), so the signature is taken from
/// there: one place states it, and `help()` still shows the line with its return value.
enum TextSignature {
    /// `doc` with CPython's signature header in front when `doc` begins with `name(`…`)`;
    /// `doc` unchanged otherwise.
    ///
    /// A method (`method`: the function is bound to an instance, as `NativeClass` methods are)
    /// gets `self` as its first parameter, which `inspect` drops from the bound method. The
    /// parameters are put on one line (a doc string may wrap them).
    static func internalDoc(name: String, doc: String, method: Bool) -> String {
        guard let parameters = parameters(name: name, doc: doc) else { return doc }
        let all = method ? (parameters.isEmpty ? "self" : "self, " + parameters) : parameters
        return "\(name)(\(all))\n--\n\n\(doc)"
    }

    /// `doc` whose leading call (`name(…)`) also takes the keyword-only `keyword=None`: put
    /// before `**kwargs`, after a `*` or `*args` (one added when there is none).
    ///
    /// Read as UTF-8 bytes, as `parameters` and `split` are: every delimiter is ASCII and no byte
    /// of a multi-byte UTF-8 sequence is, so the result is the same as a walk over `Character`s,
    /// at a fraction of the cost (this runs for every client method at every start, issue 43).
    static func adding(keyword: String, to doc: String, of name: String) -> String {
        guard let parameters = parameters(name: name, doc: doc) else { return doc }
        var items = parameters.isEmpty ? [] : split(parameters)
        let doubleStar = items.firstIndex { $0.hasPrefix("**") } ?? items.count
        let hasStar = items[..<doubleStar].contains { $0.hasPrefix("*") }
        items.insert(contentsOf: hasStar ? ["\(keyword)=None"] : ["*", "\(keyword)=None"], at: doubleStar)
        // Past the closing parenthesis of the call: found again by depth, as `parameters` does.
        let bytes = Array(doc.utf8)
        var depth = 0
        var end = bytes.count
        for index in name.utf8.count..<bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 { end = index + 1 }
            default: break
            }
            if end != bytes.count { break }
        }
        return "\(name)(\(items.joined(separator: ", ")))" + String(decoding: bytes[end...], as: UTF8.self)
    }

    /// Space, tab, line feed, vertical tab, form feed or carriage return.
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        var slice = bytes
        while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }

    /// Top-level comma-separated items of a parameter list.
    private static func split(_ parameters: String) -> [String] {
        let bytes = Array(parameters.utf8)
        var items: [String] = []
        var depth = 0
        var start = 0
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            case UInt8(ascii: ",") where depth == 0:
                items.append(trimmed(bytes[start..<index]))
                start = index + 1
            default: break
            }
        }
        items.append(trimmed(bytes[start...]))
        return items
    }

    /// The text between the parentheses that follow `name` at the start of `doc`, on one line;
    /// nil when `doc` does not start with `name(` or its parentheses do not close.
    static func parameters(name: String, doc: String) -> String? {
        let bytes = Array(doc.utf8)
        let prefix = Array(name.utf8) + [UInt8(ascii: "(")]
        guard bytes.count >= prefix.count, bytes[..<prefix.count].elementsEqual(prefix) else { return nil }
        var depth = 0
        var quote: UInt8?
        var text: [UInt8] = []
        var pendingSpace = false
        for byte in bytes[name.utf8.count...] {
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                quote = byte
            } else if byte == UInt8(ascii: "(") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                depth += 1
                if depth == 1 { continue }
            } else if byte == UInt8(ascii: ")") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                depth -= 1
                if depth == 0 { break }
            }
            // Runs of whitespace become one space; none leads or trails.
            if isSpace(byte) {
                pendingSpace = !text.isEmpty
                continue
            }
            if pendingSpace {
                text.append(0x20)
                pendingSpace = false
            }
            text.append(byte)
        }
        guard depth == 0, quote == nil else { return nil }
        return String(decoding: text, as: UTF8.self)
    }
}
