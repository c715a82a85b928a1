import Foundation
import NIOCore
import NIOPosix
public import NIOSSL
import Synchronization

/// A forward proxy on 127.0.0.1 (a free port) that speaks only `CONNECT` and records every byte
/// any client sent it, so a test can assert what a proxy sees: the `CONNECT` request and its
/// headers in clear, then only the tunnelled bytes (TLS records, when the client speaks https).
///
/// It tunnels only to loopback addresses (127.0.0.0/8, `localhost`): a test never reaches the
/// internet through it. With `credentials`, a `CONNECT` without the matching
/// `Proxy-Authorization: Basic` gets `407` and the connection closes. Other methods get `405`.
/// With `tls`, clients speak TLS to the proxy itself (an `https://` proxy); what it records is
/// what it reads inside that TLS.
public final class RecordingProxy: Sendable {
    /// The port it listens on.
    public let port: Int
    /// Whether clients reach it over TLS.
    public let isTLS: Bool
    /// `http://127.0.0.1:PORT` (`https://` with TLS).
    public var url: String { "\(isTLS ? "https" : "http")://127.0.0.1:\(port)" }

    private let log: ProxyLog
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let stopped = Mutex(false)

    private init(port: Int, isTLS: Bool, log: ProxyLog, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.isTLS = isTLS
        self.log = log
        self.group = group
        self.channel = channel
    }

    /// Starts listening.
    ///
    /// `credentials`: the user and password a `CONNECT` must carry; `tls`: the proxy's own
    /// certificate (`TestCertificateAuthority.serverContext()`), for an `https://` proxy.
    public static func start(
        credentials: (user: String, password: String)? = nil, tls: NIOSSLContext? = nil
    ) async throws -> RecordingProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = ProxyLog()
        let expected = credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                        try channel.pipeline.syncOperations.addHandler(
                            ProxyClientHandler(log: log, expectedAuthorization: expected))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            return RecordingProxy(
                port: channel.localAddress?.port ?? 0, isTLS: tls != nil, log: log, group: group, channel: channel)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Every byte clients sent, in arrival order per connection (connections one after another).
    public var received: [UInt8] { log.received }

    /// `received` as text (invalid UTF-8, such as TLS records, replaced), for searching.
    public var receivedText: String { String(decoding: log.received, as: UTF8.self) }

    /// The request heads received (`CONNECT` and any other), in order.
    public var requests: [ProxyRequest] { log.requests }

    /// Stops listening and closes every tunnel.
    ///
    /// Calling it again does nothing.
    public func shutdown() async throws {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if alreadyStopped { return }
        try? await channel.close()
        try await group.shutdownGracefully()
    }
}
