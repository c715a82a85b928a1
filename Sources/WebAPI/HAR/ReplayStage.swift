/// Answers every exchange from a HAR file (`--replay`), with no network.
///
/// A request the file does not hold is an `OfflineError` naming it.
///
/// It sits where the cache would (the cache is off while replaying, so a
/// replay is deterministic): above the retries, which is also where
/// `HARRecordStage` records, so a replay sees the exchanges a recording saw.
public struct ReplayStage: Stage {
    let replay: HARReplay
    let credentials: CredentialStage
    let slot: CredentialSlot
    let log: ExchangeLog

    public init(replay: HARReplay, slot: CredentialSlot, baseURL: String, log: ExchangeLog) {
        self.replay = replay
        self.credentials = CredentialStage(slot: slot, baseURL: baseURL)
        self.slot = slot
        self.log = log
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let start = ContinuousClock.now
        // Matched as the wire would carry it, so a recorded `access_token=REDACTED` lines up either way.
        let wire = credentials.wire(exchange)
        guard let answer = replay.answer(to: wire, redactor: slot.redactor) else {
            let url = slot.redactor.redactURL(exchange.url)
            let held =
                replay.hosts.isEmpty
                ? "it holds no requests" : "it holds requests to \(replay.hosts.joined(separator: ", "))"
            throw APIError(
                .offline, "offline: \(exchange.method) \(url) is not in the replay file \(replay.name) (\(held))",
                url: url)
        }
        log.record(
            method: exchange.method, url: exchange.url, status: answer.status,
            milliseconds: CacheStage.milliseconds(since: start), source: Response.Source.replay.rawValue,
            redactor: slot.redactor)
        return Response(
            status: answer.status, headers: answer.headers, body: answer.body, url: exchange.url, source: .replay)
    }
}
