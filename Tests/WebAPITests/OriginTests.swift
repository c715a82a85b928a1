import TestSupport
import Testing

@testable import WebAPI

/// `Origin(url:)` reads the common form from the bytes (`Origin.plain`) and anything else with
/// `URLComponents` (`Origin.parsed`).
///
/// The origin decides where a credential goes, so the fast reading must never disagree with
/// the careful one.
@Suite("origins: the fast reading agrees with URLComponents")
struct OriginTests {
    @Test("the common forms take the fast reading, and it gives URLComponents' answer")
    func commonForms() {
        let cases: [(String, Origin)] = [
            ("http://127.0.0.1:8080/users/octocat", Origin(scheme: "http", host: "127.0.0.1", port: 8080)),
            (
                "https://api.github.com/repos/o/r/issues?per_page=100&page=2",
                Origin(scheme: "https", host: "api.github.com", port: 443)
            ),
            ("HTTPS://API.GitHub.COM", Origin(scheme: "https", host: "api.github.com", port: 443)),
            ("http://localhost", Origin(scheme: "http", host: "localhost", port: 80)),
            ("http://a-b.example:99999/x#frag?y", Origin(scheme: "http", host: "a-b.example", port: 99999)),
            ("https://h/search?q=a%20b&x=(1),*+!$'@:/?", Origin(scheme: "https", host: "h", port: 443)),
        ]
        for (url, expected) in cases {
            #expect(Origin.plain(url) == expected, "\(url)")
            #expect(Origin.parsed(url) == expected, "\(url)")
            #expect(Origin(url: url) == expected, "\(url)")
        }
    }

    @Test("anything unusual is left to URLComponents (user info, IP literals, IDNA, escapes, spaces)")
    func unusualForms() {
        let unusual = [
            "http://user:pw@host/", "http://[::1]:8080/", "http://xn--bcher-kva.ch/", "http://h%41st/",
            "http://bücher.ch/", "http://h/a b", "http://h/a%zz", "http://h/a#b#c", "http://h:/x", "http://h:123456/",
            "http://-h/", "http://h-/", "http://a..b/", "http://example.com./", "ftp://h/", "http:/h/", "http://",
            "http://h\\@evil/", "http://h/[x]", "http://h/\"x\"", "http://h_x/", "http://h/<script>",
            "http://" + String(repeating: "a", count: 64) + ".com/",
            "http://" + Array(repeating: "abcdefghij", count: 26).joined(separator: ".") + "/",
        ]
        for url in unusual {
            #expect(Origin.plain(url) == nil, "\(url)")
            #expect(Origin(url: url) == Origin.parsed(url), "\(url)")
        }
    }

    @Test("on 200,000 generated URLs the fast reading, when it answers, gives URLComponents' answer")
    func generated() {
        var random = SplitMix64(seed: 0x5eed_0461)
        let schemes = [
            "http://", "https://", "HTTP://", "hTtPs://", "http://", "https://", "http:/", "http:", "https//", "ftp://",
            "",
        ]
        let hostBytes =
            Array("abcdefXYZ0129-..".utf8) + [UInt8(ascii: "_"), UInt8(ascii: "%"), UInt8(ascii: "@"), 0xC3, 0xBC]
        let restBytes =
            Array("abyz09-._~!$&'()*+,;=:@//?#%%AFzq".utf8) + Array(" []<>\"\\^`{|}".utf8) + [
                0x7F, 0x09, 0xE2, 0x82, 0xAC,
            ]
        var fast = 0
        for _ in 0..<200_000 {
            var url = schemes[Int(random.next() % UInt64(schemes.count))]
            if random.next() % 5 == 0 { url += "xn--" }
            for _ in 0..<Int(1 + random.next() % 10) {
                url += String(decoding: [hostBytes[Int(random.next() % UInt64(hostBytes.count))]], as: UTF8.self)
            }
            if random.next() % 3 == 0 { url += ":" + String(random.next() % 200_000) }
            if random.next() % 2 == 0 {
                url += "/"
                for _ in 0..<Int(random.next() % 12) {
                    url += String(decoding: [restBytes[Int(random.next() % UInt64(restBytes.count))]], as: UTF8.self)
                }
            }
            guard let plain = Origin.plain(url) else { continue }
            fast += 1
            #expect(Origin.parsed(url) == plain, "\(url)")
        }
        // The generator reaches the fast reading often enough for the comparison to mean something.
        #expect(fast > 5_000)
    }

    @Test("isLoopback read from the bytes gives the String reading's answer, on listed and 200,000 generated hosts")
    func loopbackBytes() {
        let listed = [
            "127.0.0.1", "127.0.0.5", "127.255.255.255", "127.256.0.1", "127.0.0", "127.0.0.1.1", "127..0.0.1",
            ".127.0.0.1.", "127.+1.0.1", "127.-0.0.1", "127.-1.0.1", "127.+.0.1", "127.00000255.0.1", "128.0.0.1",
            "0127.0.0.1", "127.0.0.1.evil.com", "localhost", "LOCALHOST", "a.localhost", ".localhost", "localhost.",
            "localhostx", "::1", "[::1]", "[[::1]]", "]::1[", "[::2]", "", "[", "[]", "...", "1.2.3.4",
        ]
        for host in listed {
            #expect(
                Origin(scheme: "http", host: host, port: 80).isLoopback
                    == Origin(scheme: "http", host: host, port: 80).loopbackReading, "\(host)")
        }
        var random = SplitMix64(seed: 0x100b_bac4)
        let pieces = ["127", ".", "0", "1", "255", "256", "+", "-", "[", "]", "localhost", ":", "a", "00", "9"]
        var loopback = 0
        for _ in 0..<200_000 {
            var host = ""
            for _ in 0..<Int(1 + random.next() % 8) { host += pieces[Int(random.next() % UInt64(pieces.count))] }
            let origin = Origin(scheme: "http", host: host, port: 80)
            let expected = origin.loopbackReading
            if expected { loopback += 1 }
            #expect(origin.isLoopback == expected, "\(host)")
        }
        // Both answers are reached often enough for the comparison to mean something.
        #expect(loopback > 1_000)
        // A non-ASCII host is read by the String reading.
        #expect(Origin(scheme: "http", host: "localhost\u{301}", port: 80).isLoopback == false)
    }
}
