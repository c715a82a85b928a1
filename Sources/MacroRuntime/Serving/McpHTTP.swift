import Clients
import Platform
import Spawning
import Synchronization
import WebAPI

/// The MCP streamable HTTP transport on a loopback address, at `/mcp`.
///
/// Each JSON-RPC message is POSTed there and answered in the response (`application/json`; a
/// notification gets 202). No
/// server-to-client stream is offered (GET is 405) and no session is kept.
///
/// A request whose `Origin` (or `Host`) is not loopback is refused with 403, as the transport
/// specification requires against DNS rebinding: a web page the user visits cannot call tools.
public struct McpHTTP {
    /// The largest request body read.
    static let bodyLimit = 16 << 20
    /// The largest request head (request line and headers).
    static let headLimit = 64 << 10
    /// Connections served at once; more get 503.
    static let connectionLimit = 64

    let server: McpServer
    let port: UInt16

    /// A transport on `port` of 127.0.0.1 (0 picks a free one).
    public init(server: McpServer, port: UInt16) {
        self.server = server
        self.port = port
    }

    /// The port of `address` (`127.0.0.1:PORT` or `localhost:PORT`).
    ///
    /// - Throws: `MacroError` for any other address: the server runs code with the user's
    ///   credentials, so it never listens beyond this machine.
    public static func port(of address: String) throws -> UInt16 {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, ["127.0.0.1", "localhost"].contains(parts[0]), let port = UInt16(parts[1]) else {
            throw MacroError(
                "--http takes 127.0.0.1:PORT (or localhost:PORT), not '\(address.prefix(100))': the MCP server "
                    + "listens on this machine's loopback only, as its tools run with your credentials")
        }
        return port
    }

    /// Listens, gives `ready` the address it serves, and serves until a signal ends it
    /// (`.interrupted` after Ctrl-C).
    public func serve(ready: (String) -> Void) throws -> ExitReport {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else {
            throw MacroError("--http: cannot open a socket: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(listener, F_SETFD, FD_CLOEXEC)
        defer { close(listener) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            throw MacroError(
                "--http: cannot listen on 127.0.0.1:\(port): \(String(cString: strerror(errno))) "
                    + "(choose another port, or 0 for a free one)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        ready("http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/mcp")
        let open = Atomic<Int>(0)
        let server = self.server
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { return .interrupted("apimacro mcp") }
                if [ECONNABORTED, EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(errno) { continue }
                throw MacroError("--http: accept failed: \(String(cString: strerror(errno)))")
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            if open.add(1, ordering: .relaxed).newValue > Self.connectionLimit {
                _ = HTTPConnection(descriptor: connection).send(status: 503, body: Data("too many connections\n".utf8))
                close(connection)
                open.subtract(1, ordering: .relaxed)
                continue
            }
            do {
                try NativeThread.start(name: "apimacro-http", stackSize: 8 << 20) {
                    HTTPConnection(descriptor: connection).serve(server)
                    close(connection)
                    open.subtract(1, ordering: .relaxed)
                }
            } catch {
                _ = HTTPConnection(descriptor: connection).send(status: 503, body: Data("\(error.description)\n".utf8))
                close(connection)
                open.subtract(1, ordering: .relaxed)
            }
        }
    }
}

/// One client's connection: requests read and answered in turn (keep-alive).
struct HTTPConnection {
    let descriptor: Int32

    /// A request's method, path, headers (names in lower case) and body.
    struct Request {
        var method: String
        var path: String
        var headers: [String: String]
        var body: Data
    }

    /// Why a request could not be read: the status to answer, or nil to just close.
    struct Failure: Error {
        let status: Int?
        let message: String
    }

    func serve(_ server: McpServer) {
        var timeout = timeval(tv_sec: 300, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var pending = Data()
        while true {
            let request: Request
            do {
                request = try read(&pending)
            } catch let failure as Failure {
                if let status = failure.status { _ = send(status: status, body: Data((failure.message + "\n").utf8)) }
                return
            } catch {
                return
            }
            guard answer(request, server) else { return }
            if request.headers["connection"]?.lowercased() == "close" { return }
        }
    }

    /// Answers one request; false when the connection is to close.
    private func answer(_ request: Request, _ server: McpServer) -> Bool {
        if let origin = request.headers["origin"], !Self.isLoopback(origin: origin) {
            return send(
                status: 403,
                body: Data("Origin \(origin.prefix(200)) is not allowed: apimacro mcp answers this machine only\n".utf8)
            )
        }
        if let host = request.headers["host"], !Self.isLoopback(host: host) {
            return send(status: 403, body: Data("Host \(host.prefix(200)) is not allowed\n".utf8))
        }
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.path
        guard path == "/mcp" else {
            return send(status: 404, body: Data("not found: the MCP endpoint is /mcp\n".utf8))
        }
        switch request.method {
        case "POST":
            guard let message = JSONValue.parse(request.body) else {
                return send(
                    status: 400,
                    body: McpServer.error(.null, -32700, "parse error: the body is not JSON").text,
                    type: "application/json")
            }
            guard let answer = server.answer(message) else { return send(status: 202, body: Data()) }
            return send(status: 200, body: answer.text, type: "application/json")
        case "DELETE":
            // No session is kept: ending one ends nothing.
            return send(status: 200, body: Data())
        default:
            return send(
                status: 405, body: Data("only POST (and DELETE) at /mcp: no event stream is offered\n".utf8),
                extra: ["Allow: POST, DELETE"])
        }
    }

    /// Whether an `Origin` header names this machine (`http://127.0.0.1:PORT`, `http://localhost`, ...).
    static func isLoopback(origin: String) -> Bool {
        guard let url = URL(string: origin), let host = url.host, ["http", "https"].contains(url.scheme ?? "") else {
            return false
        }
        return ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
    }

    /// Whether a `Host` header names this machine.
    static func isLoopback(host: String) -> Bool {
        let name: Substring
        if host.hasPrefix("[") {
            name = host.prefix { $0 != "]" } + "]"
        } else {
            name = host.split(separator: ":", maxSplits: 1).first ?? ""
        }
        return ["127.0.0.1", "localhost", "[::1]"].contains(name.lowercased())
    }

    private func receive(_ pending: inout Data) throws {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                pending.append(contentsOf: chunk[0..<count])
                return
            }
            if count < 0, errno == EINTR { continue }
            throw Failure(status: nil, message: "closed")
        }
    }

    private func read(_ pending: inout Data) throws -> Request {
        let separator = Data("\r\n\r\n".utf8)
        var headEnd = pending.firstRange(of: separator)
        while headEnd == nil {
            if pending.count > HTTPConnectionLimits.head {
                throw Failure(status: 431, message: "request head larger than 64 KiB")
            }
            try receive(&pending)
            headEnd = pending.firstRange(of: separator)
        }
        guard let end = headEnd else { throw Failure(status: nil, message: "closed") }
        let head = String(decoding: pending[pending.startIndex..<end.lowerBound], as: UTF8.self)
        pending = Data(pending[end.upperBound...])
        // "\r\n" is one Character: split as `components(separatedBy:)` did, CRLF by CRLF.
        var lines = head.split(separator: "\r\n" as Character, omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            throw Failure(status: 400, message: "bad request line")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Failure(status: 400, message: "bad header line") }
            headers[line[..<colon].trimmingWhitespace().lowercased()] =
                line[line.index(after: colon)...].trimmingWhitespace()
        }
        if headers["transfer-encoding"] != nil {
            throw Failure(status: 501, message: "chunked bodies are not read: send Content-Length")
        }
        let length = headers["content-length"].map { Int($0) } ?? 0
        guard let length, length >= 0 else { throw Failure(status: 400, message: "bad Content-Length") }
        guard length <= HTTPConnectionLimits.body else {
            throw Failure(status: 413, message: "request body larger than 16 MiB")
        }
        while pending.count < length { try receive(&pending) }
        let body = Data(pending.prefix(length))
        pending = Data(pending.dropFirst(length))
        return Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: body)
    }

    /// Writes a response; false when the client has gone.
    func send(status: Int, body: Data, type: String = "text/plain; charset=utf-8", extra: [String] = []) -> Bool {
        let reason =
            [
                200: "OK", 202: "Accepted", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
                405: "Method Not Allowed", 413: "Content Too Large", 431: "Request Header Fields Too Large",
                501: "Not Implemented", 503: "Service Unavailable",
            ][status] ?? "Error"
        var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.count)\r\n"
        if !body.isEmpty { head += "Content-Type: \(type)\r\n" }
        for line in extra { head += line + "\r\n" }
        head += "\r\n"
        var bytes = [UInt8](head.utf8)
        bytes.append(contentsOf: body)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }
}

/// `McpHTTP`'s limits, where `HTTPConnection` reads them.
enum HTTPConnectionLimits {
    static let head = McpHTTP.headLimit
    static let body = McpHTTP.bodyLimit
}
