import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback port on which nothing listens, and nothing can while it is held: a socket bound
/// to it that never listens, so a connection is refused at once.
///
/// For "the server is unreachable" tests. A port that was free a moment ago (a stopped server's,
/// `LoopbackSocket.freePort`) can be taken by a server another test starts meanwhile, which then
/// answers in its own protocol; this one cannot.
public final class ClosedPort: Sendable {
    /// The port.
    public let port: Int
    private let descriptor: Int32

    /// Binds the socket; the end of the object frees the port.
    public init() throws {
        (descriptor, port) = try LoopbackSocket.bound()
    }

    deinit { _ = close(descriptor) }
}
