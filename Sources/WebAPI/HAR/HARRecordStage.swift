import Platform

/// Records every exchange that passes it into a `HARRecorder` (`--record`).
///
/// It sits above the cache, so an answer the cache gave is recorded too and the
/// file alone replays the run; the request is recorded as the wire would carry
/// it, with the credential `CredentialStage` would attach shown as `REDACTED`.
/// An exchange that ends without any response (refused, timed out) is not recorded.
public struct HARRecordStage: Stage {
    let recorder: HARRecorder
    let credentials: CredentialStage
    let slot: CredentialSlot
    /// The stored account's label, written in each entry's comment (`account work`).
    let account: String?

    public init(recorder: HARRecorder, slot: CredentialSlot, baseURL: String, account: String? = nil) {
        self.recorder = recorder
        self.account = account
        self.credentials = CredentialStage(slot: slot, baseURL: baseURL)
        self.slot = slot
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        // A rate limit's wait before this attempt (`RateLimitStage`, above) is part of it.
        let held = max(0, exchange.heldAbove)
        let started = Date().addingTimeInterval(-held / 1000)
        let clock = ContinuousClock.now
        let response = try await next(exchange)
        let duration = ContinuousClock.now - clock
        let milliseconds =
            held + Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let wire = credentials.wire(exchange)
        var recorded = response
        recorded.timing.throttled += held
        recorder.add(
            wire, recorded, started: started, milliseconds: (milliseconds * 1000).rounded() / 1000,
            redactor: slot.redactor, account: account)
        return response
    }
}
