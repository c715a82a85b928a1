import Synchronization

/// A scriptable origin for the HTTP cache's RFC 9111 conformance tests: the
/// request says how to answer, so each test states the origin's headers next to
/// what it expects of the cache (in the manner of the cache-tests.fyi suite).
///
/// `ANY /conformance/{name}?status=N&h=Name:%20Value&h=…&etag=X&echo=Header`
/// - `status`: the status (default 200);
/// - `h`: a response header line, repeatable (`Name: Value`, percent-encoded);
/// - `etag`: sends `ETag: "X"`, and a GET whose `If-None-Match` names it gets 304;
/// - `echo`: the body's `echo` holds the request's value of that header.
/// The JSON body's `serial` counts the requests `{name}` has answered (any method),
/// so a test tells a stored answer (same serial) from a new one. A `Transfer-Encoding` among the
/// `h` lines is sent as given, the body then ending with the connection (no `Content-Length`).
struct CacheConformanceRoutes: RouteHandler {
    private final class Serials: Sendable {
        let counts = Mutex<[String: Int]>([:])
    }
    private let serials = Serials()

    func respond(to request: RouteRequest) -> Response? {
        guard let name = request.match("*", "/conformance/{name}")?["name"] else { return nil }
        let serial = serials.counts.withLock { counts -> Int in
            counts[name, default: 0] += 1
            return counts[name, default: 0]
        }
        var status = 200
        var headers: [(String, String)] = []
        var etag: String?
        var echo: String?
        for (key, value) in URLCoding.formPairs(request.recorded.rawQuery) {
            switch key {
            case "status": status = Int(value) ?? 200
            case "h":
                let parts = value.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                headers.append((String(parts[0]), String(parts[1].drop { $0 == " " })))
            case "etag": etag = "\"\(value)\""
            case "echo": echo = value
            default: continue
            }
        }
        var fields: [(String, JSON)] = [
            ("name", .string(name)), ("serial", .int(serial)), ("method", .string(request.method)),
            ("status", .int(status)),
        ]
        if let echo { fields.append(("echo", request.recorded.header(echo).map(JSON.string) ?? .null)) }
        var response = Response.json(.object(fields), status: status, headers: headers)
        if headers.contains(where: { $0.0.lowercased() == "transfer-encoding" }) {
            response.hostile = .closeDelimited(response.body)
        }
        if let etag {
            response.etag = etag
            if status != 200 { response.headers.append(("ETag", etag)) }
        }
        return response
    }
}
