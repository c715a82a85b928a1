/// Stages in order (outermost first) in front of a transport: the one place a client's
/// pipeline is put together (`init(client:…)`) and chained (`init(stages:transport:)`).
///
/// The chain of `Next` links is built once, here, not per request: sending an exchange
/// allocates no closures.
public struct Pipeline: Sendable {
    public let stages: [any Stage]
    public let transport: any Transport
    private let entry: Next
    /// The stages' chain of `Stage.answerAtOnce`, down to the first that cannot answer at once
    /// (the transport never can).
    private let atOnce: AtOnce

    public init(stages: [any Stage], transport: any Transport) {
        self.stages = stages
        self.transport = transport
        var next = Next { [transport] in try await transport.send($0) }
        var atOnce = AtOnce { _ in nil }
        for stage in stages.reversed() {
            let below = next
            if let phase = Self.waitPhase(of: stage) {
                next = Self.timed(stage, phase: phase, below: below)
            } else {
                next = Next { try await stage.handle($0, next: below) }
            }
            let belowAtOnce = atOnce
            atOnce = AtOnce { try stage.answerAtOnce($0, next: belowAtOnce) }
        }
        entry = next
        self.atOnce = atOnce
        answersAtOnce = stages.first { $0.atOnce != .passes }?.atOnce == .answers
    }

    /// Whether `answerAtOnce` may answer.
    ///
    /// A stage that answers at once (a cache) comes before any that cannot; when false,
    /// `answerAtOnce` is always nil.
    public let answersAtOnce: Bool

    /// The part of `Response.Timing` a stage's wait before sending counts in: the places in
    /// flight, a limit or pace, the retries; nil for a stage that does not wait.
    enum WaitPhase { case queued, throttled, retried }

    static func waitPhase(of stage: any Stage) -> WaitPhase? {
        switch stage {
        case is ConcurrencyLimitStage: .queued
        case is LocalLimitStage, is GovernorStage, is PaceStage, is UsageStage: .throttled
        case is RetryStage: .retried
        default: nil
        }
    }

    /// `stage`'s link, which adds the stage's wait to the answer's `timing`.
    ///
    /// The wait is how long the stage took before its last call of the stage below (for the
    /// retries: the earlier attempts and their backoff). The entry time travels on the exchange, so the links stay built once.
    static func timed(_ stage: any Stage, phase: WaitPhase, below: Next) -> Next {
        let marked = Next { exchange in
            let span = ContinuousClock.now - exchange.stageEntered
            let waited = Double(span.components.seconds) * 1000 + Double(span.components.attoseconds) / 1e15
            var response = try await below(exchange)
            response.timing.sinceStageEntry = waited
            if phase == .retried { response.timing.retries = exchange.attempt - 1 }
            return response
        }
        return Next { exchange in
            var exchange = exchange
            exchange.stageEntered = ContinuousClock.now
            var response = try await stage.handle(exchange, next: marked)
            let waited = (max(0, response.timing.sinceStageEntry) * 1000).rounded() / 1000
            switch phase {
            case .queued: response.timing.queued += waited
            case .throttled: response.timing.throttled += waited
            case .retried: response.timing.retried += waited
            }
            response.timing.sinceStageEntry = 0
            return response
        }
    }

    /// Runs `exchange` through every stage, then the transport.
    public nonisolated(nonsending) func send(_ exchange: Exchange) async throws -> Response {
        try await entry(exchange)
    }

    /// The stages' answer to `exchange` without waiting for anything (a fresh cache hit), or nil:
    /// then nothing was done for it, and it goes through `send`.
    ///
    /// Throws what `send` would throw for that answer (`AtOnce.Unfinished` aside: see there).
    public func answerAtOnce(_ exchange: Exchange) throws -> Response? {
        guard answersAtOnce else { return nil }
        return try atOnce(exchange)
    }
}

extension Pipeline {
    /// A client's pipeline: status → rate limit → [rate-limit memory, unless the configuration
    /// says nobody reads it] → [the client's response watch, if it has one] → redirects →
    /// [recording → cache or replay, when the transport is an `ExchangeStore`] → [the client's
    /// gate, when it has one] → retries → [the
    /// client's cap on requests in flight, when its configuration sets one] → [the local limits:
    /// a plugin's `[limits]`, `APIMACRO_MAX_RATE`/`_CONCURRENCY` without shared state] → [the
    /// secondary-limit pace, when the client declares one] → [the shared rate-limit governor,
    /// with `APIMACRO_SHARED_STATE`] → [usage, for an API that reports it
    /// (`ClientConfiguration.usage`)] → credentials → exchange log → transport.
    ///
    /// What varies per request (whether an error status raises) travels on the exchange; what
    /// an `ExchangeStore` holds (its recorder, replay, cache and shared state, each nil when
    /// unused) decides which of its stages are in; a plain transport adds none.
    ///
    /// - Parameters:
    ///   - configuration: the client's name, base URL, limits and error readers.
    ///   - slot: the client's credential, which the credential-aware stages read per request.
    ///   - transport: what sends the exchanges; an `ExchangeStore` adds its stages.
    ///   - log: the exchange log (`-v`).
    ///   - rateLimits: where the last rate-limit headers are kept.
    ///   - usage: where the last usage is kept, for a configuration with a `UsageRule`.
    init(
        client configuration: ClientConfiguration, slot: CredentialSlot, transport: any Transport, log: ExchangeLog,
        rateLimits: RateLimitMemory, usage: UsageMemory? = nil
    ) {
        let store = transport as? ExchangeStore
        let baseURL = configuration.baseURL
        let sleep = configuration.sleep
        let usageRule = configuration.usage
        let usageWait: @Sendable (Response) -> Double? = { response in usageRule?.read(response.headers)?.regainAfter }
        var stages: [any Stage] = [
            StatusStage(
                api: configuration.name, message: configuration.errorMessage, kind: configuration.errorKind,
                details: configuration.errorDetails, retryAfter: usageWait, errorList: configuration.errorList),
            RateLimitStage(
                policy: RateLimitPolicy(maxWait: configuration.maxWait, secondary: configuration.pacer?.limits),
                api: configuration.name, memory: configuration.remembersRateLimit ? rateLimits : nil, sleep: sleep,
                message: configuration.errorMessage, details: configuration.errorDetails, retryAfter: usageWait),
        ]
        if configuration.remembersRateLimit { stages.append(RateLimitMemoryStage(memory: rateLimits)) }
        if let watch = configuration.watch { stages.append(ResponseWatchStage(watch: watch)) }
        if let store {
            stages.append(DeprecationStage(notices: store.deprecations, api: configuration.name, slot: slot))
        }
        stages.append(RedirectStage(slot: slot))
        if let store {
            if let recorder = store.recorder {
                stages.append(
                    HARRecordStage(
                        recorder: recorder, slot: slot, baseURL: baseURL, account: configuration.account))
            }
            if let replay = store.replay {
                stages.append(ReplayStage(replay: replay, slot: slot, baseURL: baseURL, log: log))
            } else if let cache = store.cache {
                stages.append(
                    CacheStage(
                        cache: cache, offline: store.offline, slot: slot, baseURL: baseURL, log: log, warn: store.warn,
                        shared: store.shared, staleIfError: store.staleIfError))
            }
        }
        if let gate = configuration.gate { stages.append(GateStage(gate: gate)) }
        stages.append(
            RetryStage(
                policy: RetryPolicy(maxRetries: configuration.maxRetries), sleep: sleep,
                isTransient: configuration.isTransient))
        if let cap = configuration.maxConcurrentRequests {
            stages.append(ConcurrencyLimitStage(limit: ConcurrencyLimit(limit: cap)))
        }
        let own = store?.clientLimits[configuration.name]?.filling(from: configuration.limits) ?? configuration.limits
        if let local = (own ?? store?.processLimits)?.filling(from: store?.processLimits), !local.isEmpty {
            let limiter = store?.localLimiter(for: configuration.name, local) ?? LocalLimitStage.Limiter(local)
            stages.append(LocalLimitStage(limiter: limiter, slot: slot, log: log))
        }
        let governor = store?.shared.map { shared in
            GovernorStage(
                shared: shared, limits: store?.limits ?? GovernorLimits(), slot: slot, baseURL: baseURL,
                maxWait: configuration.maxWait, api: configuration.name, sleep: sleep)
        }
        if let pacer = configuration.pacer {
            stages.append(
                PaceStage(
                    pacer: pacer, slot: slot, maxWait: configuration.maxWait, api: configuration.name, log: log,
                    governor: governor))
        }
        if let governor { stages.append(governor) }
        if let usageRule {
            stages.append(
                UsageStage(
                    rule: usageRule, memory: usage ?? UsageMemory(), maxWait: configuration.maxWait,
                    api: configuration.name, sleep: sleep))
        }
        stages.append(CredentialStage(slot: slot, baseURL: baseURL))
        stages.append(ExchangeLogStage(log: log, slot: slot, account: configuration.account))
        self.init(stages: stages, transport: transport)
    }
}
