import NIOCore
import NIOHTTP1
import NIOPosix
public import NIOSSL
import Synchronization

/// A real HTTP/1.1 server on loopback that speaks GitHub's REST shapes (plus helper routes) and
/// injects faults, for tests that must never reach the internet.
///
/// It listens on 127.0.0.1 (``baseURL``) and on 127.0.0.2 (``otherHostURL``, another host for
/// cross-host tests); both share the routes and the request log.
public final class TestServer: Sendable {
    /// `http://127.0.0.1:<port>`, no trailing slash.
    public let baseURL: String
    /// The port of ``baseURL``.
    public let port: Int
    /// `http://127.0.0.2:<port>`: the second listener, a different host for the client.
    public let otherHostURL: String
    /// The port of ``otherHostURL``.
    public let otherHostPort: Int

    let core: ServerCore
    private let group: MultiThreadedEventLoopGroup
    private let channels: [any Channel]
    private let stopped = Mutex(false)

    /// The address of the main listener.
    public static let mainHost = "127.0.0.1"
    /// The address of the second listener.
    public static let otherHost = "127.0.0.2"

    private init(
        core: ServerCore, group: MultiThreadedEventLoopGroup, channels: [any Channel], port: Int, otherHostPort: Int,
        scheme: String = "http"
    ) {
        self.core = core
        self.group = group
        self.channels = channels
        self.port = port
        self.otherHostPort = otherHostPort
        self.baseURL = "\(scheme)://\(TestServer.mainHost):\(port)"
        self.otherHostURL = "\(scheme)://\(TestServer.otherHost):\(otherHostPort)"
    }

    /// Binds 127.0.0.1 on `port` (0: a free port) and 127.0.0.2 on a free port, and starts serving.
    ///
    /// With `tls` (a `TestCertificateAuthority`'s `serverContext()`), both speak https only.
    public static func start(port: Int = 0, tls: NIOSSLContext? = nil) async throws -> TestServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let core = ServerCore(router: .standard)
        do {
            let main = try await bind(host: mainHost, port: port, core: core, group: group, tls: tls)
            let other = try await bind(host: otherHost, port: 0, core: core, group: group, tls: tls)
            let mainPort = main.localAddress?.port ?? port
            let otherPort = other.localAddress?.port ?? 0
            let server = TestServer(
                core: core, group: group, channels: [main, other], port: mainPort, otherHostPort: otherPort,
                scheme: tls == nil ? "http" : "https")
            core.setListener(mainHost, url: server.baseURL)
            core.setListener(otherHost, url: server.otherHostURL)
            core.setEndpoints(Endpoints(baseURL: server.baseURL, otherHostURL: server.otherHostURL))
            return server
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func bind(
        host: String, port: Int, core: ServerCore, group: MultiThreadedEventLoopGroup, tls: NIOSSLContext?
    ) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                core.connectionAccepted()
                return channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    // No outbound header validation: hostile routes send control characters in
                    // headers (a `Link` with an escape sequence), as a hostile server can.
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withErrorHandling: true, withOutboundHeaderValidation: false)
                    try channel.pipeline.syncOperations.addHandler(HTTPHandler(core: core, listener: host))
                }
            }
            .bind(host: host, port: port)
            .get()
    }

    /// Closes both listeners and every open connection.
    ///
    /// Calling it again does nothing.
    public func shutdown() async throws {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if alreadyStopped { return }
        for channel in channels {
            try? await channel.close()
        }
        try await group.shutdownGracefully()
    }

    /// How many connections the server has accepted so far (both listeners): keep-alive reuse
    /// shows as fewer connections than requests.
    public var connections: Int { core.connectionCount }

    /// How many connections have closed so far, by either side (both listeners): wait on it
    /// to know the server's close reached the client's side before its next request.
    public var closedConnections: Int { core.closedCount }

    /// A snapshot of every request received so far, in arrival order (both listeners).
    public var requests: [RecordedRequest] { core.requests }

    /// The `x-ratelimit-reset` of the server's GitHub-style answers (the end of its window).
    public var rateLimitReset: Int { core.resetEpoch }

    /// Forgets the recorded requests.
    public func clearRequests() { core.clearRequests() }

    /// Queues `faults` for the next requests whose path (without query) equals `path`; each fault
    /// is used by one request, and the route answers normally once the queue is empty.
    public func inject(_ faults: [Fault], path: String) { core.inject(faults, path: path) }

    /// Turns on the random fault mode (see ``RandomFaults``) for every request.
    public func setRandomFaults(seed: UInt64, rates: [(Fault, Double)]) {
        core.setRandomFaults(RandomFaults(seed: seed, rates: rates))
    }

    /// Makes every answer to requests carrying `token` (`Authorization: Bearer` or `token`) say
    /// `GitHub-Authentication-Token-Expiration: value` (`2021-10-07 19:07:53 UTC`), as GitHub does
    /// for an expiring token; nil stops it.
    public func setTokenExpiration(_ value: String?, for token: String) {
        core.setTokenExpiration(value, for: token)
    }

    /// Turns the random fault mode on with `configuration`, or off with nil.
    public func setRandomFaults(_ configuration: RandomFaults?) { core.setRandomFaults(configuration) }
}
