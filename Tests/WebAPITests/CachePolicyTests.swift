import Foundation
import Testing
import WebAPI

@Suite("cache freshness and revalidation, without I/O")
struct CachePolicyTests {
    func headers(_ fields: (String, String)...) -> Headers { Headers(fields) }

    @Test("max-age: fresh until it passes, counting the Age the response arrived with")
    func maxAge() {
        let stored = headers(("Cache-Control", "private, max-age=60"), ("ETag", "\"v1\""))
        #expect(CachePolicy.decide(requestHeaders: Headers(), responseHeaders: stored, storedAt: 1000, now: 1059) == .fresh)
        #expect(
            CachePolicy.decide(requestHeaders: Headers(), responseHeaders: stored, storedAt: 1000, now: 1060)
                == .revalidate(["If-None-Match": "\"v1\""]))
        let aged = headers(("Cache-Control", "max-age=60"), ("Age", "50"))
        #expect(CachePolicy.decide(requestHeaders: Headers(), responseHeaders: aged, storedAt: 1000, now: 1011) == .refetch)
    }

    @Test("Expires minus Date gives the lifetime; an invalid Expires is already stale")
    func expires() {
        let stored = headers(("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Expires", "Sun, 06 Nov 1994 08:50:37 GMT"))
        #expect(CachePolicy.freshnessLifetime(stored) == 60)
        #expect(CachePolicy.freshnessLifetime(headers(("Expires", "0"))) == 0)
        #expect(CachePolicy.freshnessLifetime(headers(("Content-Type", "application/json"))) == nil)
    }

    @Test("no-cache on either side, or max-age=0 in the request, forces revalidation with both validators")
    func noCache() {
        let validators = ["If-None-Match": "\"abc\"", "If-Modified-Since": "Tue, 15 Nov 1994 12:45:26 GMT"]
        let stored = headers(("Cache-Control", "max-age=600"), ("ETag", "\"abc\""), ("Last-Modified", "Tue, 15 Nov 1994 12:45:26 GMT"))
        #expect(
            CachePolicy.decide(requestHeaders: headers(("Cache-Control", "no-cache")), responseHeaders: stored, storedAt: 0, now: 1)
                == .revalidate(validators))
        #expect(
            CachePolicy.decide(requestHeaders: headers(("Cache-Control", "max-age=0")), responseHeaders: stored, storedAt: 0, now: 1)
                == .revalidate(validators))
        let noCache = headers(("Cache-Control", "no-cache, max-age=600"), ("ETag", "\"abc\""))
        #expect(CachePolicy.decide(requestHeaders: Headers(), responseHeaders: noCache, storedAt: 0, now: 1) == .revalidate(["If-None-Match": "\"abc\""]))
    }

    @Test("what may be stored: GET, a cacheable status, no no-store on either side, no Vary: *")
    func storable() {
        let plain = headers(("Content-Type", "application/json"))
        #expect(CachePolicy.isStorable(method: "GET", requestHeaders: Headers(), status: 200, responseHeaders: plain))
        #expect(!CachePolicy.isStorable(method: "POST", requestHeaders: Headers(), status: 200, responseHeaders: plain))
        #expect(!CachePolicy.isStorable(method: "GET", requestHeaders: Headers(), status: 500, responseHeaders: plain))
        #expect(!CachePolicy.isStorable(method: "GET", requestHeaders: Headers(), status: 404, responseHeaders: plain))
        #expect(!CachePolicy.isStorable(method: "GET", requestHeaders: Headers(), status: 200, responseHeaders: headers(("Cache-Control", "no-store"))))
        #expect(!CachePolicy.isStorable(method: "GET", requestHeaders: headers(("Cache-Control", "no-store")), status: 200, responseHeaders: plain))
        #expect(!CachePolicy.isStorable(method: "GET", requestHeaders: Headers(), status: 200, responseHeaders: headers(("Vary", "Accept, *"))))
        #expect(CachePolicy.varyNames(headers(("Vary", "Accept, Authorization"), ("vary", "Cookie"))) == ["accept", "authorization", "cookie"])
    }

    @Test("a 304 updates the stored headers but not those describing the body")
    func merge() {
        let stored = headers(("Content-Type", "application/json"), ("Content-Length", "120"), ("x-ratelimit-remaining", "10"), ("ETag", "\"a\""))
        let notModified = headers(("x-ratelimit-remaining", "9"), ("Content-Length", "0"), ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"))
        let merged = CachePolicy.merge(stored: stored, notModified: notModified)
        #expect(merged["x-ratelimit-remaining"] == "9")
        #expect(merged["Content-Length"] == "120")
        #expect(merged["Content-Type"] == "application/json")
        #expect(merged["Date"] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(merged.values("x-ratelimit-remaining").count == 1)
    }

    @Test("SHA-256 of the standard test vectors")
    func sha256() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test("ages read as people say them")
    func ages() {
        #expect(CacheStage.describeAge(5) == "5 s")
        #expect(CacheStage.describeAge(600) == "10 min")
        #expect(CacheStage.describeAge(3 * 3600) == "3 h")
        #expect(CacheStage.describeAge(5 * 86400) == "5 days")
    }
}
