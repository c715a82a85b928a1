/// Paces each send to the client's secondary limits (`SecondaryPacer`, per credential, per
/// process): it waits before the send as the rules say (each wait a line in `-v`), and tells
/// the pacer when the answer came.
///
/// It sits below the retries and the cache (each send is paced; an answer from the cache or
/// a recording sends nothing) and above the shared governor and the credentials.
public struct PaceStage: Stage {
    let pacer: SecondaryPacer
    let slot: CredentialSlot
    let maxWait: Double
    let api: String?
    let log: ExchangeLog

    /// - Parameters:
    ///   - pacer: the rules and their state, shared by the clients of one API (GitHub's REST and GraphQL).
    ///   - slot: the client's credential (its lane) and redactor.
    ///   - maxWait: `APIMACRO_MAX_WAIT`.
    ///   - api: the client's name.
    ///   - log: where each wait is noted (`-v`).
    public init(pacer: SecondaryPacer, slot: CredentialSlot, maxWait: Double, api: String?, log: ExchangeLog) {
        self.pacer = pacer
        self.slot = slot
        self.maxWait = maxWait
        self.api = api
        self.log = log
    }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let describe = "\(exchange.method) \(slot.redactor.redactURL(exchange.url))"
        let ticket = try await pacer.admit(
            exchange, key: SecondaryPacer.key(slot.value), maxWait: maxWait, describe: describe, api: api,
            note: { wait in
                log.note(
                    "paced \(SecondsText.format(wait.seconds)) s before \(describe) "
                        + "(\(api ?? "the API")'s secondary limits: \(wait.reason.rawValue))")
            })
        let response: Response
        do {
            response = try await next(exchange)
        } catch {
            pacer.finish(ticket, answer: nil)
            throw error
        }
        pacer.finish(ticket, answer: response)
        return response
    }
}
