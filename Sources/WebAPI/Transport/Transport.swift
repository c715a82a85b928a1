/// Sends an exchange over the network (or pretends to).
///
/// A transport that also keeps exchanges (`ExchangeStore`: the cache, HAR recording and replay,
/// shared state) contributes stages to each client's pipeline through the two `stages`
/// requirements; a plain transport contributes none (the defaults below).
public protocol Transport: Sendable {
    func send(_ exchange: Exchange) async throws -> Response
    /// Stages above the retries: recording, then the cache or the replay.
    func storeStages(slot: CredentialSlot, baseURL: String, log: ExchangeLog) -> [any Stage]
    /// Stages between the retries and the credentials (the shared rate-limit governor).
    func wireStages(slot: CredentialSlot, baseURL: String, maxWait: Double, api: String) -> [any Stage]
    /// Whether recorded exchanges answer instead of the network (`--replay`): then a client
    /// that requires a credential lets its calls through without one.
    var answersFromRecording: Bool { get }
}

extension Transport {
    public func storeStages(slot: CredentialSlot, baseURL: String, log: ExchangeLog) -> [any Stage] { [] }
    public func wireStages(slot: CredentialSlot, baseURL: String, maxWait: Double, api: String) -> [any Stage] { [] }
    public var answersFromRecording: Bool { false }
}
