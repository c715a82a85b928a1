public import Platform
import Synchronization

/// Meta's published schedule of Graph API versions: the day each stops being available, from
/// the "Available Graph API versions" table of https://developers.facebook.com/docs/graph-api/changelog
/// (read 2026-11-29).
///
/// A version past its end is refused, naming the day it ended and the current default; one within 90
/// days of its end earns a warning. So the floor moves with the calendar, not with a release; a version
/// the table does not list (a newer one, or one whose end Meta has not set yet) is accepted.
public enum GraphVersionSchedule {
    /// The last day of each version, by its major number (`21`: v21.0), as Meta lists it.
    public static let ends: [Int: String] = [
        15: "2024-11-20", 16: "2025-05-14", 17: "2025-09-12", 18: "2026-01-26", 19: "2026-05-21",
        20: "2026-09-24", 21: "2027-01-21", 22: "2027-05-20", 23: "2027-10-08", 24: "2028-02-18",
        25: "2028-07-29",
    ]

    /// How long before its end a version earns a warning.
    public static let warningDays = 90

    /// `day` (YYYY-MM-DD) as the epoch second it ends (the next midnight UTC).
    public static func end(of day: String) -> Double? {
        UTCDates.epoch(ofDay: day).map { $0 + 86_400 }
    }

    /// Why version `number` may no longer be used at `now` (epoch seconds), or nil.
    public static func ended(_ number: Int, now: Double = Date().timeIntervalSince1970) -> String? {
        guard let day = ends[number], let end = end(of: day), now >= end else { return nil }
        return "Graph API v\(number).0 ended on \(day) (Meta's published schedule); use the current default "
            + "\(InstagramGraphConfiguration.defaultAPIVersion), or unset APIMACRO_INSTAGRAM_API_VERSION"
    }

    private static let warned = Atomic<Bool>(false)

    /// Prints `ending`'s warning for the version `text` (`v21.0`) with `warn`, once per process.
    public static func warnOnce(version text: String, warn: @Sendable (String) -> Void) {
        guard let number = InstagramGraphConfiguration.versionNumber(text), let warning = ending(number),
            !warned.exchange(true, ordering: .relaxed)
        else { return }
        warn(warning)
    }

    /// The warning version `number` earns at `now` within `warningDays` of its end, or nil.
    public static func ending(_ number: Int, now: Double = Date().timeIntervalSince1970) -> String? {
        guard let day = ends[number], let end = end(of: day), now < end,
            end - now <= Double(warningDays) * 86_400
        else { return nil }
        let days = Int(((end - now) / 86_400).rounded(.up))
        return "apimacro: warning: instagram: Graph API v\(number).0 ends on \(day), in \(days) day"
            + "\(days == 1 ? "" : "s") (Meta's published schedule); move to the current default "
            + "\(InstagramGraphConfiguration.defaultAPIVersion) before then (APIMACRO_INSTAGRAM_API_VERSION)"
    }
}
