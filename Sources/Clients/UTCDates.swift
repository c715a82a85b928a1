import Platform
import WebAPI

/// Dates as the clients write and read them: in UTC, in fixed patterns (`yyyy-MM-dd`).
///
/// Whatever the machine's time zone and language. Written through WebAPI's `UTCDateText` (ICU's text,
/// computed); read here, on the proleptic Gregorian calendar, without `DateFormatter`.
public enum UTCDates {
    /// `2026-11-26` (`yyyy-MM-dd`) for `epoch` (seconds).
    public static func day(_ epoch: Double) -> String {
        UTCDateText.day(Date(timeIntervalSince1970: epoch))
    }

    /// `2021-10-07 19:07` (`yyyy-MM-dd HH:mm`) for `epoch` (seconds).
    public static func minute(_ epoch: Double) -> String {
        let text = timestamp(epoch)  // 2021-10-07T19:07:53Z
        return "\(text.prefix(10)) \(text.dropFirst(11).prefix(5))"
    }

    /// `2020-01-31T23:59:59Z` (`yyyy-MM-dd'T'HH:mm:ss'Z'`, `ISO8601DateFormatter`'s default).
    public static func timestamp(_ epoch: Double) -> String {
        UTCDateText.iso8601(Date(timeIntervalSince1970: epoch), milliseconds: false)
    }

    /// The year and month of `epoch` (seconds) in UTC.
    static func month(of epoch: Double) -> (year: Int, month: Int) {
        let parts = day(epoch).split(separator: "-")
        return (parts.first.flatMap { Int($0) } ?? 1970, parts.dropFirst().first.flatMap { Int($0) } ?? 1)
    }

    /// The epoch second of midnight UTC starting `year`-`month`-`day` (Howard Hinnant's
    /// days_from_civil); a day past the month's end runs into the next month, as a lenient
    /// calendar's does.
    static func epoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return (era * 146_097 + dayOfEra - 719_468) * 86_400
    }

    /// The epoch second at which `text` (`yyyy-MM-dd`: four, two and two ASCII digits, a real
    /// day) starts in UTC, or nil.
    public static func epoch(ofDay text: String) -> Double? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, zip(parts, [4, 2, 2]).allSatisfy({ $0.utf8.count == $1 }),
            parts.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        return Double(epoch(year: year, month: month, day: day))
    }

    /// How many days `month` of `year` has.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `2020-01-31T23:59:59Z` (or with an offset, `+02:00`, or with fractional seconds) as epoch
    /// seconds, as `ISO8601DateFormatter` read it with its default options and then with
    /// fractional seconds; nil when it is neither.
    public static func epoch(iso8601 text: String) -> Double? {
        UTCDateText.parseISO8601(text)?.timeIntervalSince1970
    }
}
