import Platform
import Spawning
import Synchronization

/// A one-shot HTTP/1.1 server on 127.0.0.1 that receives an OAuth 2 implicit
/// redirect (`apimacro login NAME --listen PORT`).
///
/// The token sits in the URL fragment, which browsers never send, so the
/// callback page's script posts it back to `/token`. Sockets are plain POSIX,
/// served on a dedicated thread.
public final class LoopbackListener: Sendable {
    /// The port bound (the one the system picked when asked for port 0).
    public let port: Int
    private let listenFD: Int32
    private let state = Mutex(State())

    private struct State {
        var open = true
        var serving = false
        var stopRequested = false
    }

    /// The largest request served (head and body); larger ones get 413.
    public static let maximumRequestSize = 64 * 1024
    /// The most connections served at once; a new one closes the oldest.
    static let maximumConnections = 32
    /// How long a connection may take in all, from its accept to its whole request: 10 s.
    static let connectionLifetime = Duration.seconds(10)

    /// Binds 127.0.0.1:`port` (0 = any free port) with SO_REUSEADDR.
    public init(port: Int) throws {
        guard (0...65535).contains(port) else {
            throw APIError(.invalidRequest, "--listen needs a port between 0 and 65535, not \(port)")
        }
        let fd = socket(AF_INET, POSIXSocket.stream, 0)
        guard fd >= 0 else { throw APIError(.auth, "cannot open a socket: \(POSIXSocket.errorText())") }
        POSIXSocket.setCloseOnExec(fd)
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = POSIXSocket.loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = errno == EADDRINUSE ? "it is in use" : POSIXSocket.errorText()
            _ = POSIXSocket.closeFD(fd)
            throw APIError(
                .auth, "cannot listen on 127.0.0.1:\(port): \(reason); choose another port with --listen PORT")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))
    }

    deinit { if state.withLock({ $0.open }) { _ = POSIXSocket.closeFD(listenFD) } }

    /// Serves the callback page at `callbackPath` and waits for its script to
    /// post the redirect to `/token`; returns the rebuilt redirect URL
    /// `http://127.0.0.1:PORT<callbackPath>?<query>#<fragment>`.
    ///
    /// A redirect `accepts` refuses (one without this login's `state`: a web page's forged
    /// `error=`, a local process's guess) is answered 400 and the listener goes on waiting, so
    /// no one but the browser that was sent the login can end it.
    ///
    /// Throws `.auth` when nothing arrives within `timeout` seconds. The
    /// listener is closed when this returns.
    public func waitForRedirect(
        timeout: Double, callbackPath: String, accepts: @escaping @Sendable (String) -> Bool = { _ in true }
    ) async throws -> String {
        try state.withLock { state in
            guard state.open, !state.stopRequested else {
                throw APIError(.auth, "the login listener on port \(port) is closed; start again")
            }
            guard !state.serving else { throw APIError(.auth, "the login listener on port \(port) is already waiting") }
            state.serving = true
        }
        let routes = LoopbackRoutes(port: port, callbackPath: callbackPath, accepts: accepts)
        let deadline = ContinuousClock.now + Seconds.duration(timeout.isFinite ? min(timeout, 31_536_000) : 31_536_000)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                do {
                    try NativeThread.start(name: "apimacro-login-listener") { [self] in
                        let result = Result { try serve(routes: routes, deadline: deadline, timeout: timeout) }
                        finish()
                        continuation.resume(with: result)
                    }
                } catch {
                    state.withLock { $0.serving = false }
                    continuation.resume(throwing: APIError(.auth, "the login listener on port \(port): \(error)"))
                }
            }
        } onCancel: {
            state.withLock { $0.stopRequested = true }
        }
    }

    /// Stops the listener: a pending `waitForRedirect` ends within a fraction of a second.
    public func close() {
        let closeNow = state.withLock { state -> Bool in
            state.stopRequested = true
            guard state.open, !state.serving else { return false }
            state.open = false
            return true
        }
        if closeNow { _ = POSIXSocket.closeFD(listenFD) }
    }

    private func finish() {
        let closeNow = state.withLock { state -> Bool in
            state.serving = false
            guard state.open else { return false }
            state.open = false
            return true
        }
        if closeNow { _ = POSIXSocket.closeFD(listenFD) }
    }

    /// The poll loop: accepts connections, reads requests as their segments
    /// arrive, answers complete ones, until `/token` is posted or time runs out.
    private func serve(routes: LoopbackRoutes, deadline: ContinuousClock.Instant, timeout: Double) throws -> String {
        var connections: [LoopbackConnection] = []
        defer { for connection in connections { _ = POSIXSocket.closeFD(connection.fd) } }
        while true {
            if state.withLock({ $0.stopRequested }) {
                throw APIError(.cancelled, "the login listener on port \(port) was stopped")
            }
            let now = ContinuousClock.now
            guard now < deadline else {
                throw APIError(
                    .auth,
                    "no redirect arrived within \(SecondsText.format(timeout)) s; open the login URL in a browser on this "
                        + "machine, or paste the address it ends on with apimacro login NAME --redirect-url URL")
            }
            // Each connection has `connectionLifetime` in all, however it trickles its bytes: slow
            // connections cannot hold the listener's places for long.
            connections.removeAll { connection in
                let expired = now - connection.accepted > Self.connectionLifetime
                if expired { _ = POSIXSocket.closeFD(connection.fd) }
                return expired
            }
            var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
            fds += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let slice = min(deadline - now, .milliseconds(200)).components
            let wait = Int32(slice.seconds * 1000 + slice.attoseconds / 1_000_000_000_000_000) + 1
            let ready = poll(&fds, nfds_t(fds.count), wait)
            if ready < 0, errno != EINTR {
                throw APIError(.auth, "the login listener failed: \(POSIXSocket.errorText())")
            }
            guard ready > 0 else { continue }
            var finished: Set<Int32> = []
            for (index, descriptor) in fds.enumerated().dropFirst() where descriptor.revents != 0 {
                var connection = connections[index - 1]
                let outcome = connection.receive(routes: routes)
                connections[index - 1] = connection
                switch outcome {
                case .waiting: continue
                case .closed: finished.insert(connection.fd)
                case .redirect(let url): return url
                }
            }
            connections.removeAll { connection in
                guard finished.contains(connection.fd) else { return false }
                _ = POSIXSocket.closeFD(connection.fd)
                return true
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let client = accept(listenFD, nil, nil)
                if client >= 0 {
                    POSIXSocket.setCloseOnExec(client)
                    // All places taken: the oldest connection makes way, so a new one (the
                    // browser's) is always served.
                    if connections.count >= Self.maximumConnections {
                        _ = POSIXSocket.closeFD(connections.removeFirst().fd)
                    }
                    connections.append(LoopbackConnection(fd: client))
                }
            }
        }
    }
}

/// One client connection: its bytes so far and when it last sent any.
struct LoopbackConnection {
    let fd: Int32
    var buffer: [UInt8] = []
    /// When it was accepted: its lifetime counts from there.
    let accepted = ContinuousClock.now

    enum Outcome {
        case waiting, closed
        case redirect(String)
    }

    /// Reads what arrived; once a whole request is in, answers it.
    mutating func receive(routes: LoopbackRoutes) -> Outcome {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0, errno == EINTR || errno == EAGAIN { return .waiting }
        guard count > 0 else { return .closed }
        buffer += chunk[0..<count]
        switch LoopbackRequest.parse(buffer, limit: LoopbackListener.maximumRequestSize) {
        case .incomplete:
            return .waiting
        case .failed(let status):
            POSIXSocket.sendAll(fd, LoopbackReply.text(status, LoopbackReply.reason(status)))
            return .closed
        case .complete(let request):
            let (reply, redirect) = routes.answer(request)
            POSIXSocket.sendAll(fd, reply)
            return redirect.map(Outcome.redirect) ?? .closed
        }
    }
}
