import MacroRuntime
import Testing

/// `run --debugpy [HOST:]PORT`: what the address reads as.
@Suite("DebugAddress")
struct DebugAddressTests {
    @Test("a port alone is on 127.0.0.1; a host, or a bracketed IPv6 address, may go before it")
    func reads() throws {
        let plain = try #require(DebugAddress("5678"))
        #expect(plain.host == "127.0.0.1" && plain.port == 5678)
        let any = try #require(DebugAddress("0.0.0.0:5679"))
        #expect(any.host == "0.0.0.0" && any.port == 5679 && any.description == "0.0.0.0:5679")
        let six = try #require(DebugAddress("[::1]:5680"))
        #expect(six.host == "::1" && six.port == 5680 && six.description == "[::1]:5680")
    }

    @Test("no port, a port outside 1-65535, an empty host or junk is refused")
    func refuses() {
        for text in ["", "abc", ":5678", "host:", "host:0", "70000", "[::1]", "[::1]5678", "-1"] {
            #expect(DebugAddress(text) == nil, "\(text)")
        }
    }
}
