import NIOCore
import NIOHTTP1

/// A body the server never finishes, for the hostile routes: the head goes out with a
/// `Content-Length` far larger than what follows, then the body stalls or trickles until the
/// client closes the connection (or the server shuts down).
enum HostileBody: Sendable {
    /// Send `prefix`, then nothing more.
    case stall(prefix: [UInt8])
    /// Send one byte of `filler` every `intervalMilliseconds`, without end.
    case trickle(intervalMilliseconds: Int)
    /// Send these pieces with `Transfer-Encoding: chunked` (one chunk each, flushed apart),
    /// then end: a complete answer, not an endless one.
    case chunked([[UInt8]])
    /// Send the head exactly as the response gives it (no `Content-Length` or
    /// `Transfer-Encoding: chunked` added, none replaced), then these bytes, then close: a body
    /// that ends with the connection, as one in a transfer coding other than chunked does.
    case closeDelimited([UInt8])

    /// The `Content-Length` announced: a promise the body never keeps.
    static let announcedLength = 1 << 20

    /// Writes the head of `response` (its status and headers), then the never-ending body.
    func write(_ response: Response, version: HTTPVersion, context: ChannelHandlerContext) {
        if case .closeDelimited(let body) = self {
            Self.writeRaw(response, body: body, context: context)
            return
        }
        var headers = HTTPHeaders(response.headers)
        if case .chunked(let pieces) = self {
            headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
            let head = HTTPResponseHead(
                version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
            context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
            for piece in pieces {
                let buffer = context.channel.allocator.buffer(bytes: piece)
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
            }
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
            return
        }
        headers.replaceOrAdd(name: "Content-Length", value: String(HostileBody.announcedLength))
        let head = HTTPResponseHead(
            version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        switch self {
        case .stall(let prefix):
            let buffer = context.channel.allocator.buffer(bytes: prefix)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
        case .trickle(let interval):
            context.flush()
            HostileBody.trickle(every: Int64(max(1, interval)), context: context)
        case .chunked, .closeDelimited:
            break  // written above
        }
    }

    /// The status line, the headers as given, `Connection: close`, `body`, then the close:
    /// written below the HTTP encoder (from its context), which would otherwise replace a
    /// `Transfer-Encoding` with `chunked`.
    private static func writeRaw(_ response: Response, body: [UInt8], context: ChannelHandlerContext) {
        let status = HTTPResponseStatus(statusCode: response.status)
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\n\r\n"
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            context.close(promise: nil)
            return
        }
        let bytes = context.channel.allocator.buffer(bytes: Array(head.utf8) + body)
        encoder.writeAndFlush(NIOAny(bytes)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// One space now and then, while the connection is open.
    private static func trickle(every milliseconds: Int64, context: ChannelHandlerContext) {
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(milliseconds)) {
            guard context.channel.isActive else { return }
            let byte = context.channel.allocator.buffer(bytes: Array(" ".utf8))
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(byte))), promise: nil)
            trickle(every: milliseconds, context: context)
        }
    }
}
