import Foundation
import Testing
import WebAPI

/// `EssentialText` gives Foundation's answers without Foundation: each case compared with the
/// Foundation call it replaces.
@Suite("text helpers answer as Foundation does")
struct EssentialTextTests {
    static let texts = [
        "", " ", "\t", "plain", "  both  ", "\tlead", "trail\t\t", "\u{00A0}nbsp\u{00A0}",
        "\u{3000}ideographic\u{3000}",
        "\u{2003}em\u{2009}", " line\n", "\r\ncrlf\r\n", "\u{0085}nel\u{2028}", "\u{2029}para", "\u{000B}vt\u{000C}",
        " \u{0301}combining ", "e\u{0301} ", " 🙂 ", "inner  space kept", "\u{200B}zero width\u{200B}", "\u{FEFF}bom",
    ]

    @Test("trimmingWhitespace is trimmingCharacters(in: .whitespaces)", arguments: texts)
    func whitespace(_ text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces))
        #expect(text[...].trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces))
    }

    @Test("trimmingWhitespaceAndNewlines is trimmingCharacters(in: .whitespacesAndNewlines)", arguments: texts)
    func whitespaceAndNewlines(_ text: String) {
        #expect(text.trimmingWhitespaceAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(
        "percentDecoded is removingPercentEncoding",
        arguments: [
            "", "plain", "a%20b", "%41%42", "%e2%82%AC", "100%", "%4", "%zz", "%%", "a+b", "%C3%28", "%FF", "%00x",
            "é%C3%A9", "%2F%2f",
        ])
    func decoding(_ text: String) {
        #expect(text.percentDecoded == text.removingPercentEncoding)
    }

    static let encodable = [
        "", "plain", "a b", "a/b?c=d&e#f", "é€🙂", "[::1]:80", "user:pass@host", "~-._!$'()*+,;=", "%", "\"<>\\^`{|}",
    ]

    @Test("percentEncoded matches addingPercentEncoding for each URL set", arguments: encodable)
    func encoding(_ text: String) {
        let pairs: [((UInt8) -> Bool, CharacterSet)] = [
            (URLBytes.queryAllowed, .urlQueryAllowed), (URLBytes.pathAllowed, .urlPathAllowed),
            (URLBytes.hostAllowed, .urlHostAllowed), (URLBytes.fragmentAllowed, .urlFragmentAllowed),
            (URLBytes.userAllowed, .urlUserAllowed), (URLBytes.alphanumeric, .alphanumerics),
        ]
        for (allowed, set) in pairs {
            #expect(text.percentEncoded(allowing: allowed) == text.addingPercentEncoding(withAllowedCharacters: set))
        }
        var unreserved = CharacterSet.alphanumerics
        unreserved.insert(charactersIn: "-._~")
        #expect(
            text.percentEncoded(allowing: URLBytes.unreserved)
                == text.addingPercentEncoding(withAllowedCharacters: unreserved))
    }

    @Test(
        "replacingLiteral is replacingOccurrences(of:with:options: .literal)",
        arguments: [
            ("", "+", " "), ("a+b+c", "+", " "), ("a\r\nb", "\r", ""), ("a\r\nb", "\n", ""), ("a\\b\"c", "\\", "\\\\"),
            ("q\"\u{0301}", "\"", "\\\""), ("e\u{0301}", "e", "E"), ("aaaa", "aa", "b"), ("xyz", "", "-"),
            ("\u{1F1FA}\u{1F1F8}", "\u{1F1FA}", "R"), ("tok tok", "tok", "REDACTED"), ("é€🙂", "€", "EUR"),
        ])
    func literal(_ text: String, _ target: String, _ replacement: String) {
        #expect(
            text.replacingLiteral(target, with: replacement)
                == text.replacingOccurrences(of: target, with: replacement, options: .literal))
    }

    @Test("replacingLiteral replaces what Foundation's default search replaced, and a mark's base too")
    func literalAgainstDefault() {
        for (text, target) in [("a\r\nb", "\r"), ("a+b", "+"), ("\u{1F1FA}\u{1F1F8}", "\u{1F1FA}"), ("a/b", "/")] {
            #expect(text.replacingLiteral(target, with: "R") == text.replacingOccurrences(of: target, with: "R"))
        }
        // Foundation's default search leaves a quote that a combining mark follows.
        // (Held in constants: #expect cannot expand a literal with a mark after its quote.)
        let marked = "q\"\u{0301}"
        let replaced = "qR\u{0301}"
        #expect(marked.replacingOccurrences(of: "\"", with: "R") == marked)
        #expect(marked.replacingLiteral("\"", with: "R") == replaced)
    }
}
