import Synchronization

/// What the proxy saw, shared by its connections.
final class ProxyLog: Sendable {
    private struct State {
        var received: [UInt8] = []
        var requests: [ProxyRequest] = []
    }

    private let state = Mutex(State())

    func append(_ bytes: [UInt8]) { state.withLock { $0.received += bytes } }
    func append(_ request: ProxyRequest) { state.withLock { $0.requests.append(request) } }
    var received: [UInt8] { state.withLock { $0.received } }
    var requests: [ProxyRequest] { state.withLock { $0.requests } }
}
