import Testing

@testable import WebAPI

/// Issue 24: a `Double` that became an integer unchecked stopped the process (`Int(1e300)`,
/// `Duration.seconds(1e300)`); `Seconds` is the one conversion, and never traps.
@Suite("Seconds: every wait becomes an integer without trapping")
struct SecondsTests {
    static let hostile: [Double] = [
        .nan, -.nan, .infinity, -.infinity, 1e300, -1e300, .greatestFiniteMagnitude, 1e19, 9.3e18, -0.0,
        .leastNonzeroMagnitude,
    ]

    @Test("check: NaN, negative and past the longest (1e9 s) are refused; 0 to 1e9 are not")
    func check() {
        #expect(Seconds.check(.nan) == .notANumber)
        #expect(Seconds.check(-1) == .negative)
        #expect(Seconds.check(-.infinity) == .negative)
        #expect(Seconds.check(1e300) == .tooLong)
        #expect(Seconds.check(.infinity) == .tooLong)
        #expect(Seconds.check(1_000_000_000.001) == .tooLong)
        for fine in [0, 0.001, 2.5, 30, 86_400 * 366, 1_000_000_000] as [Double] { #expect(Seconds.check(fine) == nil) }
    }

    @Test("every conversion of a hostile value stays within 0 and the longest wait", arguments: hostile)
    func conversions(value: Double) {
        let clamped = Seconds.clamped(value)
        #expect(clamped >= 0 && clamped <= Seconds.longest)
        #expect(Seconds.duration(value) >= .zero && Seconds.duration(value) <= .seconds(1_000_000_000))
        #expect((0...1_000_000_000_000).contains(Seconds.milliseconds(value)))
        #expect((0...1_000_000_000).contains(Seconds.whole(value)))
        let (seconds, microseconds) = Seconds.secondsAndMicroseconds(value)
        #expect((0...1_000_000_000).contains(seconds) && (0..<1_000_000).contains(microseconds))
    }

    @Test("ordinary values convert exactly; a positive wait never rounds down to nothing")
    func ordinary() {
        #expect(Seconds.duration(2.5) == .milliseconds(2500))
        #expect(Seconds.milliseconds(0.0001) == 1)
        #expect(Seconds.milliseconds(30) == 30_000)
        #expect(Seconds.whole(2.1) == 3)
        #expect(Seconds.secondsAndMicroseconds(2.25) == (2, 250_000))
        #expect(Seconds.clamped(.infinity) == Seconds.longest && Seconds.clamped(.nan) == 0)
    }

    @Test("APIMACRO_MAX_RATE=1e-300 is a pace of the longest wait, not a trap; a huge rate is 1 µs; 600 is 600")
    func pace() {
        #expect(GovernorLimits(maxRate: 1e-300).paceMicroseconds == 1_000_000_000_000_000)
        #expect(GovernorLimits(maxRate: 1e300).paceMicroseconds == 1)
        #expect(GovernorLimits(maxRate: 4).paceMicroseconds == 250_000)
        // Whole milliseconds made 600 a second a 2 ms pace (500 a second) and 4,000 a second 1,000.
        #expect(GovernorLimits(maxRate: 600).paceMicroseconds == 1667)
        #expect(GovernorLimits(maxRate: 4000).paceMicroseconds == 250)
        #expect(GovernorLimits().paceMicroseconds == 0)
        #expect(Seconds.microseconds(1e300) == 1_000_000_000_000_000 && Seconds.microseconds(.nan) == 0)
    }

    @Test("a cached copy's age and a date far away are described, not trapped on")
    func describedAges() {
        #expect(CacheStage.describeAge(1e300) == "11574 days")
        #expect(CacheStage.describeAge(.nan) == "0 s")
        #expect(HTTPDate.format(1e300) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(.nan) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
