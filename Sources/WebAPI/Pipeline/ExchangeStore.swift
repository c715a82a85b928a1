import Synchronization

/// Where exchanges are kept rather than sent: the HTTP cache, the HAR
/// recording and the replay file, in front of the network transport.
///
/// Hand it to clients as their transport; `Pipeline.init(client:…)` puts its stages above the
/// retries (recording → cache or replay → retries → [governor] → credentials → wire).
///
/// - `--replay`: the replay file answers and the cache is off (a replay is
///   deterministic); nothing reaches the network, so `--offline` adds nothing.
/// - `--offline`: the cache answers with any copy it has; anything else is `OfflineError`.
/// - `--record` with the cache: cache hits are recorded too, so the file alone replays the run.
public final class ExchangeStore: Transport {
    /// The transport below the stages: the network, or `OfflineTransport`.
    public let wire: any Transport
    /// The network transport, kept even when unused (its owner shuts it down, or the process ends).
    public let network: any Transport
    public let cache: HTTPCache?
    public let recorder: HARRecorder?
    public let replay: HARReplay?
    public let offline: Bool
    /// State shared with other apimacro processes through Redis (`APIMACRO_SHARED_STATE`):
    /// the rate-limit governor and the second cache tier.
    ///
    /// Nil when not configured, and while replaying or offline (nothing is sent).
    public let shared: SharedState?
    /// The shared limiter's pace and concurrency cap (used only with `shared`).
    public let limits: GovernorLimits
    /// Prints a warning line on stderr (once-per-run warnings of the stages and clients).
    public let warn: @Sendable (String) -> Void
    /// The `Deprecation` and `Sunset` warnings of this process, one per API (`DeprecationStage`).
    public let deprecations: DeprecationNotices
    /// Each API's own limits from the settings (`[github.limits]`, `APIMACRO_<NAME>_LIMITS_*`), by
    /// name: they win over a plugin's `[limits]`.
    public let clientLimits: [String: LocalLimits]
    /// The local limiters, one per API and limits (`localLimiter`).
    private let limiters = Mutex<[String: LocalLimitStage.Limiter]>([:])

    /// The limits held in this process without shared state: `APIMACRO_MAX_RATE` and
    /// `APIMACRO_MAX_CONCURRENCY` when no shared state is configured, else none (the governor
    /// holds them across processes).
    public var processLimits: LocalLimits? {
        guard shared == nil, limits.maxRate != nil || limits.maxConcurrency != nil else { return nil }
        return LocalLimits(
            rate: limits.maxRate, concurrency: limits.maxConcurrency, rateSource: "APIMACRO_MAX_RATE",
            concurrencySource: "APIMACRO_MAX_CONCURRENCY")
    }

    /// The pace and cap of `api` under `limits`, the same for every client of that API in this
    /// process (GitHub's REST and GraphQL clients, a client built again).
    public func localLimiter(for api: String, _ limits: LocalLimits) -> LocalLimitStage.Limiter {
        let key =
            "\(api)\u{0}\(limits.rate.map { String($0) } ?? "-")\u{0}\(limits.concurrency.map(String.init) ?? "-")"
        return self.limiters.withLock { limiters in
            if let found = limiters[key] { return found }
            let made = LocalLimitStage.Limiter(limits)
            limiters[key] = made
            return made
        }
    }
    /// Whether the cache serves a stored copy when the network fails (stale-if-error); false
    /// with `--no-stale` (`APIMACRO_STALE_IF_ERROR=off`).
    public let staleIfError: Bool

    /// - Parameters:
    ///   - network: the real transport, used unless `offline` or `replay`.
    ///   - cache: the HTTP cache; ignored while replaying.
    ///   - recorder: records every exchange to a HAR file (`--record`), or nil.
    ///   - replay: answers from a HAR file instead of the network (`--replay`), or nil.
    ///   - offline: answers only from the cache (`--offline`).
    ///   - shared: the state shared through Redis (`APIMACRO_SHARED_STATE`), or nil.
    ///   - limits: the shared limiter's pace and concurrency cap (used only with `shared`).
    ///   - clientLimits: each API's own limits from the settings, by name.
    ///   - warn: writes a line to stderr (stale-if-error warnings).
    ///   - staleIfError: whether the cache answers when the network fails (true; `--no-stale`: false).
    public init(
        network: any Transport, cache: HTTPCache?, recorder: HARRecorder?, replay: HARReplay?, offline: Bool,
        shared: SharedState? = nil, limits: GovernorLimits = GovernorLimits(),
        clientLimits: [String: LocalLimits] = [:], warn: @escaping @Sendable (String) -> Void,
        staleIfError: Bool = true
    ) {
        self.clientLimits = clientLimits
        self.staleIfError = staleIfError
        self.network = network
        if replay != nil {
            wire = OfflineTransport(hint: "replaying never uses the network")
        } else if offline {
            wire = OfflineTransport()
        } else {
            wire = network
        }
        self.cache = replay == nil ? cache : nil
        self.recorder = recorder
        self.replay = replay
        self.offline = offline || replay != nil
        self.shared = offline || replay != nil ? nil : shared
        self.limits = limits
        self.warn = warn
        deprecations = DeprecationNotices(warn: warn)
    }

    public func send(_ exchange: Exchange) async throws -> Response {
        try await wire.send(exchange)
    }

    /// Whether a HAR file answers (`--replay`): then a client that requires a credential lets
    /// its calls through without one (its recordings hold none).
    public var answersFromRecording: Bool { replay != nil }
}
