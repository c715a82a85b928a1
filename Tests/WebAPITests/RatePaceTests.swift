import Testing

@testable import WebAPI

@Suite("RatePace: the local rate limit's bookings")
struct RatePaceTests {
    @Test("starts are booked an interval apart, from now or from the last booking, whichever is later")
    func bookings() {
        let pace = RatePace(rate: 4)
        let now = ContinuousClock.now
        #expect(pace.reserve(now: now) == .zero)
        #expect(pace.reserve(now: now) == .milliseconds(250))
        #expect(pace.reserve(now: now) == .milliseconds(500))
        // Later than every booking: no wait, and the next is an interval after it.
        let later = now + .seconds(10)
        #expect(pace.reserve(now: later) == .zero)
        #expect(pace.reserve(now: later + .milliseconds(100)) == .milliseconds(150))
    }

    @Test("rates are read as N/s, N/min, N/h or a number a second; anything else is nil")
    func parsing() {
        #expect(RatePace.parse("10/s") == 10)
        #expect(RatePace.parse(" 600 / min ") == 10)
        #expect(RatePace.parse("3600/h") == 1)
        #expect(RatePace.parse("2.5") == 2.5)
        for bad in ["", "fast", "0/s", "-1", "10/week", "inf", "nan", "10/"] {
            #expect(RatePace.parse(bad) == nil, "\(bad)")
        }
        #expect(RatePace.describe(10) == "10/s")
        #expect(RatePace.describe(0.5) == "30/min")
        #expect(RatePace.describe(1.0 / 3600) == "1/h")
    }
}

@Suite("Redactor: short secrets")
struct ShortSecretRedactionTests {
    @Test("a secret under 4 characters is redacted as a word of its own, never inside a word; 4 and up anywhere")
    func wholeWords() {
        let redactor = Redactor(secrets: ["ab", "wxyz"])
        #expect(redactor.redact("ab, cab, abc, (ab) ab") == "REDACTED, cab, abc, (REDACTED) REDACTED")
        #expect(redactor.redact("awxyzb") == "aREDACTEDb")
        #expect(redactor.redact(bytes: Array("x=ab&y=abc\u{FF}".utf8)) == Array("x=REDACTED&y=abc\u{FF}".utf8))
        #expect(Redactor(secrets: [""]).secrets.isEmpty)
    }
}
