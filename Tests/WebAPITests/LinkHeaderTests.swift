import TestSupport
import Testing

@testable import WebAPI

/// `LinkHeader.parse` reads ASCII headers on their bytes (`parseASCII`); it must give what the
/// character-by-character parse (`parseText`) gives for every header.
@Suite("Link header: the ASCII parse")
struct LinkHeaderTests {
    /// Pieces that exercise every step: targets, quotes around commas, `rel` spelt in any case,
    /// `=` and `;` in odd places, whitespace the trim takes and CR LF, which it does not.
    static let pieces = [
        "<", ">", "\"", ",", ";", "=", " ", "\t", "\r\n", "\r", "\n", "rel", "REL", "Rel", "next", "last", "prev",
        "http://a/1?page=2&x=y", "title", "x", "<http://a/2>", "; rel=\"next\"", ", ", "rel=next last",
    ]

    @Test("20,000 random ASCII headers: the byte parse equals the character parse")
    func randomHeaders() {
        var generator = SplitMix64(seed: 8288)
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 24)
            let header = (0..<count).map { _ in Self.pieces[Int(generator.next() % UInt64(Self.pieces.count))] }
                .joined()
            var bytes = header
            let viaBytes = bytes.withUTF8 { LinkHeader.parseASCII($0) }
            if viaBytes != LinkHeader.parseText(header) { mismatches.append(header) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("headers past ASCII go to the character parse")
    func nonASCII() {
        var header = "<http://a/\u{e9}>; rel=\"next\""
        #expect(header.withUTF8 { LinkHeader.parseASCII($0) } == nil)
        #expect(LinkHeader.parse(header) == ["next": "http://a/\u{e9}"])
        // A combining mark after `>` makes one character of the two: no target closes there.
        header = "<http://a/1>\u{301}; rel=\"next\""
        #expect(LinkHeader.parse(header) == LinkHeader.parseText(header))
    }

    @Test("GitHub's header, as the benchmark's server sends it")
    func gitHub() {
        let base = "http://127.0.0.1:8080/users/many/repos?per_page=100"
        let header =
            "<\(base)&page=3>; rel=\"next\", <\(base)&page=20>; rel=\"last\", "
            + "<\(base)&page=1>; rel=\"first\", <\(base)&page=1>; rel=\"prev\""
        #expect(
            LinkHeader.parse(header) == [
                "next": "\(base)&page=3", "last": "\(base)&page=20", "first": "\(base)&page=1",
                "prev": "\(base)&page=1",
            ])
    }
}
