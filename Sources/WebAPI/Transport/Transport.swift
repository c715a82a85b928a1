/// Sends an exchange over the network (or pretends to).
///
/// A transport that also keeps exchanges is an `ExchangeStore` (the cache, HAR recording and
/// replay, shared state): `Pipeline.init(client:…)` puts its parts into each client's stages.
public protocol Transport: Sendable {
    func send(_ exchange: Exchange) async throws -> Response
}
