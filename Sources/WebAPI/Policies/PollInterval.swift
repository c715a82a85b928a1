import Platform
import Synchronization

/// The poll intervals servers asked for (`X-Poll-Interval`, GitHub's events), by URL: a watch
/// (`apimacro run --every`) never starts its next cycle sooner than the longest one a URL of
/// the last cycle came with.
public enum PollInterval {
    private static let seen = Mutex<[String: Double]>([:])

    /// Notes the interval `headers` ask for on `url`, if any (a positive whole number of seconds).
    static func note(_ headers: Headers, url: String) {
        guard let text = headers["X-Poll-Interval"], let seconds = Int(text.trimmingWhitespace()),
            seconds > 0
        else { return }
        seen.withLock { $0[url] = Double(seconds) }
    }

    /// The longest interval asked for since the last call, and forgets them (one cycle's worth).
    public static func take() -> Double? {
        seen.withLock { intervals in
            defer { intervals.removeAll() }
            return intervals.values.max()
        }
    }
}
