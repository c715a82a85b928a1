import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a raw exchange failed.
enum RawHTTPError: Error, Equatable {
    case badURL(String)
    case connectFailed(Int32)
    case sendFailed(Int32)
    /// The peer reset the connection (ECONNRESET).
    case reset
    /// The peer closed the connection before a complete response head.
    case closedBeforeResponse
    /// The body ended early: `received` of `expected` bytes.
    case truncated(status: Int, expected: Int, received: Int)
    case timeout
    case malformed(String)
}

/// A response as read off the socket.
struct RawResponse {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed by Foundation (an independent check that it is JSON).
    func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }

    func object() throws -> [String: Any] {
        guard let object = try json() as? [String: Any] else { throw RawHTTPError.malformed("not an object") }
        return object
    }

    func array() throws -> [[String: Any]] {
        guard let array = try json() as? [[String: Any]] else { throw RawHTTPError.malformed("not an array") }
        return array
    }
}

/// A blocking HTTP/1.1 client over one POSIX TCP connection: enough to test keep-alive, resets
/// and truncated bodies precisely (no URLSession, no retries, nothing hidden).
final class RawConnection {
    let host: String
    let port: Int
    private let socketDescriptor: Int32
    private var buffer: [UInt8] = []
    private var isOpen = true

    /// `timeoutSeconds` bounds each read: a hang guard only (a full run with builds going once
    /// kept a 20-page walk past 15 s), so it is wide.
    init(host: String, port: Int, timeoutSeconds: Int = 120) throws {
        self.host = host
        self.port = port
        #if canImport(Darwin)
            let streamType = SOCK_STREAM
        #else
            let streamType = Int32(SOCK_STREAM.rawValue)
        #endif
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { throw RawHTTPError.connectFailed(errno) }
        socketDescriptor = descriptor
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
            var one: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(descriptor)
            throw RawHTTPError.badURL(host)
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw RawHTTPError.connectFailed(code)
        }
    }

    /// Opens a connection to the host and port of an `http://host:port/...` URL.
    convenience init(url: String) throws {
        let (host, port, _) = try RawConnection.split(url)
        try self.init(host: host, port: port)
    }

    deinit {
        if isOpen { close(socketDescriptor) }
    }

    func shutdown() {
        if isOpen {
            close(socketDescriptor)
            isOpen = false
        }
    }

    /// `http://host:port/target` → (host, port, target).
    static func split(_ url: String) throws -> (String, Int, String) {
        guard url.hasPrefix("http://") else { throw RawHTTPError.badURL(url) }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[rest.startIndex..<slash]
        let target = slash == rest.endIndex ? "/" : String(rest[slash...])
        let pieces = authority.split(separator: ":")
        guard pieces.count == 2, let port = Int(pieces[1]) else { throw RawHTTPError.badURL(url) }
        return (String(pieces[0]), port, target)
    }

    func transmit(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Darwin)
                let flags: Int32 = 0
            #else
                let flags = Int32(MSG_NOSIGNAL)
            #endif
            let sent = bytes[offset...].withUnsafeBytes { raw in
                send(socketDescriptor, raw.baseAddress, raw.count, flags)
            }
            guard sent > 0 else { throw RawHTTPError.sendFailed(errno) }
            offset += sent
        }
    }

    /// Sends one request (HTTP/1.1, with Host and Content-Length) and reads its response.
    func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> RawResponse {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: \(host):\(port)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try transmit(Array(head.utf8) + body)
        return try readResponse(isHead: method == "HEAD")
    }

    /// Reads more bytes; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        if count == 0 { return false }
        switch errno {
        case ECONNRESET: throw RawHTTPError.reset
        case EAGAIN, EWOULDBLOCK: throw RawHTTPError.timeout
        default: throw RawHTTPError.malformed("recv failed: errno \(errno)")
        }
    }

    /// True when the peer has closed the connection (reads end of stream).
    func peerClosed() -> Bool {
        do {
            return try !fill()
        } catch RawHTTPError.reset {
            return true
        } catch {
            return false
        }
    }

    func readResponse(isHead: Bool = false) throws -> RawResponse {
        let separator = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = RawConnection.find(separator, in: buffer)
            if headerEnd == nil, try !fill() { throw RawHTTPError.closedBeforeResponse }
        }
        guard let end = headerEnd else { throw RawHTTPError.closedBeforeResponse }
        let headText = String(decoding: buffer[0..<end], as: UTF8.self)
        buffer.removeFirst(end + separator.count)
        let lines = headText.components(separatedBy: "\r\n")
        let statusLine = (lines.first ?? "").split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw RawHTTPError.malformed("status line \(headText)")
        }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            return (String(line[line.startIndex..<colon]), value)
        }
        let response = RawResponse(status: status, headers: headers, body: [])
        if isHead || status == 204 || status == 304 || (100..<200).contains(status) {
            return response
        }
        if let lengthText = response.header("content-length"), let length = Int(lengthText) {
            while buffer.count < length {
                if try !fill() {
                    throw RawHTTPError.truncated(status: status, expected: length, received: buffer.count)
                }
            }
            let body = Array(buffer[0..<length])
            buffer.removeFirst(length)
            return RawResponse(status: status, headers: headers, body: body)
        }
        while try fill() {}
        let body = buffer
        buffer.removeAll()
        return RawResponse(status: status, headers: headers, body: body)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count)
        where haystack[index..<index + needle.count].elementsEqual(needle) {
            return index
        }
        return nil
    }
}

/// One request on a fresh connection to an absolute `http://` URL.
func fetch(
    _ url: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8] = []
) throws -> RawResponse {
    let (host, port, target) = try RawConnection.split(url)
    let connection = try RawConnection(host: host, port: port)
    defer { connection.shutdown() }
    return try connection.request(method, target, headers: headers, body: body)
}
