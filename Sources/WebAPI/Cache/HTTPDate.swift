import Platform

/// HTTP dates (RFC 9110 §5.6.7), strictly: the IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms recipients must
/// accept, RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`).
///
/// Anything else — a missing comma, one-digit hours, extra spaces, a zone other
/// than GMT — is not a date (nil), which the cache reads as "already expired"
/// (RFC 9111 §5.3).
public enum HTTPDate {
    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970, or nil when `text` is not an HTTP date.
    ///
    /// - Parameters:
    ///   - text: a header value such as `Sun, 06 Nov 1994 08:49:37 GMT`.
    ///   - now: for RFC 850's two-digit years (a year more than 50 years ahead is in the past
    ///     century); 0 means the clock's time.
    /// - Returns: the date as seconds since 1970, or nil.
    public static func parse(_ text: String, now: Double = 0) -> Double? {
        let characters = Array(text.utf8)
        guard let comma = characters.firstIndex(of: UInt8(ascii: ",")) else { return asctime(characters) }
        let dayName = String(decoding: characters[..<comma], as: UTF8.self)
        let rest = Array(characters[(comma + 1)...])
        if days.contains(dayName) { return fixdate(rest) }
        if longDays.contains(dayName) { return rfc850(rest, now: now) }
        return nil
    }

    /// Reads an IMF-fixdate after its day name and comma: ` 06 Nov 1994 08:49:37 GMT`.
    private static func fixdate(_ c: [UInt8]) -> Double? {
        guard c.count == 25, c[0] == 0x20, c[3] == 0x20, c[7] == 0x20, c[12] == 0x20, c[21] == 0x20,
            String(decoding: c[22...], as: UTF8.self) == "GMT",
            let day = number(c[1...2]), let month = month(c[4...6]), let year = number(c[8...11]),
            let time = clock(c[13...20])
        else { return nil }
        return epoch(year: year, month: month, day: day, time: time)
    }

    /// Reads an RFC 850 date after its day name and comma: ` 06-Nov-94 08:49:37 GMT`.
    private static func rfc850(_ c: [UInt8], now: Double) -> Double? {
        guard c.count == 23, c[0] == 0x20, c[3] == 0x2D, c[7] == 0x2D, c[10] == 0x20, c[19] == 0x20,
            String(decoding: c[20...], as: UTF8.self) == "GMT",
            let day = number(c[1...2]), let month = month(c[4...6]), let shortYear = number(c[8...9]),
            let time = clock(c[11...18])
        else { return nil }
        // Before year 10000 (a `now` past it, or NaN, is the clock's time): whole years fit an Int.
        let clock = now > 0 && now < 253_402_300_800 ? now : Date().timeIntervalSince1970
        let currentYear = 1970 + Int(clock / 31_556_952)
        var year = (currentYear / 100) * 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return epoch(year: year, month: month, day: day, time: time)
    }

    /// Reads an asctime date: `Sun Nov  6 08:49:37 1994`.
    private static func asctime(_ c: [UInt8]) -> Double? {
        guard c.count == 24, c[3] == 0x20, c[7] == 0x20, c[10] == 0x20, c[19] == 0x20,
            days.contains(String(decoding: c[0...2], as: UTF8.self)),
            let month = month(c[4...6]), let time = clock(c[11...18]), let year = number(c[20...23])
        else { return nil }
        let day: Int?
        if c[8] == 0x20 { day = number(c[9...9]) } else { day = number(c[8...9]) }
        guard let day else { return nil }
        return epoch(year: year, month: month, day: day, time: time)
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard digit >= 0x30, digit <= 0x39 else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        return value
    }

    private static func month(_ name: ArraySlice<UInt8>) -> Int? {
        months.firstIndex(of: String(decoding: name, as: UTF8.self)).map { $0 + 1 }
    }

    /// `HH:MM:SS` as seconds into the day.
    private static func clock(_ c: ArraySlice<UInt8>) -> Int? {
        let start = c.startIndex
        guard c.count == 8, c[start + 2] == 0x3A, c[start + 5] == 0x3A,
            let hours = number(c[start..<(start + 2)]), let minutes = number(c[(start + 3)..<(start + 5)]),
            let seconds = number(c[(start + 6)..<(start + 8)]), hours < 24, minutes < 60, seconds <= 60
        else { return nil }
        return hours * 3600 + minutes * 60 + seconds
    }

    /// Days from civil (Howard Hinnant's algorithm), checked against the month's length.
    private static func epoch(year: Int, month: Int, day: Int, time: Int) -> Double? {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1, day <= lengths[month - 1] else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86400 + time)
    }

    /// The IMF-fixdate for `seconds` since 1970 (for tests and the `Date` of generated answers).
    public static func format(_ seconds: Double) -> String {
        // Years 1 to 9999; NaN is the epoch (nothing here may trap on a value from elsewhere).
        let total = seconds.isNaN ? 0 : Int(min(max(seconds, -62_135_596_800), 253_402_300_799).rounded(.down))
        let days = total >= 0 ? total / 86400 : (total - 86399) / 86400
        let time = total - days * 86400
        let (year, month, day) = UTCDateText.civil(days: days)
        let weekday = ((days % 7) + 7 + 3) % 7  // 1970-01-01 was a Thursday (index 3 from Monday)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(Self.days[weekday]), \(two(day)) \(months[month - 1]) \(year) \(two(time / 3600)):\(two(time % 3600 / 60)):\(two(time % 60)) GMT"
    }
}
