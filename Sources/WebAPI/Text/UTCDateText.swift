public import Platform

/// Dates written in UTC as Foundation's ICU formatters wrote them (`ISO8601DateFormatter`, a
/// `DateFormatter` with `yyyy-MM-dd`), computed: those formatters are not in
/// `FoundationEssentials`, and importing `Foundation` links ICU's data (34 MB).
///
/// As ICU does, a date is first rounded to the nearest millisecond (half up), so `.9996` seconds
/// is the next second. The calendar is the Gregorian one throughout, where ICU's turns Julian
/// before 15 October 1582: dates before then (not one the program writes) differ.
/// `UTCDateTextTests` compares them with Foundation's formatters.
public enum UTCDateText {
    /// `2015-10-21T07:28:00.123Z`: `ISO8601DateFormatter` with `[.withInternetDateTime,
    /// .withFractionalSeconds]`; with `milliseconds` false `2015-10-21T07:28:00Z`, its default.
    public static func iso8601(_ date: Date, milliseconds: Bool = true) -> String {
        let (days, millisecond) = split(date)
        let (year, month, day) = civil(days: days)
        let seconds = millisecond / 1000
        var text = "\(four(year))-\(two(month))-\(two(day))T\(two(seconds / 3600)):\(two(seconds % 3600 / 60))"
        text += ":\(two(seconds % 60))"
        if milliseconds {
            let fraction = millisecond % 1000
            text += fraction < 10 ? ".00\(fraction)" : fraction < 100 ? ".0\(fraction)" : ".\(fraction)"
        }
        return text + "Z"
    }

    /// `2015-10-21`: a `DateFormatter` with `yyyy-MM-dd` in UTC and the POSIX locale.
    public static func day(_ date: Date) -> String {
        let (year, month, day) = civil(days: split(date).days)
        return "\(four(year))-\(two(month))-\(two(day))"
    }

    /// An ISO 8601 date and time with a zone (`2015-10-21T07:28:00Z`, `…00.123+02:00`), with or
    /// without fractional seconds; nil for anything else.
    public static func parseISO8601(_ text: String) -> Date? {
        try? Date.ISO8601FormatStyle().parse(text)
    }

    /// Whole days since 1970 and the millisecond of that day, rounded as ICU rounds: from the
    /// seconds since 2001 (Foundation's own), in milliseconds, half up.
    private static func split(_ date: Date) -> (days: Int, millisecond: Int) {
        // Within 273,790 years of 1970, as JavaScript's dates (nothing here may trap on a value
        // from elsewhere; NaN is 1970).
        let since1970 = (date.timeIntervalSinceReferenceDate + 978_307_200) * 1000
        let bounded = since1970.isNaN ? 0 : min(max(since1970, -8.64e15), 8.64e15)
        let total = Int((bounded + 0.5).rounded(.down))
        let days = total >= 0 ? total / 86_400_000 : (total - 86_399_999) / 86_400_000
        return (days, total - days * 86_400_000)
    }

    /// Year, month and day of the day `days` after 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    private static func four(_ n: Int) -> String {
        n < 10 ? "000\(n)" : n < 100 ? "00\(n)" : n < 1000 ? "0\(n)" : "\(n)"
    }
}
