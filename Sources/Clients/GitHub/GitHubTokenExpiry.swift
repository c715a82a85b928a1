public import Platform
import Synchronization
public import WebAPI

/// When the GitHub token in use expires, as GitHub says in the
/// `GitHub-Authentication-Token-Expiration` header of its answers (fine-grained and
/// expiring classic personal access tokens; `2021-10-07 19:07:53 UTC`), and the one warning
/// per run, on stderr, when fewer than 7 days remain.
///
/// A GitHub App's installation token is not watched this way: apimacro makes a new one
/// before it expires (`GitHubAppAuth`), so its expiry is never news.
public final class GitHubTokenExpiry: Sendable {
    /// The header GitHub sends (https://github.blog/changelog/2021-07-26-expiration-options-for-personal-access-tokens/).
    public static let header = "GitHub-Authentication-Token-Expiration"
    /// Fewer days than this left, and the run warns once.
    public static let warningDays = 7

    private let state = Mutex<(expiresAt: Double?, warned: Bool)>((nil, false))
    private let now: @Sendable () -> Double
    private let warn: @Sendable (String) -> Void

    /// - Parameters:
    ///   - now: the clock, epoch seconds.
    ///   - warn: prints one line on stderr.
    public init(
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        warn: @escaping @Sendable (String) -> Void
    ) {
        self.now = now
        self.warn = warn
    }

    /// When the token expires (epoch seconds), as the last answer that said so; nil before one
    /// did (a token that never expires has no header).
    public var expiresAt: Double? { state.withLock { $0.expiresAt } }

    /// Reads the header of `response` (a replayed one says nothing of this run's token).
    @Sendable public func watch(_ response: Response) {
        guard response.source != .replay, let text = response.headers[Self.header],
            let expiresAt = Self.parse(text)
        else { return }
        let remaining = expiresAt - now()
        let warnNow = state.withLock { state -> Bool in
            state.expiresAt = expiresAt
            guard !state.warned, remaining < Double(Self.warningDays) * 86_400 else { return false }
            state.warned = true
            return true
        }
        guard warnNow else { return }
        let when = Self.format(expiresAt)
        warn(
            remaining <= 0
                ? "apimacro: warning: the GitHub token expired on \(when); make a new one (https://github.com/settings/tokens)"
                : "apimacro: warning: the GitHub token expires on \(when), in \(Self.days(remaining)); "
                    + "make a new one before then (https://github.com/settings/tokens)")
    }

    /// `2021-10-07 19:07:53 UTC`, or with a numeric offset (`2021-10-07 19:07:53 +0200`), as
    /// epoch seconds; nil for anything else.
    public static func parse(_ text: String) -> Double? {
        let parts = text.trimmingWhitespace().split(separator: " ")
        guard parts.count == 3 else { return nil }
        let date = parts[0].split(separator: "-").compactMap { Int($0) }
        let time = parts[1].split(separator: ":").compactMap { Int($0) }
        guard date.count == 3, time.count == 3, (1...12).contains(date[1]), (1...31).contains(date[2]),
            (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2]),
            (1970...9999).contains(date[0])
        else { return nil }
        let zone = parts[2]
        var offset = 0
        if zone != "UTC", zone != "GMT" {
            guard zone.count == 5, let sign = zone.first, sign == "+" || sign == "-",
                let hhmm = Int(zone.dropFirst()), hhmm % 100 < 60, hhmm / 100 < 24
            else { return nil }
            offset = (hhmm / 100 * 3600 + hhmm % 100 * 60) * (sign == "-" ? -1 : 1)
        }
        // As a lenient calendar: a day past the month's end runs into the next month.
        let midnight = UTCDates.epoch(year: date[0], month: date[1], day: date[2])
        return Double(midnight + time[0] * 3600 + time[1] * 60 + time[2] - offset)
    }

    /// `2021-10-07 19:07 UTC`.
    static func format(_ epoch: Double) -> String {
        UTCDates.minute(epoch) + " UTC"
    }

    /// `3 days`, `1 day`, `5 hours`.
    static func days(_ seconds: Double) -> String {
        let days = Int(seconds / 86_400)
        if days >= 1 { return days == 1 ? "1 day" : "\(days) days" }
        let hours = max(1, Int(seconds / 3600))
        return hours == 1 ? "1 hour" : "\(hours) hours"
    }
}
