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
    static func adding(keyword: String, to doc: String, of name: String) -> String {
        guard let parameters = parameters(name: name, doc: doc), doc.hasPrefix(name + "(") else { return doc }
        var items = parameters.isEmpty ? [] : split(parameters)
        let doubleStar = items.firstIndex { $0.hasPrefix("**") } ?? items.count
        let hasStar = items[..<doubleStar].contains { $0.hasPrefix("*") }
        items.insert(contentsOf: hasStar ? ["\(keyword)=None"] : ["*", "\(keyword)=None"], at: doubleStar)
        // Past the closing parenthesis of the call: found again by depth, as `parameters` does.
        var depth = 0
        var end = doc.endIndex
        for index in doc.indices[doc.index(doc.startIndex, offsetBy: name.count)...] {
            let character = doc[index]
            if "([{".contains(character) { depth += 1 }
            if ")]}".contains(character) {
                depth -= 1
                if depth == 0 {
                    end = doc.index(after: index)
                    break
                }
            }
        }
        return "\(name)(\(items.joined(separator: ", ")))" + doc[end...]
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    /// Top-level comma-separated items of a parameter list.
    private static func split(_ parameters: String) -> [String] {
        var items: [String] = []
        var depth = 0
        var current = ""
        for character in parameters {
            if "([{".contains(character) { depth += 1 }
            if ")]}".contains(character) { depth -= 1 }
            if character == ",", depth == 0 {
                items.append(trimmed(current))
                current = ""
            } else {
                current.append(character)
            }
        }
        items.append(trimmed(current))
        return items
    }

    /// The text between the parentheses that follow `name` at the start of `doc`, on one line;
    /// nil when `doc` does not start with `name(` or its parentheses do not close.
    static func parameters(name: String, doc: String) -> String? {
        guard doc.hasPrefix(name + "(") else { return nil }
        var depth = 0
        var quote: Character?
        var text = ""
        for character in doc.dropFirst(name.count) {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "(" || character == "[" || character == "{" {
                depth += 1
                if depth == 1 { continue }
            } else if character == ")" || character == "]" || character == "}" {
                depth -= 1
                if depth == 0 { break }
            }
            text.append(character)
        }
        guard depth == 0, quote == nil else { return nil }
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
