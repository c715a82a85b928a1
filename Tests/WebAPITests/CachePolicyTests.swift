import Foundation
import Testing
import WebAPI

/// The cache's rules as a pure state machine (RFC 9111), without I/O: each test is named after
/// the section it checks.
///
/// `CacheConformanceTests` checks the same rules against the loopback server.
@Suite("cache freshness and revalidation, without I/O (RFC 9111)")
struct CachePolicyTests {
    func headers(_ fields: (String, String)...) -> Headers { Headers(fields) }

    func stored(_ fields: (String, String)..., storedAt: Double = 1000, initialAge: Double = 0, status: Int = 200)
        -> CachePolicy.Stored
    {
        CachePolicy.Stored(status: status, headers: Headers(fields), storedAt: storedAt, initialAge: initialAge)
    }

    @Test("§4.2.1 max-age: fresh until it passes, counting the Age the response arrived with")
    func maxAge() {
        let response = stored(("Cache-Control", "private, max-age=60"), ("ETag", "\"v1\""))
        #expect(CachePolicy.decide(request: Headers(), stored: response, now: 1059) == .serve(age: 59, stale: false))
        #expect(
            CachePolicy.decide(request: Headers(), stored: response, now: 1060)
                == .revalidate(["If-None-Match": "\"v1\""]))
        let aged = stored(("Cache-Control", "max-age=60"), initialAge: 50)
        #expect(CachePolicy.decide(request: Headers(), stored: aged, now: 1011) == .fetch)
        #expect(CachePolicy.decide(request: Headers(), stored: nil, now: 0) == .fetch)
    }

    @Test("§5.3 Expires minus Date gives the lifetime; malformed or repeated Expires is already expired")
    func section5_3_expires() {
        let lifetime = CachePolicy.freshnessLifetime(
            headers(("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Expires", "Sun, 06 Nov 1994 08:50:37 GMT")))
        #expect(lifetime == 60)
        #expect(CachePolicy.freshnessLifetime(headers(("Expires", "0"))) == 0)
        #expect(CachePolicy.freshnessLifetime(headers(("Content-Type", "application/json"))) == nil)
        let date = ("Date", "Sun, 06 Nov 1994 08:49:37 GMT")
        for malformed in [
            "Sun 06 Nov 1994 09:49:37 GMT",  // no comma
            "Sun, 06 Nov 1994 9:49:37 GMT",  // one-digit hour
            "Sun, 06 Nov 1994 009:49:37 GMT",  // three-digit hour
            "Sun,  06 Nov 1994 09:49:37 GMT",  // extra space
            "Sun, 06 Nov 1994 09:49:37 UTC",  // not GMT
            "Sun, 06 Nov 1994 09:49:37 PST",
            "Sun, 06 Nov 94 09:49:37 GMT",  // two-digit year in the fixdate
            "Sun, 31 Feb 1994 09:49:37 GMT",  // no such day
        ] {
            #expect(CachePolicy.freshnessLifetime(headers(date, ("Expires", malformed))) == 0, "\(malformed)")
        }
        let twice = headers(
            date, ("Expires", "Sun, 06 Nov 1994 09:49:37 GMT"), ("Expires", "Sun, 06 Nov 1994 09:49:37 GMT"))
        #expect(CachePolicy.freshnessLifetime(twice) == 0, "several Expires lines are invalid")
        // The two obsolete forms are accepted (RFC 9110 §5.6.7).
        #expect(CachePolicy.freshnessLifetime(headers(date, ("Expires", "Sunday, 06-Nov-94 09:49:37 GMT"))) == 3600)
        #expect(CachePolicy.freshnessLifetime(headers(date, ("Expires", "Sun Nov  6 09:49:37 1994"))) == 3600)
        // Without Date, the time the response arrived stands in for it.
        let received = HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") ?? 0
        #expect(
            CachePolicy.freshnessLifetime(headers(("Expires", "Sun, 06 Nov 1994 08:59:37 GMT")), responseTime: received)
                == 600)
    }

    @Test("RFC 9110 §5.6.7 HTTP dates: the three forms, round trip")
    func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == 784_111_777)
        let tenDaysLater: Double = 784_111_777 + 10 * 86400
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == tenDaysLater)
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse(HTTPDate.format(1_700_000_000)) == 1_700_000_000)
        #expect(HTTPDate.parse("") == nil && HTTPDate.parse("Sun, ") == nil && HTTPDate.parse("0") == nil)
    }

    @Test("§4.2.3 current age: the larger of Date's apparent age and Age plus the exchange's delay, plus time stored")
    func section4_2_3_currentAge() {
        // The Date says two hours ago: the response is already two hours old.
        let old = headers(("Date", HTTPDate.format(10_000 - 7200)), ("Cache-Control", "max-age=3600"))
        #expect(CachePolicy.initialAge(old, requestTime: 9_999, responseTime: 10_000) == 7200)
        // Age plus the time the exchange took.
        let aged = headers(("Date", HTTPDate.format(10_000)), ("Age", "30"))
        #expect(CachePolicy.initialAge(aged, requestTime: 9_998, responseTime: 10_000) == 32)
        let response = CachePolicy.Stored(status: 200, headers: aged, storedAt: 10_000, initialAge: 32)
        #expect(CachePolicy.currentAge(response, now: 10_100) == 132)
        // So a response dated two hours ago with max-age=3600 is stale on arrival.
        let stale = CachePolicy.Stored(status: 200, headers: old, storedAt: 10_000, initialAge: 7200)
        #expect(CachePolicy.decide(request: Headers(), stored: stale, now: 10_001) == .fetch)
    }

    @Test("§5.1 Age: the first member of a list, a non-negative integer, else ignored")
    func section5_1_age() {
        #expect(CachePolicy.age(headers(("Age", "7200, 0"))) == 7200)
        #expect(CachePolicy.age(headers(("Age", "7200"), ("Age", "0"))) == 7200)
        #expect(CachePolicy.age(headers(("Age", "-5"))) == nil)
        #expect(CachePolicy.age(headers(("Age", "1.5"))) == nil)
        #expect(CachePolicy.age(headers(("Age", "99999999999999999999"))) == 2_147_483_648)
        #expect(CachePolicy.age(headers()) == nil)
    }

    @Test("§5.2.1 request directives: no-cache, max-age, max-stale, min-fresh, only-if-cached")
    func section5_2_1_requestDirectives() {
        let validators = ["If-None-Match": "\"abc\"", "If-Modified-Since": "Tue, 15 Nov 1994 12:45:26 GMT"]
        let response = stored(
            ("Cache-Control", "max-age=600"), ("ETag", "\"abc\""), ("Last-Modified", "Tue, 15 Nov 1994 12:45:26 GMT"),
            storedAt: 0)
        func decide(_ cacheControl: String, now: Double = 100, _ stored: CachePolicy.Stored? = nil)
            -> CachePolicy.Decision
        {
            CachePolicy.decide(request: headers(("Cache-Control", cacheControl)), stored: stored ?? response, now: now)
        }
        #expect(decide("no-cache") == .revalidate(validators))
        #expect(
            CachePolicy.decide(request: headers(("Pragma", "no-cache")), stored: response, now: 1)
                == .revalidate(validators))
        #expect(decide("max-age=0") == .revalidate(validators))
        #expect(decide("max-age=50") == .revalidate(validators), "older than the client accepts")
        #expect(decide("max-age=150") == .serve(age: 100, stale: false))
        #expect(decide("min-fresh=550") == .revalidate(validators), "fresh for 500 more seconds only")
        #expect(decide("min-fresh=400") == .serve(age: 100, stale: false))
        #expect(decide("max-stale=100", now: 650) == .serve(age: 650, stale: true))
        #expect(decide("max-stale=10", now: 650) == .revalidate(validators))
        #expect(decide("max-stale", now: 100_000) == .serve(age: 100_000, stale: true))
        #expect(decide("only-if-cached", now: 650) == .unsatisfiable, "stale, and the client forbids the network")
        #expect(decide("only-if-cached") == .serve(age: 100, stale: false))
        #expect(
            CachePolicy.decide(request: headers(("Cache-Control", "only-if-cached")), stored: nil, now: 0)
                == .unsatisfiable)
        #expect(CachePolicy.bypasses(requestHeaders: headers(("Cache-Control", "no-store"))))
    }

    @Test(
        "§5.2.2.2 must-revalidate and §5.2.2.4 no-cache: never served stale (§4.2.4), not even offline or with max-stale"
    )
    func section4_2_4_neverStale() {
        let mustRevalidate = stored(("Cache-Control", "max-age=10, must-revalidate"), ("ETag", "\"a\""), storedAt: 0)
        let noCache = stored(("Cache-Control", "no-cache"), ("ETag", "\"a\""), storedAt: 0)
        let plain = stored(("Cache-Control", "max-age=10"), ("ETag", "\"a\""), storedAt: 0)
        let maxStale = headers(("Cache-Control", "max-stale"))
        #expect(
            CachePolicy.decide(request: maxStale, stored: mustRevalidate, now: 100)
                == .revalidate(["If-None-Match": "\"a\""]))
        #expect(CachePolicy.decide(request: maxStale, stored: plain, now: 100) == .serve(age: 100, stale: true))
        #expect(
            CachePolicy.decide(request: Headers(), stored: noCache, now: 0) == .revalidate(["If-None-Match": "\"a\""]))
        #expect(
            CachePolicy.decide(request: Headers(), stored: mustRevalidate, now: 100, disconnected: true)
                == .revalidate(["If-None-Match": "\"a\""]))
        #expect(
            CachePolicy.decide(request: Headers(), stored: plain, now: 100, disconnected: true)
                == .serve(age: 100, stale: true))
        #expect(!CachePolicy.mayServeOnError(mustRevalidate) && !CachePolicy.mayServeOnError(noCache))
        #expect(CachePolicy.mayServeOnError(plain))
    }

    @Test(
        "§3 what may be stored: any final status with explicit freshness; heuristically cacheable statuses; never no-store, Vary: *, 206, 304"
    )
    func section3_storable() {
        let plain = headers(("Content-Type", "application/json"))
        let fresh = headers(("Cache-Control", "max-age=600"))
        func storable(_ status: Int, _ headers: Headers, method: String = "GET", request: Headers = Headers()) -> Bool {
            CachePolicy.isStorable(method: method, requestHeaders: request, status: status, responseHeaders: headers)
        }
        #expect(storable(200, plain))
        #expect(!storable(200, plain, method: "POST"))
        for status in [204, 301, 302, 307, 308, 404, 405, 410, 414, 500, 501] {
            #expect(storable(status, fresh), "\(status) with max-age")
            #expect(storable(status, headers(("Expires", "Sun, 06 Nov 2094 08:49:37 GMT"))), "\(status) with Expires")
        }
        for status in [204, 404, 405, 410, 414, 501] {
            #expect(storable(status, plain), "\(status) is heuristically cacheable")
        }
        for status in [302, 307, 400, 403, 500, 503] {
            #expect(!storable(status, plain), "\(status) without freshness")
        }
        #expect(!storable(206, fresh) && !storable(304, fresh) && !storable(100, fresh))
        #expect(!storable(200, headers(("Cache-Control", "no-store"))))
        #expect(!storable(200, plain, request: headers(("Cache-Control", "no-store"))))
        #expect(!storable(200, headers(("Vary", "Accept, *"))))
        #expect(
            CachePolicy.varyNames(headers(("Vary", "Accept, Authorization"), ("vary", "Cookie"))) == [
                "accept", "authorization", "cookie",
            ])
    }

    @Test("§4.1 Vary: a variant is told by the request's normalised values; absent differs from empty")
    func section4_1_vary() {
        let names = ["accept-language"]
        #expect(
            CachePolicy.variantText(names, headers(("Accept-Language", "en, fr")))
                == CachePolicy.variantText(names, headers(("Accept-Language", "en,fr"))))
        #expect(
            CachePolicy.variantText(names, headers(("Accept-Language", "en"), ("Accept-Language", "fr")))
                == CachePolicy.variantText(names, headers(("Accept-Language", "en,fr"))))
        #expect(
            CachePolicy.variantText(names, headers())
                != CachePolicy.variantText(names, headers(("Accept-Language", ""))))
        #expect(
            CachePolicy.variantText(names, headers(("Accept-Language", "en")))
                != CachePolicy.variantText(names, headers(("Accept-Language", "fr"))))
        #expect(CachePolicy.variantText([], headers(("Accept-Language", "en"))) == "")
    }

    @Test(
        "§4.4 invalidation: a non-error answer to an unsafe method; the target and same-origin Location / Content-Location"
    )
    func section4_4_invalidation() {
        #expect(CachePolicy.invalidates(method: "POST", status: 201))
        #expect(CachePolicy.invalidates(method: "DELETE", status: 204))
        #expect(CachePolicy.invalidates(method: "PUT", status: 303))
        #expect(CachePolicy.invalidates(method: "PATCH", status: 200))
        #expect(!CachePolicy.invalidates(method: "POST", status: 500))
        #expect(!CachePolicy.invalidates(method: "POST", status: 404))
        #expect(!CachePolicy.invalidates(method: "GET", status: 200))
        #expect(!CachePolicy.invalidates(method: "HEAD", status: 200))
        let urls = CachePolicy.invalidatedURLs(
            target: "http://127.0.0.1:8080/items",
            responseHeaders: headers(("Location", "/items/7"), ("Content-Location", "http://other.example/items/7")))
        #expect(urls == ["http://127.0.0.1:8080/items", "http://127.0.0.1:8080/items/7"])
    }

    @Test("§3.2 a 304 updates the stored headers but not those describing the body; never Set-Cookie")
    func merge() {
        let stored = headers(
            ("Content-Type", "application/json"), ("Content-Length", "120"), ("x-ratelimit-remaining", "10"),
            ("ETag", "\"a\""))
        let notModified = headers(
            ("x-ratelimit-remaining", "9"), ("Content-Length", "0"), ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("Set-Cookie", "s=1"))
        let merged = CachePolicy.merge(stored: stored, notModified: notModified)
        #expect(merged["x-ratelimit-remaining"] == "9")
        #expect(merged["Content-Length"] == "120")
        #expect(merged["Content-Type"] == "application/json")
        #expect(merged["Date"] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(merged["Set-Cookie"] == nil)
        #expect(merged.values("x-ratelimit-remaining").count == 1)
    }

    @Test("§3.2 a 304 repeating the last stored fields merges to the stored headers, and only then")
    func mergeRepeated() {
        let stored = headers(
            ("Content-Type", "application/json"), ("ETag", "\"a\""), ("x-ratelimit-remaining", "10"))
        let same = headers(("ETag", "\"a\""), ("x-ratelimit-remaining", "10"))
        #expect(
            CachePolicy.merge(stored: stored, notModified: same).fields.map { "\($0.name): \($0.value)" }
                == stored.fields.map { "\($0.name): \($0.value)" })
        // What the merge does otherwise: a new value, another order, a body field, a name also
        // earlier in the stored fields (in another case), nothing sent.
        let cases: [(Headers, [String])] = [
            (
                headers(("ETag", "\"a\""), ("x-ratelimit-remaining", "9")),
                ["Content-Type: application/json", "ETag: \"a\"", "x-ratelimit-remaining: 9"]
            ),
            (
                headers(("x-ratelimit-remaining", "10"), ("ETag", "\"a\"")),
                ["Content-Type: application/json", "x-ratelimit-remaining: 10", "ETag: \"a\""]
            ),
            (
                headers(("Content-Length", "0")),
                ["Content-Type: application/json", "ETag: \"a\"", "x-ratelimit-remaining: 10"]
            ),
        ]
        for (notModified, expected) in cases {
            #expect(
                CachePolicy.merge(stored: stored, notModified: notModified).fields.map { "\($0.name): \($0.value)" }
                    == expected)
        }
        let twice = headers(("etag", "\"a\""), ("ETag", "\"a\""))
        #expect(CachePolicy.merge(stored: twice, notModified: headers(("ETag", "\"a\""))).fields.count == 1)
        #expect(CachePolicy.merge(stored: stored, notModified: headers()).fields.count == 3)
        // Text equal to the stored value but not its bytes (é composed, then decomposed): the 304's bytes.
        let merged = CachePolicy.merge(
            stored: headers(("X-Name", "caf\u{E9}")), notModified: headers(("X-Name", "cafe\u{301}")))
        #expect(merged["X-Name"].map { Array($0.utf8) } == Array("cafe\u{301}".utf8))
    }

    @Test("cache keys: every credential-looking header name counts")
    func credentialHeaders() {
        for name in [
            "Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "X-Auth-Token", "Api-Key", "X-Session",
            "X-Client-Secret", "x-csrf-token",
        ] {
            #expect(CredentialNames.isCredentialHeader(name), "\(name)")
        }
        for name in ["Accept", "Accept-Language", "User-Agent", "X-GitHub-Api-Version", "Content-Type"] {
            #expect(!CredentialNames.isCredentialHeader(name), "\(name)")
        }
    }

    @Test("ages read as people say them")
    func ages() {
        #expect(CacheStage.describeAge(5) == "5 s")
        #expect(CacheStage.describeAge(600) == "10 min")
        #expect(CacheStage.describeAge(3 * 3600) == "3 h")
        #expect(CacheStage.describeAge(5 * 86400) == "5 days")
    }
}
