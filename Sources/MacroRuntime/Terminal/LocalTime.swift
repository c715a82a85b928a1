#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Times in the machine's own time zone, through the C library (`TZ`, `/etc/localtime`):
/// FoundationEssentials knows only fixed offsets, its named zones come with ICU.
enum LocalTime {
    /// `2026-11-29 12:33:52`: `epoch` (seconds, rounded down) in local time, as
    /// `ISO8601DateFormatter` wrote it with a full date, a time with colons and a space between.
    static func text(_ epoch: Double) -> String {
        var seconds = time_t(epoch.rounded(.down))
        var fields = tm()
        guard localtime_r(&seconds, &fields) != nil else { return "-" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = String(fields.tm_year + 1900)
        let paddedYear = year.count >= 4 ? year : String(repeating: "0", count: 4 - year.count) + year
        return "\(paddedYear)-\(two(fields.tm_mon + 1))-\(two(fields.tm_mday)) "
            + "\(two(fields.tm_hour)):\(two(fields.tm_min)):\(two(fields.tm_sec))"
    }
}
