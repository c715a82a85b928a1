import Foundation
import NIOCore
import NIOPosix

/// The client side of one proxy connection: reads the request head, checks it, opens the
/// tunnel, then relays bytes both ways (recording what the client sends).
final class ProxyClientHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        /// Reading the request head: the bytes so far.
        case head([UInt8])
        /// Connecting to the target: bytes the client sent meanwhile.
        case connecting([UInt8])
        case relaying(any Channel)
        case closed
    }

    private let log: ProxyLog
    private let expectedAuthorization: String?
    private var phase = Phase.head([])

    init(log: ProxyLog, expectedAuthorization: String?) {
        self.log = log
        self.expectedAuthorization = expectedAuthorization
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Array(buffer: unwrapInboundIn(data))
        log.append(bytes)
        switch phase {
        case .head(let sofar):
            let all = sofar + bytes
            guard let end = Self.endOfHead(all) else {
                // A head over 64 KiB is not a proxy request.
                if all.count > 65536 {
                    reply(context, "431 Request Header Fields Too Large")
                } else {
                    phase = .head(all)
                }
                return
            }
            handle(head: String(decoding: all[..<end], as: UTF8.self), rest: Array(all[(end + 4)...]), context: context)
        case .connecting(let pending):
            phase = .connecting(pending + bytes)
        case .relaying(let upstream):
            upstream.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
        case .closed:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .relaying(let upstream) = phase { upstream.close(promise: nil) }
        phase = .closed
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func handle(head: String, rest: [UInt8], context: ChannelHandlerContext) {
        guard let request = ProxyRequest(head: head) else { return reply(context, "400 Bad Request") }
        log.append(request)
        guard request.method == "CONNECT" else { return reply(context, "405 Method Not Allowed") }
        if let expectedAuthorization, request.header("proxy-authorization") != expectedAuthorization {
            return reply(
                context, "407 Proxy Authentication Required",
                extra: "Proxy-Authenticate: Basic realm=\"apimacro-test\"\r\n")
        }
        guard let colon = request.target.lastIndex(of: ":"),
            let port = Int(request.target[request.target.index(after: colon)...])
        else {
            return reply(context, "400 Bad Request")
        }
        let host = request.target[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard host == "localhost" || host == "::1" || host.hasPrefix("127.") else {
            return reply(context, "403 Forbidden")
        }
        phase = .connecting(rest)
        let client = context.channel
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { upstream in
                upstream.eventLoop.makeCompletedFuture {
                    try upstream.pipeline.syncOperations.addHandler(ProxyRelayHandler(partner: client))
                }
            }
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let upstream):
                    guard case .connecting(let pending) = self.phase else {
                        upstream.close(promise: nil)
                        return
                    }
                    self.phase = .relaying(upstream)
                    context.writeAndFlush(
                        self.wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\n")),
                        promise: nil)
                    if !pending.isEmpty { upstream.writeAndFlush(ByteBuffer(bytes: pending), promise: nil) }
                case .failure:
                    self.reply(context, "502 Bad Gateway")
                }
            }
    }

    /// Answers with `status` and closes the connection.
    private func reply(_ context: ChannelHandlerContext, _ status: String, extra: String = "") {
        phase = .closed
        let text = "HTTP/1.1 \(status)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// The index of `\r\n\r\n` in `bytes`, if there.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
