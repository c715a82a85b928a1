import Foundation
import Testing

@testable import WebAPI

/// `Redactor.replacing(_:in:)` finds a secret where Foundation's search found it (canonically
/// equivalent spellings included), and also where it did not (before a combining mark).
@Suite("redaction's search without Foundation")
struct RedactorSearchTests {
    @Test(
        "a secret is replaced wherever Foundation's search replaced it",
        arguments: [
            ("ghp_secret", "token ghp_secret and ghp_secret."), ("ghp_secret", "none here"),
            ("p\u{E9}ss word", "said pe\u{301}ss word twice: p\u{E9}ss word"), ("a b/c", "x a b/c y"),
            ("s3cr3t", "\r\ns3cr3t\r\n"), ("\u{1F511}key", "with \u{1F511}key in it"), ("aaaa", "aaaaaaaaa"),
        ])
    func sameAsFoundation(_ secret: String, _ text: String) {
        #expect(Redactor.replacing(secret, in: text) == text.replacingOccurrences(of: secret, with: "REDACTED"))
    }

    @Test("a secret that a combining mark follows is replaced too (Foundation's search left it)")
    func beforeCombiningMark() {
        let text = "token ghp_secret\u{301} end"
        #expect(text.replacingOccurrences(of: "ghp_secret", with: "REDACTED") == text)
        #expect(Redactor.replacing("ghp_secret", in: text) == "token REDACTED\u{301} end")
    }

    @Test("the replacement is not searched again")
    func notRescanned() {
        #expect(Redactor.replacing("REDA", in: "xREDAy") == "xREDACTEDy")
    }
}
