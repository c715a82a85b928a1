import Foundation
import TestSupport
import Testing
import WebAPI

/// RFC 9111 against the loopback server (`/conformance/{name}` answers as each test asks),
/// one test per rule, named after the section it checks.
///
/// `CachePolicyTests` checks the same rules without I/O.
@Suite("the HTTP cache follows RFC 9111 as a private cache")
struct CacheConformanceTests {
    /// `GET /conformance/name` with these response header lines (and other parameters).
    static func request(
        _ name: String, method: String = "GET", status: Int? = nil, _ lines: [String] = [], etag: String? = nil,
        echo: String? = nil, headers: [(String, String)] = []
    ) -> Request {
        var query: [(String, String)] = lines.map { ("h", $0) }
        if let status { query.append(("status", String(status))) }
        if let etag { query.append(("etag", etag)) }
        if let echo { query.append(("echo", echo)) }
        return Request(method, "/conformance/\(name)", query: query, headers: headers, validatesStatus: false)
    }

    static func serial(_ response: Response) -> Int? {
        JSONValue.native(in: response.body, path: ["serial"]) as? Int
    }

    @Test("§4.4 a successful POST, PUT, DELETE or PATCH invalidates the stored GET of its URL")
    func section4_4_unsafeMethodInvalidates() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            for method in ["POST", "PUT", "DELETE", "PATCH"] {
                let name = "inv-\(method.lowercased())"
                let get = Self.request(name, ["Cache-Control: max-age=600"])
                let first = try await client.send(get)
                #expect(try await client.send(get).source == .cacheHit)
                _ = try await client.send(Self.request(name, method: method, ["Cache-Control: max-age=600"]))
                let after = try await client.send(get)
                #expect(after.source == .network, "\(method) must invalidate")
                #expect(Self.serial(after) == (Self.serial(first) ?? 0) + 2)
            }
            // An error answer does not.
            let get = Self.request("inv-error", ["Cache-Control: max-age=600"])
            _ = try await client.send(get)
            _ = try await client.send(Self.request("inv-error", method: "POST", status: 500))
            #expect(try await client.send(get).source == .cacheHit)
        }
    }

    @Test(
        "§4.4 the same-origin Location and Content-Location of the answer are invalidated too, another origin's are not"
    )
    func section4_4_locationInvalidated() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let created = Self.request("loc-created", ["Cache-Control: max-age=600"])
            let described = Self.request("loc-described", ["Cache-Control: max-age=600"])
            let base = cache.loop.server.baseURL
            let prepare = try client.prepare(created)
            _ = try await client.send(created)
            _ = try await client.send(described)
            let post = Self.request(
                "loc-post", method: "POST",
                [
                    "Location: \(prepare.url.replacingOccurrences(of: base, with: ""))",
                    "Content-Location: \(try client.prepare(described).url)",
                ])
            _ = try await client.send(post)
            #expect(try await client.send(created).source == .network)
            #expect(try await client.send(described).source == .network)
        }
    }

    @Test("§5.2.2.2 must-revalidate: a connection failure gives the macro the error, never the stale copy")
    func section5_2_2_2_mustRevalidateNeverStale() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let get = Self.request("must-revalidate", ["Cache-Control: max-age=0, must-revalidate"])
            _ = try await client.send(get)
            cache.loop.server.inject(Array(repeating: .reset, count: 4), path: "/conformance/must-revalidate")
            let error = await apiError { _ = try await client.send(get) }
            #expect(error?.kind == .network, "\(String(describing: error))")
            cache.loop.server.inject(Array(repeating: .status(503), count: 4), path: "/conformance/must-revalidate")
            #expect(try await client.send(get).status == 503)
            #expect(cache.warnings.all.isEmpty)
        }
    }

    @Test("§5.2.2.4 no-cache: a connection failure gives the macro the error, never the stale copy")
    func section5_2_2_4_noCacheNeverStale() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let get = Self.request("no-cache", ["Cache-Control: no-cache"], etag: "v1")
            _ = try await client.send(get)
            #expect(try await client.send(get).source == .revalidated, "stored, and revalidated every time")
            cache.loop.server.inject(Array(repeating: .reset, count: 4), path: "/conformance/no-cache")
            let error = await apiError { _ = try await client.send(get) }
            #expect(error?.kind == .network, "\(String(describing: error))")
        }
    }

    @Test("§4.2.4 --offline serves a stale copy, except one the origin said must be revalidated")
    func section4_2_4_offlineHonoursMustRevalidate() async throws {
        try await withCache { cache in
            let online = cache.client(try cache.store())
            let plain = Self.request("offline-plain", ["Cache-Control: max-age=0"])
            let strict = Self.request("offline-strict", ["Cache-Control: max-age=0, must-revalidate"])
            _ = try await online.send(plain)
            _ = try await online.send(strict)
            let offline = cache.client(try cache.store(offline: true))
            #expect(try await offline.send(plain).source == .stale)
            let error = await apiError { _ = try await offline.send(strict) }
            #expect(error?.kind == .offline, "\(String(describing: error))")
        }
    }

    @Test("§5.3 a malformed Expires, or several, means already expired; RFC 850 and asctime dates are accepted")
    func section5_3_expires() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let now = Date().timeIntervalSince1970
            let date = "Date: \(HTTPDate.format(now))"
            let later = HTTPDate.format(now + 3600)  // e.g. "Sun, 06 Nov 1994 09:49:37 GMT"
            let parts = later.split(separator: " ").map(String.init)  // [Sun,, 06, Nov, 1994, 09:49:37, GMT]
            let malformed = [
                "\(parts[0].dropLast()) \(parts[1]) \(parts[2]) \(parts[3]) \(parts[4]) GMT",  // no comma
                "\(parts[0]) \(parts[1]) \(parts[2]) \(parts[3]) \(parts[4]) UTC",  // not GMT
                "\(parts[0])  \(parts[1]) \(parts[2]) \(parts[3]) \(parts[4]) GMT",  // two spaces
                "\(parts[0]) \(parts[1]) \(parts[2]) \(parts[3]) 1\(parts[4].dropFirst(2)) GMT",  // one-digit hour
            ]
            for (index, expires) in malformed.enumerated() {
                let get = Self.request("expires-bad-\(index)", [date, "Expires: \(expires)"])
                _ = try await client.send(get)
                #expect(try await client.send(get).source != .cacheHit, "\(expires) must read as expired")
            }
            let twice = Self.request("expires-twice", [date, "Expires: \(later)", "Expires: \(later)"])
            _ = try await client.send(twice)
            #expect(try await client.send(twice).source != .cacheHit)
            // The obsolete forms of the same instant are valid.
            let calendar = DateFormats(epoch: now + 3600)
            for (index, expires) in [later, calendar.rfc850, calendar.asctime].enumerated() {
                let get = Self.request("expires-good-\(index)", [date, "Expires: \(expires)"])
                _ = try await client.send(get)
                #expect(try await client.send(get).source == .cacheHit, "\(expires) is a valid date")
            }
        }
    }

    @Test(
        "§4.2.3 current age counts the Date's apparent age; §5.1 Age is sent on answers from the cache and 'Age: 7200, 0' is 7200"
    )
    func section4_2_3_age() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let now = Date().timeIntervalSince1970
            // Dated two hours ago with a one-hour lifetime: stale on arrival.
            let old = Self.request("age-date", ["Date: \(HTTPDate.format(now - 7200))", "Cache-Control: max-age=3600"])
            _ = try await client.send(old)
            #expect(try await client.send(old).source != .cacheHit)
            // Age arrived as a list: its first member counts.
            let listed = Self.request("age-list", ["Age: 7200, 0", "Cache-Control: max-age=3600"])
            _ = try await client.send(listed)
            #expect(try await client.send(listed).source != .cacheHit)
            // A hit carries its Age: at least what it arrived with.
            let aged = Self.request("age-hit", ["Age: 100", "Cache-Control: max-age=3600"])
            _ = try await client.send(aged)
            let hit = try await client.send(aged)
            #expect(hit.source == .cacheHit)
            #expect((hit.headers["Age"].flatMap(Int.init) ?? -1) >= 100, "\(hit.headers["Age"] ?? "no Age")")
        }
    }

    @Test("§3 any final status with explicit freshness is stored (204, 301, 302, 307, 308, 404, 405, 410, 414, 501)")
    func section3_explicitFreshnessStored() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            for status in [204, 301, 302, 307, 308, 404, 405, 410, 414, 501] {
                let get = Self.request("status-\(status)", status: status, ["Cache-Control: max-age=600"])
                _ = try await client.send(get)
                #expect(try await client.send(get).source == .cacheHit, "\(status) with max-age=600")
            }
            #expect(
                cache.loop.server.requests.filter { $0.path.hasPrefix("/conformance/status-") }.count == 10,
                "one request each")
        }
    }

    @Test("§5.2.1 request directives: max-age, max-stale, min-fresh, no-cache from the macro's headers")
    func section5_2_1_requestDirectives() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            func get(_ name: String, _ lines: [String], _ cacheControl: String? = nil) -> Request {
                Self.request(name, lines, headers: cacheControl.map { [("Cache-Control", $0)] } ?? [])
            }
            _ = try await client.send(get("rq-max-age", ["Age: 100", "Cache-Control: max-age=600"]))
            #expect(
                try await client.send(get("rq-max-age", ["Age: 100", "Cache-Control: max-age=600"], "max-age=50"))
                    .source != .cacheHit)
            _ = try await client.send(get("rq-min-fresh", ["Cache-Control: max-age=600"]))
            #expect(
                try await client.send(get("rq-min-fresh", ["Cache-Control: max-age=600"], "min-fresh=3600")).source
                    != .cacheHit)
            #expect(
                try await client.send(get("rq-min-fresh", ["Cache-Control: max-age=600"], "min-fresh=60")).source
                    == .cacheHit)
            _ = try await client.send(get("rq-max-stale", ["Age: 1000", "Cache-Control: max-age=600"]))
            #expect(
                try await client.send(
                    get("rq-max-stale", ["Age: 1000", "Cache-Control: max-age=600"], "max-stale=3600")
                ).source == .stale)
            _ = try await client.send(get("rq-no-cache", ["Cache-Control: max-age=600"]))
            #expect(
                try await client.send(get("rq-no-cache", ["Cache-Control: max-age=600"], "no-cache")).source
                    != .cacheHit)
        }
    }

    @Test("§5.2.1.7 only-if-cached: a stored answer that fits, else 504 without the network")
    func section5_2_1_7_onlyIfCached() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let missing = try await client.send(
                Self.request("oic-missing", headers: [("Cache-Control", "only-if-cached")]))
            #expect(missing.status == 504)
            #expect(cache.loop.requests("/conformance/oic-missing").isEmpty)
            _ = try await client.send(Self.request("oic-stored", ["Cache-Control: max-age=600"]))
            let stored = try await client.send(
                Self.request(
                    "oic-stored", ["Cache-Control: max-age=600"], headers: [("Cache-Control", "only-if-cached")]))
            #expect(stored.status == 200 && stored.source == .cacheHit)
        }
    }

    @Test("§4.1 Vary: several variants of one URL are kept side by side")
    func section4_1_varyKeepsVariants() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            func get(_ language: String) -> Request {
                Self.request(
                    "vary", ["Vary: Accept-Language", "Cache-Control: max-age=600"], echo: "Accept-Language",
                    headers: [("Accept-Language", language)])
            }
            let english = try await client.send(get("en"))
            let french = try await client.send(get("fr"))
            let english2 = try await client.send(get("en"))
            let french2 = try await client.send(get("fr"))
            #expect(
                english2.source == .cacheHit && english2.body == english.body,
                "the French variant must not replace the English one")
            #expect(french2.source == .cacheHit && french2.body == french.body)
        }
    }

    @Test(
        "headers-store-Content-Encoding, headers-store-Transfer-Encoding: a coding apimacro did not ask for arrives as sent, its header stored with it"
    )
    func headersStoreCodings() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            for (name, header) in [
                ("store-ce", "Content-Encoding"), ("store-te", "Transfer-Encoding"),
            ] {
                let value = "\(header)-store-value"
                let get = Self.request(name, ["\(header): \(value)", "Cache-Control: max-age=3600"])
                let first = try await client.send(get)
                #expect(first.status == 200 && first.headers[header] == value, "\(header)")
                #expect(Self.serial(first) == 1, "\(header): the body arrives as sent (JSON, not decoded)")
                let hit = try await client.send(get)
                #expect(hit.source == .cacheHit, "\(header)")
                #expect(hit.headers[header] == value && hit.body == first.body, "\(header)")
            }
        }
    }

    @Test("headers-store-Set-Cookie2: stored like any header (only Set-Cookie is kept out of the cache)")
    func headersStoreSetCookie2() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let get = Self.request("store-cookie2", ["Set-Cookie2: a=b", "Cache-Control: max-age=3600"])
            #expect(try await client.send(get).headers["Set-Cookie2"] == "a=b")
            let hit = try await client.send(get)
            #expect(hit.source == .cacheHit && hit.headers["Set-Cookie2"] == "a=b")
        }
    }

    @Test("Set-Cookie is never stored (secret hygiene): an answer from the cache has none")
    func setCookieStripped() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            let get = Self.request("cookie", ["Set-Cookie: session=cookie-secret-123", "Cache-Control: max-age=600"])
            #expect(try await client.send(get).headers["Set-Cookie"] != nil)
            let hit = try await client.send(get)
            #expect(hit.source == .cacheHit && hit.headers["Set-Cookie"] == nil)
        }
    }
}

/// The obsolete HTTP date forms of one instant, from the IMF-fixdate `HTTPDate.format` makes.
struct DateFormats {
    let rfc850: String
    let asctime: String

    init(epoch: Double) {
        let fixdate = HTTPDate.format(epoch).split(separator: " ").map(String.init)  // Sun, 06 Nov 1994 08:49:37 GMT
        let longDays = [
            "Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday", "Fri": "Friday",
            "Sat": "Saturday", "Sun": "Sunday",
        ]
        let day = String(fixdate[0].dropLast())
        rfc850 = "\(longDays[day] ?? day), \(fixdate[1])-\(fixdate[2])-\(fixdate[3].suffix(2)) \(fixdate[4]) GMT"
        let dayOfMonth = fixdate[1].hasPrefix("0") ? " " + fixdate[1].dropFirst() : fixdate[1]
        asctime = "\(day) \(fixdate[2]) \(dayOfMonth) \(fixdate[4]) \(fixdate[3])"
    }
}
