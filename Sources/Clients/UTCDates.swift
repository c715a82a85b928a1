#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Dates as the clients write and read them: in UTC, in fixed patterns (`yyyy-MM-dd`), whatever
/// the machine's time zone and language; computed on the proleptic Gregorian calendar, without
/// `DateFormatter` (Foundation proper, which brings ICU's data).
public enum UTCDates {
    /// The civil date and time of `epoch` (seconds, rounded down to the second), in UTC.
    static func fields(_ epoch: Double) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let seconds = Int(epoch.rounded(.down))
        let (days, time) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (dayNumber, secondOfDay) = time < 0 ? (days - 1, time + 86_400) : (days, time)
        // Howard Hinnant's civil_from_days: eras of 400 years from 0000-03-01.
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day, secondOfDay / 3600, secondOfDay % 3600 / 60, secondOfDay % 60)
    }

    /// The epoch second of midnight UTC starting `year`-`month`-`day` (Hinnant's days_from_civil).
    static func epoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return (era * 146_097 + dayOfEra - 719_468) * 86_400
    }

    /// `value` in decimal, zero-padded to `width` digits.
    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// `2026-11-26` (`yyyy-MM-dd`).
    public static func day(_ epoch: Double) -> String {
        let date = fields(epoch)
        return "\(padded(date.year, 4))-\(padded(date.month, 2))-\(padded(date.day, 2))"
    }

    /// `2021-10-07 19:07` (`yyyy-MM-dd HH:mm`).
    public static func minute(_ epoch: Double) -> String {
        let date = fields(epoch)
        return day(epoch) + " \(padded(date.hour, 2)):\(padded(date.minute, 2))"
    }

    /// `2020-01-31T23:59:59Z` (`yyyy-MM-dd'T'HH:mm:ss'Z'`, ISO 8601 as `ISO8601DateFormatter`
    /// writes it by default).
    public static func timestamp(_ epoch: Double) -> String {
        let date = fields(epoch)
        return day(epoch) + "T\(padded(date.hour, 2)):\(padded(date.minute, 2)):\(padded(date.second, 2))Z"
    }

    /// The epoch second at which `text` (`yyyy-MM-dd`: four, two and two digits, a real day)
    /// starts in UTC, or nil.
    public static func epoch(ofDay text: String) -> Double? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, zip(parts, [4, 2, 2]).allSatisfy({ $0.count == $1 && $0.allSatisfy(\.isASCII) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            parts.allSatisfy({ $0.allSatisfy(\.isNumber) }), (1...12).contains(month), day >= 1,
            day <= daysIn(month: month, year: year)
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
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date.timeIntervalSince1970 }
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return (try? Date(text, strategy: fractional))?.timeIntervalSince1970
    }
}
