import PythonBridge
import Testing
import WebAPI

@testable import MacroRuntime

extension EmbeddedPython {
    /// `JSONDecoding` on bodies the HTTP cache hands back again (`StoredBodyTapes`): built from the
    /// tape the first decode scanned, with the one-pass parser's values, budget charges and refusals.
    @Suite("the tapes of bodies the cache hands back", .serialized)
    struct StoredBodyTapesTests {
        /// A document with most kinds of value: nested containers, repeated shapes and strings,
        /// escapes, numbers of each kind the scan reads.
        static let document = Array(
            #"""
            {"login": "octocat", "id": 583231, "score": 1.5, "big": 123456789012345678901234567890,
             "tiny": 5e-324, "site_admin": false, "bio": null, "name": "The \"Octo\" cat \u00e9",
             "repos": [{"name": "a", "stars": 1, "owner": {"login": "octocat", "type": "User"}},
                       {"name": "b", "stars": 2, "owner": {"login": "octocat", "type": "User"}},
                       {"name": "c", "stars": 3, "owner": {"login": "octocat", "type": "User"}}],
             "empty": {}, "none": [], "nested": [[[["deep"]]]], "ünï": "cødé"}
            """#.utf8)

        /// `json.dumps` of what `decoding` gives for `response`, or the `ParseError`'s message.
        static func outcome(_ decoding: JSONDecoding, _ response: Response) throws -> String {
            do {
                let value = try decoding.decode(response, api: "test")
                return try Interpreter.import("json").attribute("dumps").call([value]).str()
            } catch let error as APIError {
                return "refused: \(error.message)"
            }
        }

        static func response(_ body: [UInt8], _ source: Response.Source) -> Response {
            Response(status: 200, headers: Headers(), body: body, url: "http://127.0.0.1:9/x", source: source)
        }

        @Test("a hit and a 304 give the one-pass values, new objects each call, from one scan")
        func sameValuesNewObjects() async throws {
            _ = try await fixture()
            try await onPythonThread {
                let decoding = JSONDecoding()
                let network = try Self.outcome(decoding, Self.response(Self.document, .network))
                #expect(decoding.storedTapes.scans == 0, "a network answer is not remembered")
                for source in [Response.Source.cacheHit, .revalidated] {
                    let cached = Self.response(Self.document, source)
                    let first = try decoding.decode(cached, api: "test")
                    // Changed by the caller: the next call does not see it.
                    try first.setItem("login", PyRef(string: "changed"))
                    let repos = try #require(try first.item("repos"))
                    _ = try repos.callMethod("append", [PyRef(string: "added")])
                    let again = try decoding.decode(cached, api: "test")
                    #expect(again.pointer != first.pointer)
                    #expect(try #require(try again.item("repos")).pointer != repos.pointer)
                    #expect(try Self.outcome(decoding, cached) == network)
                }
                #expect(decoding.storedTapes.scans == 1, "one scan: the same stored body each time")
            }
        }

        @Test("every budget: the same value or refusal from the tape as from the one-pass parser")
        func budgets() async throws {
            _ = try await fixture()
            try await onPythonThread {
                var refused = 0
                for budget in stride(from: 0, through: 8_000, by: 16) {
                    let decoding = JSONDecoding(budget: budget)
                    let network = try Self.outcome(decoding, Self.response(Self.document, .network))
                    let cached = Self.response(Self.document, .revalidated)
                    let scanned = try Self.outcome(decoding, cached)
                    let fromTape = try Self.outcome(decoding, cached)
                    #expect(scanned == network && fromTape == network, "budget \(budget)")
                    if network.hasPrefix("refused: ") { refused += 1 }
                }
                #expect(refused > 10 && refused < 500, "budgets on both sides of the document's need")
            }
        }

        @Test("bounded: a body past 256 KiB or under 256 bytes is not remembered, the least recently used of 17 goes")
        func bounds() async throws {
            _ = try await fixture()
            try await onPythonThread {
                let decoding = JSONDecoding()
                let large = Array("[\(String(repeating: "1,", count: 140_000))1]".utf8)
                let small = Array(#"{"name": "a", "kind": "etag"}"#.utf8)
                for body in [large, large, small, small] {
                    _ = try Self.outcome(decoding, Self.response(body, .cacheHit))
                }
                #expect(decoding.storedTapes.scans == 0)
                let padding = String(repeating: "x", count: StoredBodyTapes.smallest)
                func document(_ number: Int) -> String { "[\(number), \"\(padding)\"]" }
                let responses = (0...StoredBodyTapes.capacity).map {
                    Self.response(Array(document($0).utf8), .cacheHit)
                }
                for response in responses { _ = try Self.outcome(decoding, response) }
                #expect(decoding.storedTapes.scans == StoredBodyTapes.capacity + 1)
                // The newest is remembered; the oldest went and is scanned again.
                #expect(
                    try Self.outcome(decoding, responses[StoredBodyTapes.capacity])
                        == document(StoredBodyTapes.capacity))
                #expect(decoding.storedTapes.scans == StoredBodyTapes.capacity + 1)
                #expect(try Self.outcome(decoding, responses[0]) == document(0))
                #expect(decoding.storedTapes.scans == StoredBodyTapes.capacity + 2)
                // Equal bytes in another array (a body read anew) are scanned for themselves.
                #expect(try Self.outcome(decoding, Self.response(Array(document(0).utf8), .cacheHit)) == document(0))
                #expect(decoding.storedTapes.scans == StoredBodyTapes.capacity + 3)
            }
        }
    }
}
