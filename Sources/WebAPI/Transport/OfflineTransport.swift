/// The transport of `--offline` and `--replay`: no network at all.
///
/// Whatever reaches it was not in the cache (or the replay file), and is an
/// `OfflineError`.
public struct OfflineTransport: Transport {
    /// What the user can do about it, appended to the message.
    let hint: String

    public init(hint: String = "run it once without --offline to fill the cache") {
        self.hint = hint
    }

    public func send(_ exchange: Exchange) async throws -> Response {
        throw APIError(
            .offline, "offline: \(exchange.method) \(exchange.url) is not in the cache (\(hint))", url: exchange.url)
    }
}
