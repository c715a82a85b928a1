import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket bound to 127.0.0.1 on a port the system picks, for the test servers
/// (a fake Redis listening on it) and for finding a free port to hand a child process
/// (redis-server, tinyproxy).
enum LoopbackSocket {
    /// A new socket bound to 127.0.0.1:0 and the port it got; the caller owns the descriptor.
    ///
    /// - Throws: `LoopbackSocketError` naming the call that failed and errno.
    static func bound() throws -> (descriptor: Int32, port: Int) {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw LoopbackSocketError(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw LoopbackSocketError(description: "cannot bind 127.0.0.1:0: errno \(code)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port that was free a moment ago (bound, then closed), for a child process to listen on.
    static func freePort() throws -> Int {
        let (descriptor, port) = try bound()
        close(descriptor)
        return port
    }
}

/// A loopback socket could not be bound.
struct LoopbackSocketError: Error, CustomStringConvertible {
    let description: String
}
