import Synchronization

/// At most `rate` sends a second, start to start, for every request that shares it: each send
/// books the next free start (`reserve`) and waits until then.
///
/// A client's local limits (`LocalLimitStage`: a plugin's `[limits] rate`, or
/// `APIMACRO_MAX_RATE` without shared state) hold one per process and API, so `apimacro.map`'s
/// tasks, Python threads and `apimacro api` all count against it. A booked start that is
/// given up (the task cancelled) stays used: the pace only ever errs on the slow side.
public final class RatePace: Sendable {
    /// Sends a second (above 0).
    public let rate: Double
    /// The time between two starts.
    public let interval: Duration
    private let next: Mutex<ContinuousClock.Instant?>

    public init(rate: Double) {
        self.rate = rate
        interval = Seconds.duration(1 / rate)
        next = Mutex(nil)
    }

    /// Books the next free start at or after `now`; returns how long until it.
    public func reserve(now: ContinuousClock.Instant = .now) -> Duration {
        next.withLock { next in
            let start = max(now, next ?? now)
            next = start + interval
            return start - now
        }
    }

    /// "10/s", "600/min", "5000/h" (the first that is whole), else the rate per second.
    public static func describe(_ rate: Double) -> String {
        for (unit, seconds) in [("s", 1.0), ("min", 60.0), ("h", 3600.0)] {
            let count = rate * seconds
            if count >= 1, count == count.rounded() { return "\(Int(count))/\(unit)" }
        }
        return "\(SecondsText.format(rate))/s"
    }

    /// Reads a rate: "10/s", "10/sec", "600/min", "600/m", "5000/h", "5000/hour", or a plain
    /// number of requests a second; nil for anything else, or a rate of 0 or less.
    public static func parse(_ text: String) -> Double? {
        let parts = text.trimmingWhitespace.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map {
            String($0).trimmingWhitespace
        }
        guard let first = parts.first, let count = Double(first), count.isFinite, count > 0 else { return nil }
        guard parts.count == 2 else { return count }
        let seconds: Double
        switch parts[1].lowercased() {
        case "s", "sec", "second": seconds = 1
        case "m", "min", "minute": seconds = 60
        case "h", "hour": seconds = 3600
        default: return nil
        }
        return count / seconds
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
