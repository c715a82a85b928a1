import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A port on loopback that accepts every connection and answers nothing: a Redis that hangs
/// during the handshake.
///
/// `release()` closes the connections held, and every later one as soon as it is accepted
/// (a Redis that is down).
///
/// Counts the connections clients opened: how many tried at once.
public final class HostileRedisHold: Sendable {
    public let port: Int
    private let listener: Int32
    private struct State {
        var accepted = 0
        var held: [Int32] = []
        var released = false
        var stopped = false
    }

    private let state = Mutex(State())

    private init(port: Int, listener: Int32) {
        self.port = port
        self.listener = listener
    }

    /// Listens on a free loopback port and accepts on its own thread until `stop()`.
    public static func start() throws -> HostileRedisHold {
        let (descriptor, port) = try LoopbackSocket.bound()
        guard listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw RedisServerError(description: "listen() failed: errno \(errno)")
        }
        let server = HostileRedisHold(port: port, listener: descriptor)
        Thread { server.serve() }.start()
        return server
    }

    /// The connections accepted so far.
    public var accepted: Int { state.withLock { $0.accepted } }

    /// Closes the connections held and every later one at once.
    public func release() {
        let held = state.withLock { state -> [Int32] in
            state.released = true
            defer { state.held = [] }
            return state.held
        }
        for connection in held { close(connection) }
    }

    /// Holds the connections accepted from now on again.
    public func holdAgain() {
        state.withLock { $0.released = false }
    }

    /// Stops accepting and closes everything.
    public func stop() {
        release()
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve() {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let keep = state.withLock { state -> Bool in
                if state.stopped { return false }
                state.accepted += 1
                if state.released { return false }
                state.held.append(connection)
                return true
            }
            if !keep { close(connection) }
            if state.withLock({ $0.stopped }) { return }
        }
    }
}
