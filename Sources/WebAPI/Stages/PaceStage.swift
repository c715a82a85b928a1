import Platform

/// Paces each send to the client's secondary limits (`SecondaryPacer`, per credential, per
/// process): it waits before the send as the rules say (each wait a line in `-v`), and tells
/// the pacer when the answer came.
///
/// With shared state (`APIMACRO_SHARED_STATE`) the gap between writes, one write in flight at
/// a time, the content-creating windows and an answer's wait are also kept across every
/// apimacro process using the credential (`SecondaryScripts`, through the governor's keys);
/// when Redis is not usable, the local pace alone applies.
///
/// It sits below the retries and the cache (each send is paced; an answer from the cache or
/// a recording sends nothing) and above the shared governor and the credentials.
public struct PaceStage: Stage {
    /// The rules and their state, shared by the clients of one API (GitHub's REST and GraphQL).
    let pacer: SecondaryPacer
    /// The client's credential (its lane) and redactor.
    let slot: CredentialSlot
    /// `APIMACRO_MAX_WAIT`.
    let maxWait: Double
    /// The client's name.
    let api: String?
    /// Where each wait is noted (`-v`).
    let log: ExchangeLog
    /// The shared governor whose Redis and keys the shared pace uses (`APIMACRO_SHARED_STATE`);
    /// nil without shared state.
    let governor: GovernorStage?

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let describe = "\(exchange.method) \(slot.redactor.redactURL(exchange.url))"
        let ticket = try await pacer.admit(
            exchange, key: SecondaryPacer.key(slot.value), maxWait: maxWait, describe: describe, api: api,
            note: { wait in
                log.note(
                    "paced \(SecondsText.format(wait.seconds)) s before \(describe) "
                        + "(\(api ?? "the API")'s secondary limits: \(wait.reason.rawValue))")
            })
        var lease: SharedLease?
        let response: Response
        do {
            lease = try await reserveShared(exchange, describe: describe)
            response = try await next(exchange)
        } catch {
            await lease?.release(answer: nil, pacer: pacer)
            pacer.finish(ticket, answer: nil)
            throw error
        }
        await lease?.release(answer: response, pacer: pacer)
        pacer.finish(ticket, answer: response)
        return response
    }

    /// A send booked in the shared pace, to release after its answer.
    struct SharedLease {
        let shared: SharedState
        let keys: [[UInt8]]
        let id: [UInt8]
        let mutating: Bool

        func release(answer: Response?, pacer: SecondaryPacer) async {
            let hold = answer.flatMap { pacer.hold(after: $0, now: Date().timeIntervalSince1970) } ?? 0
            // A read that asked for no wait left nothing to record: no second round trip.
            guard mutating || hold > 0 else { return }
            let arguments: [[UInt8]] = [
                mutating ? GovernorStage.one : GovernorStage.zero, id,
                Array(String(GovernorStage.milliseconds(pacer.limits.writeGap)).utf8),
                Array(String(GovernorStage.milliseconds(hold)).utf8),
            ]
            await shared.post(SecondaryScripts.record, encodedKeys: keys, arguments: arguments)
        }
    }

    /// Waits until the pace shared through Redis lets `exchange` go, and books it; nil without
    /// shared state or when Redis is not usable.
    ///
    /// - Throws: `RateLimited` (secondary, nothing sent) when the wait exceeds `maxWait`.
    func reserveShared(_ exchange: Exchange, describe: String) async throws -> SharedLease? {
        guard let governor, let origin = exchange.origin, governor.shared.isAvailable else { return nil }
        let limits = pacer.limits
        let mutating = limits.isMutating(exchange)
        let keys = governor.identity(of: exchange, origin: origin).secondaryKeys(origin)
        let id = GovernorStage.leaseID()
        let windows = limits.createsContent(exchange) ? limits.contentCreation : []
        let arguments: [[UInt8]] =
            [
                mutating ? GovernorStage.one : GovernorStage.zero,
                windows.isEmpty ? GovernorStage.zero : GovernorStage.one,
                id, Array(String(GovernorStage.milliseconds(exchange.timeout + 10)).utf8),
                Array(String(windows.count).utf8),
            ]
            + windows.flatMap { window in
                [Array(String(window.requests).utf8), Array(String(GovernorStage.milliseconds(window.seconds)).utf8)]
            }
        var waited = 0.0
        while true {
            guard
                let reply = await governor.shared.evaluate(
                    SecondaryScripts.reserve, encodedKeys: keys, arguments: arguments),
                let code = reply.elements.first?.integer
            else { return nil }
            if code == 0 { return SharedLease(shared: governor.shared, keys: keys, id: id, mutating: mutating) }
            let seconds = Double(max(1, min(reply.elements.dropFirst().first?.integer ?? 20, 86_400_000))) / 1000
            guard waited + seconds <= maxWait else {
                var error = APIError(
                    .rateLimited,
                    "\(describe): held \(Seconds.whole(waited + seconds)) s by \(api ?? "the API")'s secondary limits "
                        + "shared by every apimacro process (\(governor.shared.source)); APIMACRO_MAX_WAIT is "
                        + "\(SecondsText.format(maxWait)) s (nothing was sent)",
                    api: api, retryAfter: seconds)
                error.isSecondary = true
                throw error
            }
            // Short polls while another process's write is in flight are not worth a line each.
            if seconds >= 0.1 {
                log.note(
                    "paced \(SecondsText.format(seconds)) s before \(describe) "
                        + "(\(api ?? "the API")'s secondary limits, shared by every apimacro process)")
            }
            waited += seconds
            try await governor.sleep(seconds)
        }
    }
}
