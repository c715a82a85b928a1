/// A client's limits held in this process, with no shared state.
///
/// At most `cap.limit` of its requests are in flight, and at most `pace.rate` sends a second
/// (start to start). A request first waits for a place, then for its start; each wait of a millisecond or more is a line
/// in `-v` naming the limit and where it was set.
///
/// The limits come from a plugin's `[limits]` in `plugin.toml`, or from `APIMACRO_MAX_RATE` and
/// `APIMACRO_MAX_CONCURRENCY` when no shared state is configured (with it, `GovernorStage`
/// holds them across processes). The pace and the cap are the process's, one per API
/// (`ExchangeStore.localLimiter`), so `apimacro.map`, Python threads and `apimacro api` share them.
///
/// It sits below the retries (a retry's backoff holds no place, and each attempt is paced)
/// and above the secondary pace, the governor and the credentials; answers from the cache or
/// a recording never reach it.
public struct LocalLimitStage: Stage {
    /// The limits of one API in this process.
    public struct Limiter: Sendable {
        public let pace: RatePace?
        public let cap: ConcurrencyLimit?
        /// Where the rate was set, for `-v` ("plugin.toml [limits] rate", "APIMACRO_MAX_RATE").
        public let rateSource: String
        /// Where the cap was set.
        public let capSource: String

        /// A new pace and cap for `limits`.
        public init(_ limits: LocalLimits) {
            pace = limits.rate.map { RatePace(rate: $0) }
            cap = limits.concurrency.map { ConcurrencyLimit(limit: $0) }
            rateSource = limits.rateSource
            capSource = limits.concurrencySource
        }
    }

    let limiter: Limiter
    let slot: CredentialSlot
    let log: ExchangeLog

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        guard let cap = limiter.cap else { return try await paced(exchange, next: next) }
        let asked = ContinuousClock.now
        return try await cap.withPlace {
            let waited = ContinuousClock.now - asked
            if waited >= .milliseconds(1) {
                log.note(
                    "waited \(SecondsText.format(Seconds.seconds(waited))) s for a place before \(describe(exchange)) "
                        + "(at most \(cap.limit) in flight: \(limiter.capSource))")
            }
            return try await paced(exchange, next: next)
        }
    }

    private nonisolated(nonsending) func paced(_ exchange: Exchange, next: Next) async throws -> Response {
        if let pace = limiter.pace {
            let wait = pace.reserve()
            if wait > .zero {
                if wait >= .milliseconds(1) {
                    log.note(
                        "paced \(SecondsText.format(Seconds.seconds(wait))) s before \(describe(exchange)) "
                            + "(at most \(RatePace.describe(pace.rate)): \(limiter.rateSource))")
                }
                try await Task.sleep(for: wait)
            }
        }
        return try await next(exchange)
    }

    private func describe(_ exchange: Exchange) -> String {
        "\(exchange.method) \(slot.redactor.redactURL(exchange.url))"
    }
}
