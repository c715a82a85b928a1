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

    /// The `Content-Length` announced: a promise the body never keeps.
    static let announcedLength = 1 << 20

    /// Writes the head of `response` (its status and headers), then the never-ending body.
    func write(_ response: Response, version: HTTPVersion, context: ChannelHandlerContext) {
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
        case .chunked:
            break  // written above
        }
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
