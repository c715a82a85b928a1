import Platform

/// What one call asks of the HTTP cache (`cache=` on a client call or `apimacro.request`,
/// `apimacro api --cache`), over the headers' own rules (`CachePolicy`).
public enum CacheChoice: Sendable, Equatable {
    /// Keep and serve the answer for this many seconds whatever its headers say: this
    /// process's cache only (never the shared tier), keyed by the credential like every entry.
    case keep(Double)
    /// Do not serve a stored answer; store the new one (a stored copy may be revalidated).
    case refresh
    /// Answer from the cache, a stale copy too, or fail with `OfflineError`; nothing is sent.
    case onlyIfCached
    /// Neither read nor write the cache.
    case off

    /// The choice in force for requests made while it is bound (`$current.withValue`): the
    /// client bindings bind a call's `cache=` around the call, so every request it makes
    /// (a page iterator's too, which captures it) carries it.
    @TaskLocal public static var current: CacheChoice?

    /// `"1h"`, `"30m"`, `"2d"`, `"90s"`, `"3600"`, `"refresh"`, `"only-if-cached"`; nil for
    /// anything else.
    public static func parse(_ text: String) -> CacheChoice? {
        let trimmed = text.trimmingWhitespace().lowercased()
        switch trimmed {
        case "refresh": return .refresh
        case "only-if-cached": return .onlyIfCached
        default: return seconds(trimmed).map { .keep($0) }
        }
    }

    /// A span such as `1h`, `30m`, `2d`, `45s` or plain seconds (`3600`), greater than 0.
    public static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var digits = Substring(text)
        var unit = 1.0
        if let last = text.last, let factor = units[last] {
            digits = text.dropLast()
            unit = factor
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Double(digits), number.isFinite,
            number > 0, number * unit <= Seconds.longest
        else { return nil }
        return number * unit
    }

    /// What `-v` calls the rule: `cache="1h"`, `cache="refresh"`, `cache="only-if-cached"`, `cache=False`.
    public var rule: String {
        switch self {
        case .keep(let seconds): "cache=\"\(Self.describe(seconds))\""
        case .refresh: "cache=\"refresh\""
        case .onlyIfCached: "cache=\"only-if-cached\""
        case .off: "cache=False"
        }
    }

    static func describe(_ seconds: Double) -> String {
        for (unit, size) in [("d", 86400.0), ("h", 3600), ("m", 60)] where seconds >= size {
            let count = seconds / size
            if count == count.rounded() { return "\(Int(count))\(unit)" }
        }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }

    /// What a `cache=` value may be, for error messages.
    public static let accepted =
        "a duration such as \"1h\", \"30m\", \"2d\" or seconds as an int, \"refresh\", \"only-if-cached\", True or False"
}
