import Testing

@testable import WebAPI

/// `CachePolicy.merged`: nil (the stored headers kept as they are, nothing re-sealed) only when a
/// 304's merge would give them back byte for byte, checked against a merge written plainly here.
@Suite("a 304's merge check")
struct CacheMergeCheckTests {
    /// RFC 9111 §3.2 as plainly as it reads: the 304's fields, less those describing the body,
    /// replace every stored field of their names (any case).
    static func plainMerge(_ stored: [(String, String)], _ notModified: [(String, String)]) -> [(String, String)] {
        let bodyFields: Set = [
            "content-length", "content-encoding", "transfer-encoding", "content-range", "set-cookie",
        ]
        let fresh = notModified.filter { !bodyFields.contains($0.0.lowercased()) }
        let names = Set(fresh.map { $0.0.lowercased() })
        return stored.filter { !names.contains($0.0.lowercased()) } + fresh
    }

    static func sameBytes(_ a: [(String, String)], _ b: [(String, String)]) -> Bool {
        a.count == b.count
            && zip(a, b).allSatisfy { Array($0.0.utf8) == Array($1.0.utf8) && Array($0.1.utf8) == Array($1.1.utf8) }
    }

    static let storedLists: [[(String, String)]] = [
        [("Content-Type", "application/json"), ("ETag", "\"a\""), ("X-RateLimit-Remaining", "10")],
        [("ETag", "\"a\""), ("X-RateLimit-Remaining", "10")],
        [("etag", "\"a\""), ("ETag", "\"a\""), ("X-RateLimit-Remaining", "10")],
        [("Content-Length", "5"), ("ETag", "\"a\"")],
        [("ETag", "\"a\""), ("Content-Length", "5")],
        [("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("ETag", "\"a\""), ("Date", "Sun, 06 Nov 1994 08:49:37 GMT")],
        [("ETag", "\"e\u{301}\"")],
        [],
    ]

    static let notModifiedLists: [[(String, String)]] = [
        [("ETag", "\"a\""), ("X-RateLimit-Remaining", "10")],
        [("ETag", "\"a\""), ("X-RateLimit-Remaining", "9")],
        [("etag", "\"a\""), ("X-RateLimit-Remaining", "10")],
        [("ETag", "\"a\"")],
        [("X-RateLimit-Remaining", "10")],
        [("ETag", "\"a\""), ("Content-Length", "5")],
        [("Content-Length", "5")],
        [("Date", "Sun, 06 Nov 1994 08:49:37 GMT")],
        [("ETag", "\"\u{e9}\"")],
        [("ETag", "\"e\u{301}\"")],
        [],
    ]

    @Test("nil only when the merge gives the stored fields back byte for byte; otherwise the merge")
    func mergedOrNil() {
        var kept = 0
        for stored in Self.storedLists {
            for notModified in Self.notModifiedLists {
                let merged = CachePolicy.merged(stored: Headers(stored), notModified: Headers(notModified))
                let plain = Self.plainMerge(stored, notModified)
                if let merged {
                    let fields = merged.fields.map { ($0.name, $0.value) }
                    #expect(Self.sameBytes(fields, plain), "\(stored) + \(notModified)")
                } else {
                    kept += 1
                    #expect(Self.sameBytes(stored, plain), "kept \(stored) after \(notModified)")
                }
                let whole = CachePolicy.merge(stored: Headers(stored), notModified: Headers(notModified))
                #expect(Self.sameBytes(whole.fields.map { ($0.name, $0.value) }, plain))
            }
        }
        #expect(kept >= 4, "the check keeps the stored headers for 304s that repeat them")
    }
}
