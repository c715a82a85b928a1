import Testing

@testable import WebAPI

/// `PageHistory.normalized` reads an ASCII URL on its bytes (`ASCIIURL`): the same normal form as
/// on `String`'s characters (`normalizedText`, which a URL past ASCII still takes).
@Suite("PageHistory: the normal form on bytes, against the one on characters")
struct PageHistoryASCIITests {
    /// Pieces URLs are made of, the awkward ones many times over.
    static let pieces = [
        "http", "HTTPS", "h+t.tp", "1x", "://", ":/", "/", "//", ".", "..", "/./", "/../", "?", "&", "&&", "=", "#",
        "@", ":", ":80", ":443", ":8443", "[::1]", "]", "%7e", "%7E", "%2f", "%e9", "%", "%4", "%zz", "a", "B",
        "page=2",
        "per_page=100", "access_token=x", "access_token", "access_tokenx=1", "Example.COM", "user:pw", "\r\n", " ", "~",
    ]

    @Test("20,000 generated ASCII URLs: the same normal form, with and without a parameter ignored")
    func generated() {
        var generator = SystemRandomNumberGenerator()
        var differences: [String] = []
        for round in 0..<20_000 {
            var url = round % 3 == 0 ? "" : ["http://", "https://", "HTTP://"].randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                url += Self.pieces.randomElement(using: &generator)!
            }
            for parameter in [nil, "access_token", "page"] as [String?] {
                let bytes = PageHistory.normalized(url, ignoring: parameter)
                let characters = PageHistory.normalizedText(url, ignoring: parameter)
                if bytes != characters {
                    differences.append("\(url.debugDescription) \(parameter ?? "-"): \(bytes) vs \(characters)")
                }
            }
        }
        #expect(differences.isEmpty, "\(differences.prefix(10))")
    }

    @Test("a URL or a parameter past ASCII takes the characters' way")
    func pastASCII() {
        let bytes = Array("https://h/é".utf8)
        #expect(bytes.withUnsafeBufferPointer { ASCIIURL.normalized($0, ignoring: nil) } == nil)
        #expect(PageHistory.normalized("HTTPS://H/é?b&a") == "https://h/é?a&b")
        #expect(PageHistory.normalized("https://h/p?é=1&a", ignoring: "é") == "https://h/p?a")
        #expect(PageHistory.normalized("https://h/x/../p?per_page=100&page=2") == "https://h/p?page=2&per_page=100")
    }
}
