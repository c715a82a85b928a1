import Foundation
import Testing

@testable import WebAPI

/// `UTCDateText` writes what Foundation's ICU formatters wrote, rounding included; and
/// `Retry-After` dates are read by `HTTPDate` where a lenient `DateFormatter` read them.
@Suite("UTC dates without Foundation's formatters")
struct UTCDateTextTests {
    /// 1970, 2001 (Foundation's reference date), now-ish, and the millisecond edges ICU rounds.
    static let epochs: [Double] = [
        0, 1, -1, -0.5, 0.4999, -86_401, 978_307_200, 1_445_412_480, 1_445_412_480.123456, 1_445_412_480.9999,
        1_445_412_480.0005, 1_445_412_480.0015, 1_445_412_480.0025, 1_445_412_480.0035, 1_000_000_000.9995,
        1_700_000_000.4995, 1_700_000_000.5005, 1_700_000_000.1234999, 1_709_164_800, 1_709_251_199.9996,
        -0.0005, -0.0015, -0.0025, 0.0025, 0.0035, 1.0005, -1.0005, 4_102_444_800, 951_782_400,
        -12_219_292_800, 253_402_300_799, 253_402_300_800,
    ]

    @Test("iso8601 is ISO8601DateFormatter's text, with and without milliseconds", arguments: epochs)
    func iso8601(_ epoch: Double) {
        let date = Date(timeIntervalSince1970: epoch)
        let withMilliseconds = ISO8601DateFormatter()
        withMilliseconds.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(UTCDateText.iso8601(date) == withMilliseconds.string(from: date))
        #expect(UTCDateText.iso8601(date, milliseconds: false) == ISO8601DateFormatter().string(from: date))
    }

    @Test("many dates of this century round as ICU does")
    func sampled() {
        let withMilliseconds = ISO8601DateFormatter()
        withMilliseconds.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // A fixed walk (no randomness): odd steps through microseconds across 2000–2030.
        var epoch = 946_684_800.000_123
        while epoch < 1_900_000_000 {
            let date = Date(timeIntervalSince1970: epoch)
            #expect(UTCDateText.iso8601(date) == withMilliseconds.string(from: date), "\(epoch)")
            epoch += 3_333_333.333_777
        }
    }

    @Test("day is a DateFormatter's yyyy-MM-dd in UTC", arguments: epochs)
    func day(_ epoch: Double) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let date = Date(timeIntervalSince1970: epoch)
        #expect(UTCDateText.day(date) == formatter.string(from: date))
    }

    @Test(
        "parseISO8601 reads what ISO8601DateFormatter read, fraction or none",
        arguments: [
            "2015-10-21T07:28:00.123Z", "2015-10-21T07:28:00Z", "2015-10-21T07:28:00.1Z", "2015-10-21T07:28:00+02:00",
            "2015-10-21T07:28:00.5+0200", "2015-10-21T07:28:00.123z", "2024-02-29T23:59:59.999Z",
        ])
    func parse(_ text: String) throws {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let foundation = try #require(withFraction.date(from: text) ?? ISO8601DateFormatter().date(from: text))
        let ours = try #require(UTCDateText.parseISO8601(text))
        #expect(abs(ours.timeIntervalSince1970 - foundation.timeIntervalSince1970) < 0.000_001)
    }

    @Test(
        "parseISO8601: what is no date and time stays none",
        arguments: ["", "2015-10-21", "2015-10-21 07:28:00Z", "2015-10-21T07:28:00", "20151021T072800Z", "yesterday"])
    func notParsed(_ text: String) {
        #expect(UTCDateText.parseISO8601(text) == nil)
    }

    /// The `Retry-After` forms a server sends (RFC 9110's three), read as the lenient
    /// `DateFormatter` read them, at the same second.
    @Test(
        "Retry-After: an HTTP date waits as long as before",
        arguments: [
            "Wed, 21 Oct 2015 07:28:00 GMT", "Thu, 01 Jan 2026 00:00:00 GMT", " Wed, 21 Oct 2015 07:28:00 GMT ",
            "Sun, 29 Nov 2026 11:00:00 GMT",
        ])
    func retryAfter(_ text: String) throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let now = 1_445_400_000.0
        let before = try #require(formatter.date(from: text)).timeIntervalSince1970
        #expect(
            RateLimitPolicy.seconds(retryAfter: text, now: now)
                == min(max(0, before - now), RateLimitPolicy.longestWait))
    }

    /// What ICU's lenient parser also took and the strict reader does not (no server sends
    /// these; RFC 9110 asks for GMT and two-digit days): no wait from the header, as for any
    /// value that is not a date.
    @Test(
        "Retry-After: a date in another zone or spelling is not read",
        arguments: [
            "Wed, 21 Oct 2015 07:28:00 UTC", "Wed, 21 Oct 2015 07:28:00 +0000", "Wed, 1 Oct 2015 07:28:00 GMT",
            "wed, 21 oct 2015 07:28:00 gmt", "Wed, 21 October 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:28:00 PST",
        ])
    func retryAfterLenient(_ text: String) {
        #expect(RateLimitPolicy.seconds(retryAfter: text, now: 1_445_400_000) == nil)
    }

    @Test("Retry-After: RFC 9110's obsolete forms are read too")
    func retryAfterObsolete() {
        let now = 1_445_400_000.0
        #expect(RateLimitPolicy.seconds(retryAfter: "Wednesday, 21-Oct-15 07:28:00 GMT", now: now) == 12_480)
        #expect(RateLimitPolicy.seconds(retryAfter: "Wed Oct 21 07:28:00 2015", now: now) == 12_480)
        #expect(RateLimitPolicy.seconds(retryAfter: "120", now: now) == 120)
    }
}
