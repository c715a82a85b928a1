/// A number of seconds as settings, macros and servers give it (a `Double`), turned into the
/// integers that clocks, libcurl, hiredis and `poll` take, without ever trapping.
///
/// Swift stops the process when a `Double` that is not finite, or too large, becomes an integer
/// (`Int(1e300)`, `Duration.seconds(1e300)`): every such conversion in apimacro goes through here.
/// `longest` is what a setting or a macro may ask for (more is refused with a clear error where
/// the value comes in: `check`); the conversions below clamp into `0...longest`, so a value from
/// anywhere else (a server's header, a sum of two settings) cannot trap either.
public enum Seconds {
    /// The longest wait or deadline accepted anywhere: 1,000,000,000 s (about 31.7 years).
    public static let longest: Double = 1_000_000_000

    /// Why a number is not a span apimacro can wait.
    public enum Problem: Sendable, Equatable {
        /// NaN.
        case notANumber
        /// Below 0.
        case negative
        /// Above `longest` (infinity included).
        case tooLong
    }

    /// Nil when `value` is a number of seconds from 0 to `longest`; otherwise what is wrong.
    public static func check(_ value: Double) -> Problem? {
        if value.isNaN { return .notANumber }
        if value < 0 { return .negative }
        if value > longest { return .tooLong }
        return nil
    }

    /// `value` within `0...longest`: NaN and negatives are 0, infinity is `longest`.
    public static func clamped(_ value: Double) -> Double {
        guard value > 0 else { return 0 }
        return min(value, longest)
    }

    /// A duration as seconds.
    public static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `value` (clamped) as a `Duration`, to the nanosecond.
    public static func duration(_ value: Double) -> Duration {
        .nanoseconds(Int64((clamped(value) * 1e9).rounded(.up)))
    }

    /// `value` (clamped) in whole milliseconds, rounded up: a positive wait never becomes 0.
    public static func milliseconds(_ value: Double) -> Int {
        Int((clamped(value) * 1000).rounded(.up))
    }

    /// `value` (clamped) in whole microseconds, rounded up: a positive wait never becomes 0.
    public static func microseconds(_ value: Double) -> Int {
        Int((clamped(value) * 1_000_000).rounded(.up))
    }

    /// `value` (clamped) in whole seconds, rounded up (for messages: "retry after 3 s").
    public static func whole(_ value: Double) -> Int {
        Int(clamped(value).rounded(.up))
    }

    /// `value` (clamped) as whole seconds and the microseconds after them (a `timeval`).
    public static func secondsAndMicroseconds(_ value: Double) -> (seconds: Int, microseconds: Int) {
        let value = clamped(value)
        let seconds = value.rounded(.down)
        return (Int(seconds), min(Int(((value - seconds) * 1_000_000).rounded(.down)), 999_999))
    }
}
