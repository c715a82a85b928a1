import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import WebAPI

/// A task executor that counts the jobs it is given: each one after the first is a
/// resumption, a hop away from the thread the call was running on and back.
final class CountingExecutor: TaskExecutor, Sendable {
    private let queue = DispatchQueue(label: "apimacro.test.counting")
    private let count = Atomic<Int>(0)

    var jobs: Int { count.load(ordering: .relaxed) }

    func enqueue(_ job: consuming ExecutorJob) {
        count.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Runs `body` as a task on this executor; returns its result and how many jobs it took.
    static func measure<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> (T, jobs: Int) {
        let executor = CountingExecutor()
        let value = try await Task(executorPreference: executor) { try await body() }.value
        return (value, executor.jobs)
    }
}

/// What one call costs in hops and repeated work: a cache hit never leaves the calling
/// thread, a 304 costs no more hops than a plain GET, and what is worked out once per
/// client or per process gives the same answers as working it out per call did.
@Suite("the cost of a call")
struct CallCostTests {
    @Test("a cache hit runs start to end on the calling thread: one job, no hop to the database's queue")
    func hitHasNoHop() async throws {
        try await withCache { cache in
            let client = cache.client(try cache.store())
            _ = try await client.send(Request("GET", "/cache/max-age/600"))
            let (hit, jobs) = try await CountingExecutor.measure {
                try await client.send(Request("GET", "/cache/max-age/600"))
            }
            #expect(hit.source == .cacheHit)
            #expect(jobs == 1)
        }
    }

    @Test("after a 304 the entry's update is one write on the calling thread; the body is kept")
    func refreshHasNoHop() async throws {
        try await withCache { cache in
            let store = try cache.store()
            let http = try #require(store.cache)
            let key = Array(repeating: UInt8(1), count: 32)
            let body = Array("{\"login\":\"octocat\"}".utf8)
            try await http.store(
                HTTPCache.Entry(
                    key: key, target: [2], status: 200, headers: Headers([("ETag", "\"a\"")]), body: body,
                    storedAt: 1000))
            var entry = try #require(try await http.entries(key: key).first)
            entry.headers = Headers([("ETag", "\"a\""), ("Date", "Tue, 24 Nov 2026 00:00:00 GMT")])
            entry.storedAt = 2000
            let (_, jobs) = try await CountingExecutor.measure { [entry] in try await http.refresh(entry) }
            #expect(jobs == 1)
            let (found, readJobs) = try await CountingExecutor.measure { try await http.entries(key: key) }
            #expect(readJobs == 1)
            #expect(found.count == 1 && found[0].storedAt == 2000 && found[0].body == body)
            #expect(found[0].headers["date"] == "Tue, 24 Nov 2026 00:00:00 GMT")
        }
    }

    @Test("a stage with nothing to do is not in the chain: no rate-limit memory nobody reads, no HAR or governor")
    func idleStages() async throws {
        try await withLoopback { loop in
            var configuration = ClientConfiguration(name: "http", baseURL: "")
            configuration.remembersRateLimit = false
            let idle = APIClient(
                configuration: configuration, transport: loop.transport, log: loop.log, redactor: Redactor(secrets: []))
            #expect(!idle.stages.contains { $0 is RateLimitMemoryStage })
            #expect(!idle.stages.contains { $0 is HARRecordStage || $0 is ReplayStage || $0 is GovernorStage })
            let response = try await idle.send(Request("GET", loop.server.baseURL + "/users/octocat"))
            #expect(response.status == 200 && idle.rateLimit == nil)
            let github = APIClient(
                configuration: ClientConfiguration(name: "github", baseURL: loop.server.baseURL),
                transport: loop.transport, log: loop.log, redactor: Redactor(secrets: []))
            #expect(github.stages.contains { $0 is RateLimitMemoryStage })
            _ = try await github.send(Request("GET", "/users/octocat"))
            #expect(github.rateLimit != nil)
        }
    }

    @Test("entry names are HMAC-SHA256 under the HKDF-derived naming key, the same on every call")
    func namesUnchanged() {
        // Worked out with Python's hmac and hashlib (HKDF-SHA256 of RFC 5869, no salt, info
        // "apimacro cache names v1"), so the entries an earlier build wrote are still found.
        let secret = CacheSecret(bytes: (0..<32).map { UInt8($0 * 7 % 256) })
        let expected = [
            (
                "v2\nGET\nhttps://api.github.com/users/octocat\n",
                "3c75a311f1dba6e803b3e1dd801eacb2d296108ec919674c71c9e64e9433051a"
            ),
            ("", "020c48ce9ca63bdb60a654688a31507b9ce84fb58461124914e185ed5595eca9"),
            ("target\nhttps://é.example/ü", "8a9865b06e1f771ebb76a2d7e36308049256ec41a84582dc9ce53254cb3c08bf"),
        ]
        for (text, hex) in expected {
            #expect(secret.name(text).map { String(format: "%02x", $0) }.joined() == hex)
            #expect(secret.name(text).map { String(format: "%02x", $0) }.joined() == hex)
        }
    }

    @Test("header names match without regard to ASCII case, and only ASCII letters fold")
    func headerNames() {
        var headers = Headers([("X-RateLimit-Remaining", "4999"), ("content-type", "application/json")])
        #expect(headers["x-ratelimit-remaining"] == "4999")
        #expect(headers["X-RATELIMIT-REMAINING"] == "4999")
        #expect(headers["Content-Type"] == "application/json")
        #expect(headers["x-ratelimit-remainin"] == nil)
        // '[' and '{' differ by the case bit but are not letters.
        #expect(!Headers.sameName("a[", "a{"))
        #expect(!Headers.sameName("x@", "x`"))
        headers.set("CONTENT-TYPE", "text/plain")
        #expect(headers.values("content-type") == ["text/plain"])
        headers.remove("Absent")
        #expect(headers.fields.count == 2)
    }

    @Test("long header names match eight bytes at a time as they did byte by byte")
    func longHeaderNames() {
        #expect(Headers.sameName("X-RateLimit-Remaining", "x-ratelimit-remaining"))
        #expect(Headers.sameName("x-ratelimit-remaining", "x-ratelimit-remaining"))
        #expect(!Headers.sameName("x-ratelimit-limit", "x-ratelimit-reset"))
        #expect(!Headers.sameName("x-ratelimit-limit", "x-ratelimit-limiu"))
        // Bytes that differ by the case bit but are not letters, in a whole word and in the tail.
        #expect(!Headers.sameName("abcdefg[-tail", "ABCDEFG{-tail"))
        #expect(!Headers.sameName("abcdefgh-tail@", "ABCDEFGH-TAIL`"))
        #expect(!Headers.sameName("x-\u{c4}bcdefgh", "x-\u{e4}bcdefgh"))
        #expect(Headers.sameName("x-\u{e4}BCDEFGH", "x-\u{e4}bcdefgh"))
        // The same names in every case, all lengths from 1 to 40: as the byte-by-byte rule says.
        let letters = Array("Content-Type_X-Custom-Header-With-Length".utf8)
        for length in 1...letters.count {
            let name = String(decoding: letters[0..<length], as: UTF8.self)
            #expect(Headers.sameName(name, name.lowercased()))
            #expect(Headers.sameName(name.uppercased(), name.lowercased()))
            var changed = Array(name.lowercased().utf8)
            changed[length - 1] = changed[length - 1] == UInt8(ascii: "z") ? UInt8(ascii: "y") : UInt8(ascii: "z")
            #expect(!Headers.sameName(name, String(decoding: changed, as: UTF8.self)))
        }
    }

    @Test("Cache-Control is read from its bytes as it was from its characters: case, blanks, quotes, repeats")
    func directives() {
        let headers = Headers([
            ("Cache-Control", " Private ,\tMAX-AGE = \"600\" ,, no-cache, max-stale="),
            ("cache-control", "max-age=5, must-revalidate, community=\"UCI\""),
        ])
        #expect(
            CachePolicy.directives(headers) == [
                "private": "", "max-age": "600", "no-cache": "", "max-stale": "", "must-revalidate": "",
                "community": "UCI",
            ])
        #expect(CachePolicy.directives(Headers([("Content-Type", "text/plain")])).isEmpty)
        #expect(CachePolicy.freshnessLifetime(headers) == 600)
    }

    @Test("a URL's scheme is read from its bytes as it was from its characters, a joined colon included")
    func schemeFromBytes() {
        let urls = [
            "http://x", "HTTPS://x/y", "Http+Unix://%2Fsock/", "file:///etc/passwd", "a.b-c+9:rest", "1http://x",
            ":x", "nocolon", "", "x:", "ht tp://x", "é://x", "h\u{301}ttp://x", "http:\u{301}//x", "http:é",
            "\u{600}:x", "http\r\n://x", "mailto:a@b", "javascript:alert(1)", "HTTP:", "ftp:\u{200D}x",
        ]
        for url in urls {
            #expect(SchemeRule.scheme(of: url) == SchemeRule.schemeByCharacters(of: url), "\(url.debugDescription)")
        }
        #expect(SchemeRule.scheme(of: "HTTPS://x") == "https" && SchemeRule.scheme(of: "http:\u{301}//x") == nil)
    }

    @Test("the rate-limit fields are read in one pass as five lookups read them: any case, the first of each")
    func rateLimitInOnePass() {
        func lookedUp(_ headers: Headers) -> RateLimitInfo? {
            guard
                headers["x-ratelimit-limit"] != nil || headers["x-ratelimit-remaining"] != nil
                    || headers["x-ratelimit-reset"] != nil
            else { return nil }
            var info = RateLimitInfo(headers: Headers([("x-ratelimit-reset", "0")]))
            info?.limit = headers["x-ratelimit-limit"].flatMap { Int($0) }
            info?.remaining = headers["x-ratelimit-remaining"].flatMap { Int($0) }
            info?.reset = headers["x-ratelimit-reset"].flatMap { Int($0) }
            info?.used = headers["x-ratelimit-used"].flatMap { Int($0) }
            info?.resource = headers["x-ratelimit-resource"]
            return info
        }
        let cases = [
            Headers([
                ("X-RateLimit-Limit", "5000"), ("x-ratelimit-remaining", "4999"), ("X-RATELIMIT-RESET", "1700000000"),
                ("X-RateLimit-Used", "1"), ("X-RateLimit-Resource", "core"),
            ]),
            Headers([("x-ratelimit-reset", "9"), ("x-ratelimit-reset", "10"), ("x-ratelimit-limit", "x")]),
            Headers([("x-ratelimit-limiT", "7"), ("x-ratelimit-rsset", "3"), ("x-ratelimit-usedX", "2")]),
            Headers([("Content-Type", "application/json"), ("x-ratelimit-used", "3")]),
            Headers([
                ("x-ratelimit-remaining", "0"), ("x-github-request-id", "A:B"), ("x-ratelimit-resource", "search"),
            ]),
        ]
        for headers in cases {
            #expect(RateLimitInfo(headers: headers) == lookedUp(headers), "\(headers.fields)")
        }
    }

    @Test("a redactor works out its secrets' encoded forms once and redacts the same as before")
    func redactorForms() {
        let redactor = Redactor(secrets: ["tok en/+=", "plain-secret"])
        #expect(redactor.redact("a tok en/+= b tok%20en%2F%2B%3D c plain-secret") == "a REDACTED b REDACTED c REDACTED")
        #expect(
            redactor.redactURL("https://h.example/p/plain-secret?access_token=abc&x=1")
                == "https://h.example/p/REDACTED?access_token=REDACTED&x=1")
        #expect(redactor.redactURL("https://TOKEN@h.example/") == "https://REDACTED@h.example/")
        #expect(redactor.redactURL("https://h.example/users/octocat") == "https://h.example/users/octocat")
    }
}
