import Testing

@testable import PythonBridge

/// `TextSignature` on bytes, checked against the walk over `Character`s it replaced.
///
/// It reads doc strings as UTF-8 bytes since issue 43 (it runs for every client method at every
/// start: 8.7 M instructions of an empty macro's 85 M as `Character`s). The old walk is kept here
/// as the reference, and both must agree on every doc string: the shapes the bindings use, near
/// misses, and random ones.
@Suite("TextSignature on bytes agrees with the walk over Characters it replaced")
struct TextSignatureParityTests {
    /// The previous implementation, verbatim but for its name.
    enum Reference {
        static func adding(keyword: String, to doc: String, of name: String) -> String {
            guard let parameters = parameters(name: name, doc: doc), doc.hasPrefix(name + "(") else { return doc }
            var items = parameters.isEmpty ? [] : split(parameters)
            let doubleStar = items.firstIndex { $0.hasPrefix("**") } ?? items.count
            let hasStar = items[..<doubleStar].contains { $0.hasPrefix("*") }
            items.insert(contentsOf: hasStar ? ["\(keyword)=None"] : ["*", "\(keyword)=None"], at: doubleStar)
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

        static func trimmed(_ text: String) -> String {
            String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        }

        static func split(_ parameters: String) -> [String] {
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

    static let docs = [
        "repos(login, limit=None, **params) -> iterator of dicts\n\nEvery page.",
        "request(method, url, params=None, headers=None,\n        timeout=None, cache=True) -> Response\n\nOne.",
        "me() -> dict", "media(user_id='me)(', *, fields=None) -> list (of dicts)",
        "search(kind, query, limit=None, sort=None, order=None) -> iterator",
        "get(path, params=None, headers=None) -> the decoded JSON", "call(*args, **kwargs)",
        "call(a, *rest, b=1, **kw)", "map(func, items, concurrency=8, *, return_exceptions=False)",
        "shorten(long_url, *, domain=None, slug=None, tags=None) -> dict: id, longUrl, ...",
        "unclosed(a, b", "quoted(a='x, y', b=\"(\") rest", "nested(a=[1, (2, 3)], b={'k': (4,)}) tail",
        "Does things (no signature).", "", "repos", "repos(", "repos()", "repos(  a  ,\t b\n, c ) x",
        "graphql(query, **variables) -> the answer's data (GraphQLError on errors)",
        "insights(target, metrics, period=None, **params) -> what the API sends — naïve café ✓",
        "reposX(login)", "repos (login)",
    ]

    @Test("the bindings' shapes and near misses: the same text")
    func sameOnKnownShapes() {
        for doc in Self.docs {
            for name in [
                "repos", "request", "me", "media", "search", "get", "call", "map", "shorten", "unclosed",
                "quoted", "nested", "graphql", "insights",
            ] {
                #expect(
                    TextSignature.parameters(name: name, doc: doc) == Reference.parameters(name: name, doc: doc),
                    "\(name) in \(doc.debugDescription)")
                #expect(
                    TextSignature.adding(keyword: "cache", to: doc, of: name)
                        == Reference.adding(keyword: "cache", to: doc, of: name), "\(name) in \(doc.debugDescription)")
            }
        }
    }

    @Test("2,000 random doc strings over the delimiters: the same text")
    func sameOnRandomText() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("f(),[]{}*='\" \t\nab_é=") + ["**", "->", "\n\n"].flatMap { Array($0) }
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let doc = "f(" + String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            #expect(
                TextSignature.parameters(name: "f", doc: doc) == Reference.parameters(name: "f", doc: doc),
                "\(doc.debugDescription)")
            #expect(
                TextSignature.adding(keyword: "cache", to: doc, of: "f")
                    == Reference.adding(keyword: "cache", to: doc, of: "f"), "\(doc.debugDescription)")
        }
    }
}
