import Crypto
public import Platform
import Synchronization

/// Keeps one process's requests within an API's secondary limits (`SecondaryLimits`), per
/// credential: at most `maxInFlight` in flight, mutating requests one at a time and
/// `writeGap` apart, content-creating ones within their windows, each endpoint within its
/// points a minute, and nothing sent while an answer's "secondary rate limit" wait runs.
///
/// A request asks `admit` before it is sent (it may wait: for a free slot, an event, then for
/// the time the rules name) and says `finish` when its answer came or it failed. A wait longer
/// than `APIMACRO_MAX_WAIT` is `RateLimited` with `isSecondary`, and nothing is sent. The clock
/// and the sleep are injectable, so tests count decisions instead of timing them.
public final class SecondaryPacer: Sendable {
    public let limits: SecondaryLimits
    let now: @Sendable () -> Double
    let sleep: @Sendable (Double) async throws -> Void
    private let lanes = Mutex<[String: Lane]>([:])
    private let counts = Mutex(Report())

    /// What the pacer did so far (tests count these events).
    public struct Report: Sendable, Equatable {
        /// Requests let through.
        public var admitted = 0
        /// Waits for time, by reason (`Wait.Reason.rawValue`).
        public var waits: [String: Int] = [:]
        /// Requests that waited for a slot (another write in flight, or `maxInFlight`).
        public var queued = 0
        /// The most requests in flight at once.
        public var peakInFlight = 0
        /// Requests refused unsent because the wait exceeded `APIMACRO_MAX_WAIT`.
        public var refused = 0
    }

    /// One wait the rules asked for.
    public struct Wait: Sendable, Equatable {
        /// Why.
        public enum Reason: String, Sendable {
            case writeGap = "the gap between writes"
            case contentCreation = "content-creating requests per window"
            case endpointPoints = "the endpoint's points per minute"
            case secondaryAnswer = "an answer that said a secondary limit was exceeded"
        }
        public var seconds: Double
        public var reason: Reason
    }

    /// A request let through: what `finish` must release.
    public struct Ticket: Sendable {
        let key: String
        let mutating: Bool
    }

    /// One credential's state.
    struct Lane {
        var inFlight = 0
        var writing = false
        /// The earliest send of the next mutating request.
        var nextWrite = 0.0
        /// Nothing is sent before this (a secondary-limit answer's wait).
        var holdUntil = 0.0
        /// Send times of content-creating requests, oldest first.
        var created: [Double] = []
        /// Points spent per endpoint in the last minute, oldest first.
        var spent: [String: [(at: Double, points: Int)]] = [:]
        var waiters: [CheckedContinuation<Bool, Never>] = []

        var isIdle: Bool { inFlight == 0 && waiters.isEmpty }
    }

    /// - Parameters:
    ///   - limits: the API's rules.
    ///   - now: the clock, epoch seconds.
    ///   - sleep: waits that many seconds.
    public init(
        limits: SecondaryLimits, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        sleep: @escaping @Sendable (Double) async throws -> Void = RetryPolicy.taskSleep
    ) {
        self.limits = limits
        self.now = now
        self.sleep = sleep
    }

    /// What the pacer did so far.
    public var report: Report { counts.withLock { $0 } }

    /// The lane of `credential`: a keyed digest of its wire forms (never the credential), or
    /// the anonymous lane.
    public static func key(_ credential: Credential?) -> String {
        guard let credential else { return "" }
        let digest = SHA256.hash(data: Data(("secondary pace\n" + credential.wireForms.joined(separator: "\n")).utf8))
        return digest.prefix(12).map { PrintfText.format("%02x", $0) }.joined()
    }

    /// Waits until `exchange` may be sent on the lane `key`, then books it.
    ///
    /// - Parameters:
    ///   - exchange: the request about to be sent.
    ///   - key: its credential's lane (`key(_:)`).
    ///   - maxWait: the longest the rules may hold it (`APIMACRO_MAX_WAIT`).
    ///   - describe: the request as errors name it (method and redacted URL).
    ///   - api: the client's name, for the error.
    ///   - note: told each wait before it starts (`-v`).
    /// - Returns: the ticket to give `finish`.
    /// - Throws: `RateLimited` (secondary) when the wait would exceed `maxWait`; a cancelled sleep.
    public func admit(
        _ exchange: Exchange, key: String, maxWait: Double, describe: String, api: String?,
        note: (Wait) -> Void = { _ in }
    ) async throws -> Ticket {
        let mutating = limits.isMutating(exchange)
        let creates = limits.createsContent(exchange)
        let cost = limits.cost(exchange)
        await take(key, mutating: mutating)
        let ticket = Ticket(key: key, mutating: mutating)
        var waited = 0.0
        do {
            while let wait = book(key, mutating: mutating, creates: creates, cost: cost) {
                guard waited + wait.seconds <= maxWait else {
                    counts.withLock { $0.refused += 1 }
                    throw APIError(
                        .rateLimited,
                        "\(describe): held \(Seconds.whole(waited + wait.seconds)) s by \(api ?? "the API")'s secondary "
                            + "limits (\(wait.reason.rawValue)); APIMACRO_MAX_WAIT is \(SecondsText.format(maxWait)) s "
                            + "(nothing was sent)",
                        api: api, retryAfter: wait.seconds
                    ).secondary()
                }
                counts.withLock { $0.waits[wait.reason.rawValue, default: 0] += 1 }
                note(wait)
                try await sleep(wait.seconds)
                waited += wait.seconds
            }
        } catch {
            finish(ticket, answer: nil)
            throw error
        }
        counts.withLock { $0.admitted += 1 }
        return ticket
    }

    /// Releases `ticket`'s slot after its answer (nil: it failed): the next write may go
    /// `writeGap` later, and an answer that says a secondary limit was exceeded holds the lane
    /// for its `Retry-After` (else `defaultWait`).
    public func finish(_ ticket: Ticket, answer: Response?) {
        let moment = now()
        let held = answer.flatMap { self.hold(after: $0, now: moment) }
        let waiters = lanes.withLock { lanes -> [CheckedContinuation<Bool, Never>] in
            guard var lane = lanes[ticket.key] else { return [] }
            lane.inFlight -= 1
            if ticket.mutating {
                lane.writing = false
                lane.nextWrite = moment + limits.writeGap
            }
            if let held { lane.holdUntil = max(lane.holdUntil, moment + held) }
            let waiters = lane.waiters
            lane.waiters = []
            lanes[ticket.key] = lane
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// How long an answer asks every request of its credential to wait: its `Retry-After`
    /// (else `defaultWait`) when it says a secondary limit was exceeded, at most `longestHold`;
    /// nil otherwise.
    func hold(after answer: Response, now moment: Double) -> Double? {
        guard limits.recognizes(answer) else { return nil }
        let asked =
            answer.headers["retry-after"].flatMap { RateLimitPolicy.seconds(retryAfter: $0, now: moment) }
            ?? limits.defaultWait
        return min(asked, Self.longestHold)
    }

    /// The longest an answer may hold a credential's every request, here and through Redis: an
    /// hour (GitHub asks for minutes; a hostile `Retry-After` of a year must not stop a token's
    /// every process for that long).
    ///
    /// The request that got the answer still raises `RateLimited` with the wait it asked for.
    static let longestHold: Double = 3600

    /// Takes a slot on the lane: one of `maxInFlight`, and the write slot for a mutating
    /// request; waits for a `finish` while none is free.
    private func take(_ key: String, mutating: Bool) async {
        var queued = false
        while true {
            let taken = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let ready = lanes.withLock { lanes -> Bool in
                    var lane = lanes[key] ?? Lane()
                    defer { lanes[key] = lane }
                    guard lane.inFlight < max(1, limits.maxInFlight), !(mutating && lane.writing) else {
                        lane.waiters.append(continuation)
                        return false
                    }
                    lane.inFlight += 1
                    if mutating { lane.writing = true }
                    let inFlight = lane.inFlight
                    counts.withLock { $0.peakInFlight = max($0.peakInFlight, inFlight) }
                    Self.forgetIdle(&lanes, keeping: key)
                    return true
                }
                if ready { continuation.resume(returning: true) }
            }
            if taken { return }
            if !queued {
                queued = true
                counts.withLock { $0.queued += 1 }
            }
        }
    }

    /// At most this many lanes are kept; idle ones beyond it are forgotten (a new token per
    /// renewal must not grow the map without end).
    static let maxLanes = 64

    private static func forgetIdle(_ lanes: inout [String: Lane], keeping key: String) {
        guard lanes.count > maxLanes else { return }
        for (other, lane) in lanes where other != key && lane.isIdle { lanes[other] = nil }
    }

    /// The longest wait the rules name for a request on the lane now, or nil after booking it
    /// (its send time counted against its windows).
    private func book(_ key: String, mutating: Bool, creates: Bool, cost: SecondaryLimits.Cost?) -> Wait? {
        let moment = now()
        return lanes.withLock { lanes -> Wait? in
            var lane = lanes[key] ?? Lane()
            defer { lanes[key] = lane }
            let longest = limits.contentCreation.map(\.seconds).max() ?? 0
            lane.created.removeAll { $0 <= moment - longest }
            for (endpoint, entries) in lane.spent {
                let kept = entries.filter { $0.at > moment - 60 }
                lane.spent[endpoint] = kept.isEmpty ? nil : kept
            }
            var waits: [Wait] = []
            if lane.holdUntil > moment {
                waits.append(Wait(seconds: lane.holdUntil - moment, reason: .secondaryAnswer))
            }
            if mutating, lane.nextWrite > moment {
                waits.append(Wait(seconds: lane.nextWrite - moment, reason: .writeGap))
            }
            if creates {
                for window in limits.contentCreation where window.requests > 0 {
                    let recent = lane.created.filter { $0 > moment - window.seconds }
                    if recent.count >= window.requests {
                        let frees = recent[recent.count - window.requests] + window.seconds
                        waits.append(Wait(seconds: frees - moment, reason: .contentCreation))
                    }
                }
            }
            if let cost, let entries = lane.spent[cost.endpoint] {
                var total = entries.reduce(0) { $0 + $1.points }
                for entry in entries where total + cost.points > cost.perMinute {
                    total -= entry.points
                    if total + cost.points <= cost.perMinute {
                        waits.append(Wait(seconds: entry.at + 60 - moment, reason: .endpointPoints))
                    }
                }
            }
            // Waits under a millisecond are rounding, not rules.
            if let longest = waits.filter({ $0.seconds >= 0.001 }).max(by: { $0.seconds < $1.seconds }) {
                return longest
            }
            if creates { lane.created.append(moment) }
            if let cost { lane.spent[cost.endpoint, default: []].append((moment, cost.points)) }
            return nil
        }
    }
}

extension APIError {
    /// The same error, marked as one of the API's secondary limits.
    func secondary() -> APIError {
        var error = self
        error.isSecondary = true
        return error
    }
}
