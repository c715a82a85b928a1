import Foundation

/// Dates as the clients write and read them: in UTC, in the POSIX locale, in a fixed pattern
/// (`yyyy-MM-dd`), whatever the machine's time zone and language.
enum UTCDates {
    /// A formatter for `pattern` in UTC.
    static func formatter(_ pattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter
    }

    /// `epoch` (seconds) written in `pattern`, in UTC.
    static func text(_ epoch: Double, _ pattern: String) -> String {
        formatter(pattern).string(from: Date(timeIntervalSince1970: epoch))
    }
}
