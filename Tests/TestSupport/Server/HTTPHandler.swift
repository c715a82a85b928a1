import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One connection's handler: collects a request, records it, applies a fault or routes it, and
/// writes the answer.
///
/// Persistent connections are kept unless the request asks for `close`.
final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Request bodies larger than this are refused (413) rather than buffered.
    static let maximumBodySize = 64 * 1024 * 1024

    private let core: ServerCore
    private let listener: String
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var bodyTooLarge = false
    /// The answer being written is followed by a close (`Fault.closeAfterAnswer`).
    private var closeAfterAnswer = false

    init(core: ServerCore, listener: String) {
        self.core = core
        self.listener = listener
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body.clear()
            bodyTooLarge = false
        case .body(let chunk):
            if body.readableBytes + chunk.readableBytes > HTTPHandler.maximumBodySize {
                bodyTooLarge = true
            } else {
                body.writeImmutableBuffer(chunk)
            }
        case .end:
            guard let requestHead = head else { return }
            head = nil
            respond(to: requestHead, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        core.connectionClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func record(_ requestHead: HTTPRequestHead) -> RecordedRequest {
        let uri = requestHead.uri
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = String(parts.first ?? "")
        let query = parts.count == 2 ? URLCoding.formDictionary(String(parts[1])) : [:]
        let headers = requestHead.headers.map { ($0.name, $0.value) }
        return RecordedRequest(
            method: requestHead.method.rawValue,
            uri: uri,
            path: URLCoding.percentDecode(rawPath),
            query: query,
            headers: headers,
            body: Array(body.readableBytesView),
            host: requestHead.headers.first(name: "host"),
            listener: listener
        )
    }

    private func respond(to requestHead: HTTPRequestHead, context: ChannelHandlerContext) {
        let recorded = record(requestHead)
        core.record(recorded)
        // The budget mode counts requests in flight: from here until the answer is written.
        let budget = core.budget.flatMap { $0.exempt.contains(recorded.path) ? nil : $0 }
        budget?.begin()
        let fault = core.takeFault(for: recorded)
        if case .reset = fault {
            budget?.end()
            reset(context: context)
            return
        }
        var response: Response
        if bodyTooLarge {
            response = .message("Request body too large", status: 413)
        } else if let fault, let replacement = FaultResponses.response(for: fault) {
            response = replacement
        } else {
            let request = RouteRequest(
                recorded: recorded, listenerURL: core.listenerURL(listener), endpoints: core.endpoints)
            response = core.router.respond(to: request)
        }
        if case .delay(let milliseconds) = fault { response.delayMilliseconds += max(0, milliseconds) }
        var truncate = false
        if case .truncated = fault { truncate = true }
        if case .closeAfterAnswer = fault { closeAfterAnswer = true }
        let final = core.finalize(response, for: recorded)
        let keepAlive = requestHead.isKeepAlive && !bodyTooLarge
        if let budget {
            // The budget mode may hold answers back (`RateBudget.deliver`): this one goes when it says.
            let truncate = truncate
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            budget.deliver {
                loop.execute {
                    let (handler, context) = bound.value
                    handler.answer(
                        final, for: requestHead, keepAlive: keepAlive, truncate: truncate, budget: budget,
                        context: context)
                }
            }
        } else {
            answer(final, for: requestHead, keepAlive: keepAlive, truncate: truncate, budget: nil, context: context)
        }
    }

    /// Writes `final` now, or after its delay; the budget mode counts the request answered then.
    private func answer(
        _ final: Response, for requestHead: HTTPRequestHead, keepAlive: Bool, truncate: Bool, budget: RateBudget?,
        context: ChannelHandlerContext
    ) {
        if final.delayMilliseconds > 0 {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(final.delayMilliseconds))) {
                budget?.end()
                guard context.channel.isActive else { return }
                self.write(final, for: requestHead, keepAlive: keepAlive, truncate: truncate, context: context)
            }
        } else {
            budget?.end()
            write(final, for: requestHead, keepAlive: keepAlive, truncate: truncate, context: context)
        }
    }

    /// Closes with SO_LINGER 0, so the peer sees a TCP reset and no response at all.
    private func reset(context: ChannelHandlerContext) {
        guard let provider = context.channel as? SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private func write(
        _ response: Response, for requestHead: HTTPRequestHead, keepAlive: Bool, truncate: Bool,
        context: ChannelHandlerContext
    ) {
        if let hostile = response.hostile, requestHead.method != .HEAD {
            hostile.write(response, version: requestHead.version, context: context)
            return
        }
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if requestHead.version == .http1_0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        let status = HTTPResponseStatus(statusCode: response.status)
        let responseHead = HTTPResponseHead(version: requestHead.version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        let hasBody = requestHead.method != .HEAD && status.mayHaveResponseBody && !response.body.isEmpty
        if truncate {
            if hasBody {
                let half = context.channel.allocator.buffer(bytes: response.body.prefix(response.body.count / 2))
                context.write(wrapOutboundOut(.body(.byteBuffer(half))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer())))).assumeIsolated().whenComplete {
                _ in
                context.close(promise: nil)
            }
            return
        }
        if hasBody {
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive || closeAfterAnswer {
            done.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
