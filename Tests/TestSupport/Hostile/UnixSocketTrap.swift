import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A Unix socket listener in a fresh temporary folder, to prove that nothing ever connects to
/// it: a redirect or link to `http+unix://` must not reach a local socket (Docker's, say).
public final class UnixSocketTrap: Sendable {
    public let folder: String
    /// The socket file.
    public let path: String
    private let descriptor: Int32

    /// Binds and listens (without accepting) on `docker.sock` in a new folder under /tmp.
    public init() throws {
        folder = "/tmp/apimacro-trap-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        path = folder + "/docker.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        descriptor = fd
    }

    /// How many connections are waiting to be accepted (each one accepted and closed).
    public func connections() -> Int {
        var count = 0
        while true {
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { return count }
            close(client)
            count += 1
        }
    }

    /// The socket path percent-encoded for a query parameter.
    public var queryValue: String { path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path }

    /// Closes the socket and removes its folder.
    public func remove() {
        close(descriptor)
        try? FileManager.default.removeItem(atPath: folder)
    }
}
