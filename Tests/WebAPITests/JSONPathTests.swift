import Testing
import WebAPI

/// `JSONPath` reads fields of a server's body with Foundation; a body of more than
/// `JSONPath.maxValues` values is not decoded at all.
@Suite("JSONPath: small fields of bodies, and no huge decode")
struct JSONPathTests {
    /// `{"message": "m", "items": [{}, …]}` with `count` empty objects.
    static func envelope(items count: Int, padding: String = "") -> [UInt8] {
        Array(
            (#"{"message": "m\#(padding)", "items": ["# + Array(repeating: "{}", count: count).joined(separator: ",")
                + "]}").utf8)
    }

    @Test("a body within maxValues is read; one past it is not decoded (nil, as for a body that is not JSON)")
    func boundedDecode() {
        // Two keys, two values, then the items: 4 + items values.
        #expect(JSONPath.string(in: Self.envelope(items: JSONPath.maxValues - 4), path: ["message"]) == "m")
        #expect(JSONPath.string(in: Self.envelope(items: JSONPath.maxValues - 3), path: ["message"]) == nil)
        let nested = Array(("[" + Array(repeating: #"{"a": [1, {}]}"#, count: 2000).joined(separator: ", ") + "]").utf8)
        #expect(
            JSONPath.value(in: nested, path: ["1999", "a", "0"]) != nil,
            "2,000 items × 5 values (itself, a, [, 1, {}): 10,000, just within")
    }

    @Test("commas, colons and brackets inside strings (escaped quotes too) are not values")
    func stringsAreNotCounted() {
        let padding = String(repeating: #"[{,:}] \" "#, count: JSONPath.maxValues)
        #expect(
            JSONPath.string(in: Self.envelope(items: 3, padding: padding), path: ["message"])?.count == 1
                + padding.count - JSONPath.maxValues)
    }
}
