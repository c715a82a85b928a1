import Platform

/// What `LoopbackListener` answers: the callback page at `callbackPath`,
/// `POST /token` with the redirect's fragment and query, 404 otherwise.
struct LoopbackRoutes: Sendable {
    let port: Int
    let callbackPath: String
    /// Whether a redirect belongs to the login waiting (its `state`).
    let accepts: @Sendable (String) -> Bool

    init(port: Int, callbackPath: String, accepts: @escaping @Sendable (String) -> Bool = { _ in true }) {
        self.port = port
        self.accepts = accepts
        let path = callbackPath.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        self.callbackPath = path.hasPrefix("/") ? path : "/" + path
    }

    /// The reply's bytes, and the redirect URL once the login's answer arrived: on the callback's
    /// GET when its query holds `code` or `error` (the authorization-code grant: no script
    /// needed, so a text browser or one with scripts off works), else when the page's script
    /// posted the fragment to `/token` (the implicit grant, whose token only the page sees).
    func answer(_ request: LoopbackRequest) -> (reply: [UInt8], redirect: String?) {
        if request.path == callbackPath, request.method == "GET", Self.holdsAnswer(request.query) {
            let page = Array(Self.donePage.utf8)
            return (
                LoopbackReply.make(200, type: "text/html; charset=utf-8", body: page, sendBody: true),
                "http://127.0.0.1:\(port)\(callbackPath)?\(request.query)"
            )
        }
        if request.path == callbackPath, request.method == "GET" || request.method == "HEAD" {
            let page = Array(Self.page.utf8)
            return (
                LoopbackReply.make(
                    200, type: "text/html; charset=utf-8", body: page, sendBody: request.method == "GET"), nil
            )
        }
        guard request.path == "/token", request.method == "POST" else {
            return (LoopbackReply.text(404, "not found: the login page is \(callbackPath)"), nil)
        }
        if let origin = request.headers["origin"],
            !["http://127.0.0.1:\(port)", "http://localhost:\(port)"].contains(origin.lowercased())
        {
            return (LoopbackReply.text(403, "forbidden: only the login page may post the token"), nil)
        }
        var fields: [String: String] = [:]
        for (name, value) in LoopbackRequest.formFields(request.body) where fields[name] == nil { fields[name] = value }
        var url = "http://127.0.0.1:\(port)\(callbackPath)"
        if let query = fields["query"], !query.isEmpty { url += "?" + query }
        if let fragment = fields["fragment"], !fragment.isEmpty { url += "#" + fragment }
        guard accepts(url) else {
            return (LoopbackReply.text(400, "not the redirect of the login apimacro is waiting for"), nil)
        }
        return (LoopbackReply.text(200, "ok"), url)
    }

    /// Whether a callback's query is the provider's answer: it names `code` or `error`.
    static func holdsAnswer(_ query: String) -> Bool {
        query.split(separator: "&").contains { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return name == "code" || name == "error"
        }
    }

    /// The page for a callback whose query held the answer: nothing left for the browser to do.
    static let donePage = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>apimacro login</title></head>
        <body style="font-family: sans-serif; margin: 3em">
        <p>apimacro: the login's answer arrived; you can close this window.</p>
        </body></html>
        """

    /// The callback page: its script sends the fragment (which never reaches
    /// a server on its own) and the query to `/token`.
    static let page = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>apimacro login</title></head>
        <body style="font-family: sans-serif; margin: 3em">
        <p id="status">apimacro: finishing the login…</p>
        <noscript><p>JavaScript is off, so this page cannot hand the token to apimacro.
        Copy the whole address from the address bar and paste it into the terminal:
        <code>apimacro login NAME --redirect-url 'ADDRESS'</code></p></noscript>
        <script>
        var show = function (text) { document.getElementById("status").textContent = text; };
        var body = "fragment=" + encodeURIComponent(window.location.hash.replace(/^#/, "")) +
            "&query=" + encodeURIComponent(window.location.search.replace(/^\\?/, ""));
        fetch("/token", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: body})
            .then(function (response) {
                if (!response.ok) { throw new Error("HTTP " + response.status); }
                history.replaceState(null, "", window.location.pathname);
                show("apimacro: you can close this window");
            })
            .catch(function () {
                show("apimacro did not receive the login: copy the whole address from the address bar " +
                    "and paste it into the terminal (apimacro login NAME --redirect-url 'ADDRESS').");
            });
        </script>
        </body></html>
        """
}

/// One parsed HTTP/1.1 request (head and body, framed by Content-Length).
struct LoopbackRequest {
    let method: String
    /// The target's path, without its query.
    let path: String
    /// The target's query, without its `?` (percent-encoded as received; empty when none).
    var query = ""
    /// Header values by lower-cased name.
    let headers: [String: String]
    let body: [UInt8]

    enum Parse {
        case incomplete
        case failed(Int)
        case complete(LoopbackRequest)
    }

    /// Parses `bytes` once a whole request has arrived; 413 when it exceeds `limit`.
    static func parse(_ bytes: [UInt8], limit: Int) -> Parse {
        guard let end = headEnd(in: bytes) else {
            return bytes.count > limit ? .failed(413) : .incomplete
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let words = lines[0].split(separator: " ")
        guard words.count == 3, words[2].hasPrefix("HTTP/1."), !words[0].isEmpty, words[1].hasPrefix("/") else {
            return .failed(400)
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return .failed(400) }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            if name == "content-length", let previous = headers[name], previous != value { return .failed(400) }
            headers[name] = value
        }
        if headers["transfer-encoding"] != nil { return .failed(411) }
        let bodyStart = end + 4
        let length: Int
        if let text = headers["content-length"] {
            guard let value = Int(text), value >= 0, text.allSatisfy(\.isASCII) else { return .failed(400) }
            length = value
        } else {
            length = 0
        }
        guard bodyStart + length <= limit else { return .failed(413) }
        guard bytes.count >= bodyStart + length else { return .incomplete }
        let target = words[1]
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return .complete(
            LoopbackRequest(
                method: String(words[0]), path: String(parts.first ?? target),
                query: parts.count == 2 ? String(parts[1].prefix { $0 != "#" }) : "",
                headers: headers, body: Array(bytes[bodyStart..<bodyStart + length])))
    }

    /// `a=1&b=two+words` → decoded pairs.
    static func formFields(_ body: [UInt8]) -> [(String, String)] {
        String(decoding: body, as: UTF8.self).split(separator: "&").map { pair in
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func unescape(_ text: Substring) -> String {
                let spaced = text.replacingLiteral("+", with: " ")
                return spaced.percentDecoded ?? spaced
            }
            return (unescape(halves[0]), halves.count > 1 ? unescape(halves[1]) : "")
        }
    }

    /// Where the blank line that ends the head starts.
    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { index in
            bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10
        }
    }
}

/// HTTP/1.1 replies that close the connection.
enum LoopbackReply {
    static func make(_ status: Int, type: String, body: [UInt8], sendBody: Bool = true) -> [UInt8] {
        let head = [
            "HTTP/1.1 \(status) \(reason(status))", "Content-Type: \(type)", "Content-Length: \(body.count)",
            "Cache-Control: no-store", "Referrer-Policy: no-referrer", "X-Content-Type-Options: nosniff",
            "Connection: close", "", "",
        ].joined(separator: "\r\n")
        return Array(head.utf8) + (sendBody ? body : [])
    }

    static func text(_ status: Int, _ text: String) -> [UInt8] {
        make(status, type: "text/plain; charset=utf-8", body: Array(text.utf8))
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 411: "Length Required"
        case 413: "Content Too Large"
        default: HTTPStatus.reason(status)
        }
    }
}

/// The few POSIX socket calls the listener makes, named so they do not clash with its methods.
enum POSIXSocket {
    #if canImport(Glibc)
        static let stream = Int32(SOCK_STREAM.rawValue)
        static let noSignal = Int32(MSG_NOSIGNAL)
    #else
        static let stream = SOCK_STREAM
        static let noSignal: Int32 = 0
    #endif

    static func closeFD(_ fd: Int32) -> Int32 { close(fd) }

    static func setCloseOnExec(_ fd: Int32) { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

    /// Writes all of `bytes` (the replies are small; a peer that went away is ignored).
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                send(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset, noSignal)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            offset += count
        }
    }

    /// `127.0.0.1:port` as a socket address.
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
