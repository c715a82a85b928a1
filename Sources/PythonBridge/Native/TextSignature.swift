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
