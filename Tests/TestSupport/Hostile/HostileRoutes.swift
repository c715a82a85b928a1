import Foundation

/// Routes that attack the client (`/hostile/…`), so the defences stay covered.
///
/// - `ANY /hostile/redirect/unix?socket=PATH[&status=307]`: a redirect (307 by default; any 3xx
///   given) to `http+unix://<PATH percent-encoded>/containers/create?name=pwned`, the Docker-socket
///   attack; a client that follows it connects to the Unix socket at PATH.
/// - `ANY /hostile/redirect/file`: 302 to `file:///etc/passwd`.
/// - `ANY /hostile/redirect/ftp`: 302 to `ftp://127.0.0.1/pub/file`.
/// - `ANY /hostile/redirect/downgrade[?to=URL]`: 302 to plain `http://` on a host that is not
///   loopback (default `http://downgrade.invalid/landed`), for a client that arrived over https.
/// - `GET /hostile/link-next?to=URL`: `[{"id": 1}]` with `Link: <URL>; rel="next"`.
/// - `GET /hostile/next-url?to=URL`: an Instagram-style page whose `pagination.next_url` is URL.
/// - `ANY /hostile/echo-status/N`: the request headers and query echoed back (`{"message", "headers",
///   "query"}`) with error status N (400–599), so they land in an exception's `body`.
/// - `ANY /hostile/echo-text[?type=MEDIA]`: 200 with a body that is neither JSON nor XML, quoting
///   every request header (`name: value & …`), as `text/plain` or MEDIA: a parse error's body echoes them.
/// - `GET /hostile/stall[?prefix=TEXT]`: 200, `Content-Length: 1048576`, the body `[1,` (or TEXT),
///   then silence until the client gives up.
/// - `GET /hostile/trickle[?interval_ms=N]`: 200, `Content-Length: 1048576`, then one byte every
///   N ms (default 1000) without end.
/// - `GET /hostile/big?bytes=N`: a complete JSON string body of N bytes (for size limits).
/// - `GET /hostile/huge-head`: 200 with 400 header lines of 1 KiB each (a 400 KiB head).
/// - `GET /hostile/gzip-bomb`: 290 bytes of gzip (`Content-Encoding: gzip`) that inflate to 256 KiB.
/// - `GET /hostile/gzip-chunked`: a legitimate gzip answer (`Content-Encoding: gzip`) sent with
///   `Transfer-Encoding: chunked` in three chunks: the GitHub organization of
///   `github/octokit-get-organization.json` (1,000 bytes of JSON, 361 of gzip).
///
/// - `GET /hostile/coded?ce=CODINGS&te=CODINGS`: the gzip bytes of `/hostile/gzip-chunked`, sent
///   as they are with `Content-Encoding: CODINGS` (if `ce`) and `Transfer-Encoding: CODINGS` (if
///   `te`: then the body ends with the connection); whatever the codings say, the bytes are gzip.
///
/// - `ANY /hostile/echo-message/N`: status N (200–599) with `{"message", "headers", "query"}`
///   whose `message` quotes every request header's value and every query value (`you sent
///   V1, V2, …`, as an API's error message may), and the `Authorization` value echoed in an
///   `X-Echoed` response header: credentials echoed in a body, a message and a header.
/// - `ANY /hostile/echo-escaped`: `{"token": "…"}` holding the `Authorization` credential (after
///   its scheme) with its last letter JSON-escaped (`\u0067`): text jq decodes into the token.
///
/// Every request header and the query string come back from `/echo` (`EchoRoutes`).
struct HostileRoutes: RouteHandler {
    func respond(to request: RouteRequest) -> Response? {
        guard request.segments.first == "hostile" else { return nil }
        if request.match("*", "/hostile/redirect/unix") != nil {
            guard let socket = request.query["socket"], !socket.isEmpty else {
                return .badRequest("give the socket path: /hostile/redirect/unix?socket=/tmp/x.sock")
            }
            let host = socket.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? socket
            return redirect(request.queryInt("status") ?? 307, to: "http+unix://\(host)/containers/create?name=pwned")
        }
        if request.match("*", "/hostile/redirect/file") != nil { return redirect(302, to: "file:///etc/passwd") }
        if request.match("*", "/hostile/redirect/ftp") != nil { return redirect(302, to: "ftp://127.0.0.1/pub/file") }
        if request.match("*", "/hostile/redirect/downgrade") != nil {
            return redirect(302, to: request.query["to"] ?? "http://downgrade.invalid/landed")
        }
        if request.match("GET", "/hostile/link-next") != nil {
            guard let target = request.query["to"] else { return .badRequest("give the next URL: ?to=URL") }
            var response = Response.json(.array([.object([("id", .int(1))])]))
            response.setHeader("Link", "<\(target)>; rel=\"next\"")
            return response
        }
        if request.match("GET", "/hostile/next-url") != nil {
            guard let target = request.query["to"] else { return .badRequest("give the next URL: ?to=URL") }
            return .json(
                .object([
                    ("meta", .object([("code", .int(200))])),
                    ("data", .array([.object([("id", .string("1"))])])),
                    ("pagination", .object([("next_url", .string(target))])),
                ]))
        }
        if let captures = request.match("*", "/hostile/echo-status/{status}") {
            let status = Int(captures["status"] ?? "") ?? 400
            let headers = request.recorded.headers.map { (name: String, value: String) in
                (name.lowercased(), JSON.string(value))
            }
            let query = request.query.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }
            return .json(
                .object([
                    ("message", .string("echoed with status \(status)")), ("headers", .object(headers)),
                    ("query", .object(query)),
                ]),
                status: (400...599).contains(status) ? status : 400)
        }
        if let captures = request.match("*", "/hostile/echo-message/{status}") {
            let status = Int(captures["status"] ?? "") ?? 400
            let values = request.recorded.headers.map(\.1) + request.query.sorted { $0.key < $1.key }.map(\.value)
            let headers = request.recorded.headers.map { (name: String, value: String) in
                (name.lowercased(), JSON.string(value))
            }
            let query = request.query.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }
            return .json(
                .object([
                    ("message", .string("you sent " + values.joined(separator: ", "))), ("headers", .object(headers)),
                    ("query", .object(query)),
                ]),
                status: (200...599).contains(status) ? status : 400,
                headers: [("X-Echoed", request.recorded.header("authorization") ?? "none")])
        }
        if request.match("*", "/hostile/echo-escaped") != nil {
            let value = request.recorded.header("authorization") ?? ""
            let credential = value.split(separator: " ", maxSplits: 1).last.map(String.init) ?? value
            var text = credential
            if let last = text.lastIndex(where: { $0.isASCII && $0.isLetter }), let ascii = text[last].asciiValue {
                text.replaceSubrange(last...last, with: String(format: "\\u%04x", Int(ascii)))
            }
            return Response(
                status: 200, headers: [("Content-Type", Response.jsonContentType)],
                body: Array("{\"token\": \"\(text)\"}".utf8))
        }
        if request.match("*", "/hostile/echo-text") != nil {
            let quoted = request.recorded.headers.map { "\($0.0): \($0.1)" }.joined(separator: " & ")
            return Response(
                status: 200, headers: [("Content-Type", request.query["type"] ?? "text/plain")],
                body: Array("<echo>you sent & \(quoted)".utf8))
        }
        if request.match("GET", "/hostile/stall") != nil {
            var response = Response(status: 200, headers: [("Content-Type", Response.jsonContentType)])
            response.hostile = .stall(prefix: Array((request.query["prefix"] ?? "[1,").utf8))
            return response
        }
        if request.match("GET", "/hostile/trickle") != nil {
            var response = Response(status: 200, headers: [("Content-Type", Response.jsonContentType)])
            response.hostile = .trickle(intervalMilliseconds: request.queryInt("interval_ms") ?? 1000)
            return response
        }
        if request.match("GET", "/hostile/big") != nil {
            let size = max(2, min(request.queryInt("bytes") ?? 1024, 64 << 20))
            return Response(
                status: 200, headers: [("Content-Type", Response.jsonContentType)],
                body: [UInt8](repeating: UInt8(ascii: "\""), count: 1)
                    + [UInt8](repeating: UInt8(ascii: "x"), count: size - 2)
                    + [UInt8(ascii: "\"")])
        }
        if request.match("GET", "/hostile/huge-head") != nil {
            // 400 header lines of 1 KiB: a response head no API sends, past the transport's cap.
            let filler = String(repeating: "a", count: 1024)
            return Response(
                status: 200, headers: [("Content-Type", "text/plain")] + (0..<400).map { ("X-Filler-\($0)", filler) },
                body: Array("ok".utf8))
        }
        if request.match("GET", "/hostile/gzip-chunked") != nil {
            let gzip = Array(Data(base64Encoded: HostileRoutes.gzipOrganization) ?? Data())
            var response = Response(
                status: 200, headers: [("Content-Type", Response.jsonContentType), ("Content-Encoding", "gzip")])
            let third = gzip.count / 3
            response.hostile = .chunked([
                Array(gzip[..<third]), Array(gzip[third..<(2 * third)]), Array(gzip[(2 * third)...]),
            ])
            return response
        }
        if request.match("GET", "/hostile/coded") != nil {
            var response = Response(
                status: 200, headers: [("Content-Type", Response.jsonContentType)],
                body: Array(Data(base64Encoded: HostileRoutes.gzipOrganization) ?? Data()))
            if let codings = request.query["ce"] { response.headers.append(("Content-Encoding", codings)) }
            if let codings = request.query["te"] {
                response.headers.append(("Transfer-Encoding", codings))
                response.hostile = .closeDelimited(response.body)
            }
            return response
        }
        if request.match("GET", "/hostile/gzip-bomb") != nil {
            return Response(
                status: 200, headers: [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")],
                body: Array(Data(base64Encoded: HostileRoutes.gzipBomb) ?? Data()))
        }
        return nil
    }

    private func redirect(_ status: Int, to location: String) -> Response {
        Response(
            status: status, headers: [("Location", location), ("Content-Type", "text/plain")],
            body: Array("redirecting".utf8))
    }

    /// `gzip.compress(json.dumps(fixture[0]["response"]).encode(), 9, mtime=0)` of
    /// `github/octokit-get-organization.json`: the organization `octokit-fixture-org`.
    static let gzipOrganization =
        "H4sIAAAAAAACA6WTUUvDMBDHv0rps1vTsU0oDBF8HeIQFF9K1t7auLQJyaU6x767uayi0wlSIQ/J3f1/l7tc9rFUlWjjLIpVgWorcLQRr+gMjJSp4osoFqV3powxv29VCXkwxMub6/nqYcb442q2vFssKNQZSa4aUdssSbgW40pg7dbjQjWJ59nklyQGtLL5MH0SxESBDlocjDmqiVMrtR2MCeLQOGsdDMYc1cRpoFmDGQzq5ft+cyCkdmspivyf5FPKSQLeceTmBzhY7aSnOwumUC36todELqExu+oWU0KUYAsjNApF09k6KUNP8w6M2AigIdxwaYHei9vcX4i34o1TfK6NeobCP2YWoXEfIWFOBCqzOxPQF3OcpSyaTj5tlbAhkn7ARkmpXny5J2fRVv25xkZ+L/trL8+Pf2GAI5Q5R9JNWHo5Splf9+k8Y8yvp/C9dPmHKNxpIP/tl4bEh3cIYF0q6AMAAA=="

    /// `gzip.compress(b"0" * 262144, 9, mtime=0)`: 290 bytes that inflate about 900 times.
    static let gzipBomb =
        "H4sIAAAAAAACA+3BMQEAAADCoErrn87bDkABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAALwBPwU/qgAABAA="
}
