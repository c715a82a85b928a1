/// Where exchanges are kept rather than sent: the HTTP cache, the HAR
/// recording and the replay file, in front of the network transport.
///
/// Hand it to clients as their transport; `APIClient` puts its stages above the
/// retries (recording → cache or replay → retries → credentials → wire).
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
    let warn: @Sendable (String) -> Void

    /// - Parameters:
    ///   - network: the real transport, used unless `offline` or `replay`.
    ///   - cache: the HTTP cache; ignored while replaying.
    ///   - recorder: `--record`: every exchange, cache hits included, goes into it.
    ///   - replay: `--replay`: answers every exchange; the network is never used.
    ///   - offline: `--offline`: no network; only the cache answers.
    ///   - warn: writes a line to stderr (stale-if-error warnings).
    public init(
        network: any Transport, cache: HTTPCache?, recorder: HARRecorder?, replay: HARReplay?, offline: Bool,
        warn: @escaping @Sendable (String) -> Void
    ) {
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
        self.warn = warn
    }

    public func send(_ exchange: Exchange) async throws -> Response {
        try await wire.send(exchange)
    }

    /// The stages a client puts above its retries.
    public func stages(slot: CredentialSlot, baseURL: String, log: ExchangeLog) -> [any Stage] {
        var stages: [any Stage] = []
        if let recorder { stages.append(HARRecordStage(recorder: recorder, slot: slot, baseURL: baseURL)) }
        if let replay {
            stages.append(ReplayStage(replay: replay, slot: slot, baseURL: baseURL, log: log))
        } else if let cache {
            stages.append(
                CacheStage(cache: cache, offline: offline, slot: slot, baseURL: baseURL, log: log, warn: warn))
        }
        return stages
    }
}
