import CCurl
import Platform

/// One libcurl easy handle and what its callbacks collect, reused request after request
/// (the connection stays open in the share).
///
/// One transfer at a time; handed between threads only whole (a transport's idle pool,
/// the transfer thread), hence `@unchecked`.
final class CurlEasy: @unchecked Sendable {
    let library: CurlLibrary
    let handle: UnsafeMutableRawPointer
    /// libcurl's own account of a failure (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// The header fields and user agent `headerList` was built from, while the handle's
    /// `CURLOPT_HTTPHEADER` points at it: a request with the same ones (most requests of a
    /// client) keeps the list instead of building it again (~14 k instructions).
    private var headerListFor: (fields: [(name: String, value: String)], userAgent: String, sendsBody: Bool)?

    // What the callbacks collect for the transfer now running.
    /// The head's fields, in `Headers`' own form: the response takes the array as it is.
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []
    /// The final head's Content-Length (0 when none): reserved once body bytes arrive.
    private var declaredLength = 0
    private var limit = 0
    private var tooLarge = false
    private var bomb = false
    /// The body's bytes off the wire when libcurl was last asked (see `received`).
    private var wireSeen = 0
    /// Times the request went onto the wire in this transfer (see `sending`).
    private var sends = 0
    /// Bytes of response heads received in this transfer (1xx heads included), and whether they
    /// passed `maximumHeadBytes`.
    fileprivate var headBytes = 0
    private var headTooLarge = false
    /// The most a transfer's response heads may take: a hostile server streaming header lines
    /// (or endless 1xx heads) is cut off here, not at the deadline.
    static let maximumHeadBytes = 256 << 10
    /// The proxy this transfer goes through, if any (named, its userinfo hidden, in errors).
    private var proxy: String?
    /// The last URL parsed for libcurl (`CURLOPT_CURLU`) and what it was parsed from (see `setURL`).
    private var parsedURL: OpaquePointer?
    private var parsedFrom = ""
    /// The CA bundle this handle trusts instead of the system's, if any.
    private var caBundle: String?
    /// The constant options are set (see `prepare`).
    private var configured = false
    /// libcurl was told, during this transfer, to hand the body over as sent (see `headerLine`).
    private var passesBodyAsSent = false

    init(_ library: CurlLibrary) throws {
        guard let handle = library.api.pointee.easy_init() else {
            throw APIError(.network, "cannot create a libcurl handle (curl_easy_init failed)")
        }
        self.library = library
        self.handle = handle
        errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        library.api.pointee.easy_cleanup(handle)
        if let parsedURL { library.api.pointee.url_cleanup(parsedURL) }
        if let headerList { library.api.pointee.slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// Sets the handle up for `exchange`.
    ///
    /// The options every request shares (callbacks, protocols, share, decoding, the CA bundle)
    /// are set once per handle, again only after a `curl_easy_reset` when the CA bundle changes
    /// (a handle serves every transport of its thread); each request sets only the options
    /// that vary (URL, deadline, size cap, proxy, method, body, headers), each to a value, so
    /// nothing of the previous request stays. `curl_easy_reset` keeps live connections, DNS
    /// and TLS caches.
    func prepare(
        _ exchange: Exchange, userAgent: String, limit: Int, network: NetworkSettings, origin: Origin,
        nonIdempotentAge: Int
    ) throws {
        let api = library.api
        headers.removeAll(keepingCapacity: true)
        body = []
        declaredLength = 0
        self.limit = limit
        tooLarge = false
        bomb = false
        wireSeen = 0
        headBytes = 0
        headTooLarge = false
        sends = 0
        errorBuffer[0] = 0
        var failed = false
        func set(_ code: CURLcode) { failed = failed || code != CURLE_OK }
        if !configured || caBundle != network.caBundle {
            api.pointee.easy_reset(handle)
            headerListFor = nil
            setConstantOptions(caBundle: network.caBundle, set: set)
            caBundle = network.caBundle
            configured = !failed
            passesBodyAsSent = false
        }
        if passesBodyAsSent {
            set(ccurl_setopt_long(api, handle, CURLOPT_HTTP_CONTENT_DECODING, 1))
            passesBodyAsSent = false
        }
        setURL(exchange.url, set: set)
        // The deadline covers the whole exchange, connect to the last body byte. libcurl reads
        // 0 as "no limit": the shortest deadline is 1 ms.
        let milliseconds = max(1, Seconds.milliseconds(min(exchange.timeout, 1e9 / 1000)))
        set(ccurl_setopt_long(api, handle, CURLOPT_TIMEOUT_MS, milliseconds))
        set(ccurl_setopt_offset(api, handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limit)))
        // The proxy comes from NetworkSettings alone (resolved once by Settings); the empty
        // string also stops libcurl reading http_proxy/NO_PROXY from the environment itself.
        // libcurl 7.88 does NOT bypass a proxy for localhost or 127.0.0.1 on its own (checked
        // with `curl -x http://127.0.0.1:1 http://localhost:PORT/`: it dials the proxy), so a
        // loopback origin goes direct only when NetworkSettings.proxy(for:) says so.
        let proxy = network.proxy(for: origin)
        self.proxy = proxy
        set(ccurl_setopt_string(api, handle, CURLOPT_PROXY, proxy ?? ""))
        // CONNECT even for http: the request's headers (credentials) never reach the proxy in clear.
        set(ccurl_setopt_long(api, handle, CURLOPT_HTTPPROXYTUNNEL, proxy == nil ? 0 : 1))
        set(ccurl_setopt_long(api, handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, proxy == nil ? 0 : 1))
        try setMethodAndBody(exchange, nonIdempotentAge: nonIdempotentAge, set: set)
        try setHeaders(exchange, userAgent: userAgent)
        if failed {
            throw APIError(
                .network,
                "\(exchange.method) \(exchange.url): libcurl refused an option (\(library.version) is too old?)",
                url: exchange.url)
        }
    }

    /// Sets the request's URL: `CURLOPT_URL`, and the same URL parsed (`CURLOPT_CURLU`), which a
    /// request to the URL of the one before reuses.
    ///
    /// libcurl 7.88 parses `CURLOPT_URL` at every transfer and prints it back whole
    /// (`curl_url_set`, then `curl_url_get` through its character-at-a-time printf: ~11 k
    /// instructions); given a parsed handle it copies that instead (`curl_url_dup`), and the
    /// string stays what error messages and a retry on a new connection see. The parse is
    /// libcurl's own, with its flags for `CURLOPT_URL`; a URL it refuses goes as
    /// `CURLOPT_URL` alone, so libcurl refuses it as before.
    private func setURL(_ url: String, set: (CURLcode) -> Void) {
        let api = library.api
        set(ccurl_setopt_string(api, handle, CURLOPT_URL, url))
        if parsedURL == nil || !Headers.sameBytes(parsedFrom, url) {
            parsedFrom = ""
            if parsedURL == nil { parsedURL = api.pointee.url() }
            if let parsedURL, ccurl_url_parse(api, parsedURL, url) != 0 { parsedFrom = url }
        }
        let parsed = parsedFrom.isEmpty ? nil : parsedURL
        set(ccurl_setopt_pointer(api, handle, CURLOPT_CURLU, parsed.map { UnsafeMutableRawPointer($0) }))
    }

    /// The options every request on this handle shares, set after `curl_easy_reset`.
    private func setConstantOptions(caBundle: String?, set: (CURLcode) -> Void) {
        let api = library.api
        let own = Unmanaged.passUnretained(self).toOpaque()
        set(ccurl_setopt_pointer(api, handle, CURLOPT_SHARE, library.share))
        set(ccurl_setopt_pointer(api, handle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer)))
        // Threads, and Python owns SIGALRM (the macro deadline): libcurl never touches signals.
        set(ccurl_setopt_long(api, handle, CURLOPT_NOSIGNAL, 1))
        // http(s) only, also for anything libcurl might be asked to follow; redirects belong to
        // the pipeline's RedirectStage, which applies SchemeRule to every hop.
        set(ccurl_setopt_string(api, handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(ccurl_setopt_string(api, handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        set(ccurl_setopt_long(api, handle, CURLOPT_FOLLOWLOCATION, 0))
        set(ccurl_setopt_long(api, handle, CURLOPT_CONNECTTIMEOUT_MS, 10_000))
        // Accept-Encoding: every coding libcurl decodes (gzip, deflate, br and zstd); the write
        // callback bounds the ratio. A response in any other coding arrives as sent (`headerLine`).
        set(ccurl_setopt_string(api, handle, CURLOPT_ACCEPT_ENCODING, ""))
        // Whether a host bypasses the proxy is NetworkSettings' decision alone (`prepare` sets
        // CURLOPT_PROXY to "" for it): libcurl reads no_proxy/NO_PROXY from the environment
        // whenever this option is unset, even for a proxy it was given, and NO_PROXY=* would
        // turn APIMACRO_HTTPS_PROXY off.
        set(ccurl_setopt_string(api, handle, CURLOPT_NOPROXY, ""))
        if let caBundle {
            // The bundle replaces the system's authorities: libcurl's built-in CApath
            // (/etc/ssl/certs on Debian) stays on beside CURLOPT_CAINFO unless it is cleared, and
            // would still trust every authority installed there.
            set(ccurl_setopt_string(api, handle, CURLOPT_CAINFO, caBundle))
            set(ccurl_setopt_pointer(api, handle, CURLOPT_CAPATH, nil))
            // An https:// proxy's own certificate is checked against the same authorities alone.
            set(ccurl_setopt_string(api, handle, CURLOPT_PROXY_CAINFO, caBundle))
            set(ccurl_setopt_pointer(api, handle, CURLOPT_PROXY_CAPATH, nil))
        }
        set(ccurl_setopt_pointer(api, handle, CURLOPT_WRITEDATA, own))
        set(ccurl_setopt_write(api, handle, CURLOPT_WRITEFUNCTION, curlWrite))
        set(ccurl_setopt_pointer(api, handle, CURLOPT_HEADERDATA, own))
        set(ccurl_setopt_write(api, handle, CURLOPT_HEADERFUNCTION, curlHeader))
        set(ccurl_setopt_pointer(api, handle, CURLOPT_PREREQDATA, own))
        set(ccurl_setopt_prereq(api, handle, curlPrerequest))
    }

    private func setMethodAndBody(_ exchange: Exchange, nonIdempotentAge: Int, set: (CURLcode) -> Void) throws {
        let api = library.api
        let method = exchange.method
        // The method goes into the request line as it is: CR, LF or a space would forge one.
        guard Self.isToken(method) else {
            throw APIError(
                .invalidRequest,
                "the method \(method.debugDescription) is not an HTTP token; nothing was sent to \(exchange.url)",
                url: exchange.url)
        }
        let sendsBody = Self.sendsBody(exchange)
        // A kept-alive connection the server closes as the request leaves would fail a
        // non-idempotent request (see `sending`: it is never sent twice, nor retried), so such
        // a request reuses only a connection that was busy within the last
        // `nonIdempotentAge` seconds (the transport's `nonIdempotentConnectionAge`, 2 s), well
        // inside any server's idle timeout; others
        // reuse a connection up to libcurl's default age.
        set(
            ccurl_setopt_long(
                api, handle, CURLOPT_MAXAGE_CONN,
                exchange.isIdempotent ? Self.connectionAge : nonIdempotentAge))
        // Back to a plain GET (method, upload and no-body flags), then the request's own method.
        set(ccurl_setopt_long(api, handle, CURLOPT_HTTPGET, 1))
        set(ccurl_setopt_pointer(api, handle, CURLOPT_CUSTOMREQUEST, nil))
        if method == "HEAD" {
            set(ccurl_setopt_long(api, handle, CURLOPT_NOBODY, 1))
        } else if method != "GET" || sendsBody {
            set(ccurl_setopt_string(api, handle, CURLOPT_CUSTOMREQUEST, method))
        }
        if sendsBody {
            set(ccurl_setopt_offset(api, handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(exchange.body.count)))
            exchange.body.withUnsafeBytes { bytes in
                // libcurl keeps its own copy; an empty body still needs a valid pointer.
                set(
                    ccurl_setopt_pointer(
                        api, handle, CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(errorBuffer))))
            }
        }
    }

    /// Whether `exchange` goes with a body (`CURLOPT_COPYPOSTFIELDS`): libcurl makes it a POST.
    private static func sendsBody(_ exchange: Exchange) -> Bool {
        if !exchange.body.isEmpty { return true }
        switch exchange.method {
        case "POST", "PUT", "PATCH": return true
        default: return false
        }
    }

    /// The request's headers, as given, with libcurl's own `Accept: */*` turned off.
    ///
    /// libcurl adds Host and Content-Length; for a request with a body its `Expect:
    /// 100-continue` and form Content-Type are turned off too (without a body it adds
    /// neither). `Accept-Encoding`, unless given, is libcurl's own value
    /// (`CurlLibrary.acceptEncoding`).
    private func setHeaders(_ exchange: Exchange, userAgent: String) throws {
        let fields = exchange.headers.fields
        let sendsBody = Self.sendsBody(exchange)
        if let built = headerListFor, headerList != nil, built.sendsBody == sendsBody,
            Headers.sameBytes(built.userAgent, userAgent), Headers.sameBytes(built.fields, fields)
        {
            return
        }
        let api = library.api
        headerListFor = nil
        if let headerList { api.pointee.slist_free_all(headerList) }
        headerList = nil
        var list: UnsafeMutablePointer<curl_slist>?
        func append(_ line: String) { list = api.pointee.slist_append(list, line) }
        for (name, value) in exchange.headers {
            // A name or value with CR, LF or NUL would smuggle a header (or a request) onto the wire.
            guard Self.isToken(name), !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                if let list { api.pointee.slist_free_all(list) }
                throw APIError(
                    .invalidRequest,
                    "\(exchange.method) \(exchange.url): the header \(name.debugDescription) has a character HTTP does not allow in a header; nothing was sent",
                    url: exchange.url)
            }
            // "Name:" would delete the header; "Name;" sends it with an empty value.
            append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        let headers = exchange.headers
        if headers["User-Agent"] == nil { append("User-Agent: \(userAgent)") }
        if headers["Accept"] == nil { append("Accept:") }
        if headers["Accept-Encoding"] == nil, let accepted = library.acceptEncoding {
            append("Accept-Encoding: \(accepted)")
        }
        if sendsBody {
            if headers["Expect"] == nil { append("Expect:") }
            if headers["Content-Type"] == nil { append("Content-Type:") }
        }
        headerList = list
        _ = ccurl_setopt_slist(api, handle, CURLOPT_HTTPHEADER, list)
        headerListFor = (fields, userAgent, sendsBody)
    }

    /// An HTTP token (RFC 9110 §5.6.2): what a header name may be.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    /// The response once a transfer ended with `code`, or the error it is.
    func finish(_ code: CURLcode, _ exchange: Exchange) throws -> Response {
        guard code == CURLE_OK else { throw failure(code, exchange) }
        // The exact ratio, now that libcurl has counted every byte off the wire (during the
        // transfer the count may lag one read, so `received` allows one read buffer on top).
        var wire: curl_off_t = 0
        _ = ccurl_getinfo_offset(library.api, handle, CURLINFO_SIZE_DOWNLOAD_T, &wire)
        if body.count > Int(max(wire, 1)) * CurlTransport.decompressionRatio {
            bomb = true
            throw failure(code, exchange)
        }
        var status = 0
        _ = ccurl_getinfo_long(library.api, handle, CURLINFO_RESPONSE_CODE, &status)
        var response = Response(status: status, headers: Headers(fields: headers), body: body, url: exchange.url)
        response.timing = timing()
        body = []
        return response
    }

    /// libcurl's phases of the transfer just ended, in milliseconds (`CURLINFO_*_TIME_T`, each
    /// counted from the start): DNS, connect and TLS are -1 on a reused connection.
    func timing() -> Response.Timing {
        func microseconds(_ info: CURLINFO) -> Double {
            var value: curl_off_t = 0
            _ = ccurl_getinfo_offset(library.api, handle, info, &value)
            return Double(value)
        }
        let lookup = microseconds(CURLINFO_NAMELOOKUP_TIME_T)
        let connected = microseconds(CURLINFO_CONNECT_TIME_T)
        let handshaken = microseconds(CURLINFO_APPCONNECT_TIME_T)
        let ready = microseconds(CURLINFO_PRETRANSFER_TIME_T)
        let firstByte = microseconds(CURLINFO_STARTTRANSFER_TIME_T)
        let total = microseconds(CURLINFO_TOTAL_TIME_T)
        func milliseconds(_ span: Double) -> Double { max(0, span).rounded() / 1000 }
        var timing = Response.Timing()
        if connected > 0 {
            timing.dns = milliseconds(lookup)
            timing.connect = milliseconds(connected - lookup)
            if handshaken > 0 { timing.ssl = milliseconds(handshaken - connected) }
        }
        let sent = max(ready, handshaken, connected)
        timing.send = milliseconds(ready > 0 ? ready - max(handshaken, connected) : 0)
        timing.wait = milliseconds(firstByte - sent)
        timing.receive = milliseconds(total - max(firstByte, sent))
        return timing
    }

    /// The `APIError` for a transfer that ended with `code`.
    func failure(_ code: CURLcode, _ exchange: Exchange) -> APIError {
        // A failed transfer's partial body (up to the size cap) is not kept in the idle handle.
        defer { body = [] }
        if headTooLarge {
            var error = APIError(
                .network,
                "\(exchange.method) \(exchange.url): refused, the response head is larger than \(Self.maximumHeadBytes >> 10) KiB",
                url: exchange.url)
            error.isRetryable = false
            return error
        }
        if tooLarge || bomb || code == CURLE_FILESIZE_EXCEEDED {
            let reason =
                bomb
                ? "the compressed body inflates more than \(CurlTransport.decompressionRatio) times (a decompression bomb)"
                : "the body is larger than \(limit >> 20) MiB"
            var error = APIError(.network, "\(exchange.method) \(exchange.url): refused, \(reason)", url: exchange.url)
            error.isRetryable = false
            return error
        }
        if code == CURLE_OPERATION_TIMEDOUT { return CurlTransport.timeout(exchange) }
        if sends > 1 {
            // A kept-alive connection closed as the request went out on it (a server's keep-alive
            // timeout ending then): RetryStage sends an idempotent request again; any other is
            // not, since the server may have read it and acted.
            let resend =
                exchange.isIdempotent
                ? "" : "; it was not sent again, as the server may have acted on it: check before sending it again"
            return APIError(
                .network,
                "\(exchange.method) \(exchange.url): no response (the connection closed before an answer)\(resend)",
                url: exchange.url)
        }
        if code == CURLE_ABORTED_BY_CALLBACK { return CurlTransport.cancelled(exchange) }
        var detail =
            errorBuffer[0] != 0
            ? String(cString: errorBuffer)
            : library.api.pointee.easy_strerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)"
        var retryable = true
        // A URL libcurl cannot parse (a server's next link holding bytes it refuses) fails the
        // same way every time: refused once, not retried.
        if code == CURLE_URL_MALFORMAT { retryable = false }
        if code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE {
            // The same certificate fails the same way every time: not retried.
            retryable = false
            if let caBundle {
                detail +=
                    "; the server's certificate is not signed by an authority in \(caBundle) (APIMACRO_CA_BUNDLE or SSL_CERT_FILE)"
            } else {
                detail +=
                    "; the server's certificate is not signed by an authority apimacro trusts: if your network has "
                    + "its own certificate authority, set APIMACRO_CA_BUNDLE (or SSL_CERT_FILE) to its PEM file"
            }
        }
        if let proxy {
            let named = Redactor(secrets: []).redactURL(proxy)
            var connectStatus = 0
            _ = ccurl_getinfo_long(library.api, handle, CURLINFO_HTTP_CONNECTCODE, &connectStatus)
            if connectStatus == 407 {
                // The same credentials would be refused again.
                retryable = false
                detail +=
                    "; the proxy \(named) wants credentials (407): put them in the proxy URL, http://USER:PASSWORD@HOST:PORT"
            } else if connectStatus >= 300 {
                retryable = retryable && [502, 503, 504].contains(connectStatus)
                detail += "; the proxy \(named) refused the tunnel (\(connectStatus))"
            } else {
                detail += "; through the proxy \(named)"
            }
        }
        var error = APIError(.network, "\(exchange.method) \(exchange.url): no response (\(detail))", url: exchange.url)
        error.isRetryable = retryable
        return error
    }

    /// A chunk of the decoded body: kept unless it takes the body past the size cap or
    /// the decoded bytes past 200 times the bytes on the wire (a decompression bomb).
    fileprivate func received(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard count > 0, let data else { return count }
        guard body.count + count <= limit else {
            tooLarge = true
            return 0  // aborts the transfer: CURLE_WRITE_ERROR
        }
        // CURLINFO_SIZE_DOWNLOAD_T counts the body bytes as they came off the wire (encoded). It is
        // checked for every body, whatever Content-Encoding says (a server can stack or hide it;
        // an unencoded body is never past 1×), and it lags one read behind the decoded bytes on
        // a chunked body (libcurl counts a read after writing it): one read buffer (16 KiB) is
        // allowed on top, or a chunked gzip answer would be refused on its first read. The
        // count only grows, so libcurl is asked only when the decoded bytes pass the bound of
        // its last answer (`wireSeen`): not per chunk, and for most bodies never.
        let decoded = body.count + count
        if decoded > (wireSeen + Self.readBuffer) * CurlTransport.decompressionRatio {
            var wire: curl_off_t = 0
            _ = ccurl_getinfo_offset(library.api, handle, CURLINFO_SIZE_DOWNLOAD_T, &wire)
            wireSeen = Int(max(wire, 0))
            if decoded > (wireSeen + Self.readBuffer) * CurlTransport.decompressionRatio {
                bomb = true
                return 0
            }
        }
        if body.isEmpty, declaredLength > count {
            // One allocation for the body, not a doubling series; a declared length is the
            // server's word, so at most 8 MiB is set aside on it.
            body.reserveCapacity(min(declaredLength, limit, 8 << 20))
        }
        data.withMemoryRebound(to: UInt8.self, capacity: count) {
            body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
        }
        return count
    }

    /// Counts `bytes` of response head; false (and the transfer is refused) past `maximumHeadBytes`.
    fileprivate func countHead(_ bytes: Int) -> Bool {
        headBytes += bytes
        if headBytes > Self.maximumHeadBytes { headTooLarge = true }
        return !headTooLarge
    }

    /// libcurl's default receive buffer (CURLOPT_BUFFERSIZE): the most one read delivers.
    static let readBuffer = 16 << 10

    /// The request is about to go onto the wire.
    ///
    /// libcurl sends it a second time, on a new connection, when a reused one dies before
    /// any answer; that second send is refused here: retries are RetryStage's (idempotent
    /// requests only, counted, with backoff), and a non-idempotent request (a POST) may
    /// have been acted on by the server already.
    fileprivate func sending() -> Int32 {
        sends += 1
        return sends == 1 ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
    }

    /// libcurl's own `CURLOPT_MAXAGE_CONN` default, for every other request.
    static let connectionAge = 118

    /// One line of a response head, with its CR LF, parsed as bytes (no Foundation on the
    /// per-request path: trimming with Foundation cost more than the whole exchange).
    fileprivate func headerLine(_ line: UnsafeBufferPointer<UInt8>) {
        if line.count >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
            line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/")
        {
            headers.removeAll(keepingCapacity: true)  // a new head: 1xx first, then the final one
            declaredLength = 0
            if passesBodyAsSent {  // a 1xx head's codings say nothing of the final body
                _ = ccurl_setopt_long(library.api, handle, CURLOPT_HTTP_CONTENT_DECODING, 1)
                passesBodyAsSent = false
            }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }  // the blank line
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = colon + 1
        var end = line.count
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        let value = String(decoding: UnsafeBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
        if colon == 14, Headers.sameName(name, "Content-Length"), let length = Int(value), length > 0 {
            // Noted, not reserved: a HEAD, 204 or 304 declares a length and sends no body, and
            // a reservation made here would be kept by the response (8 MiB per answer, on a
            // hostile server's word). The first body bytes reserve it (`received`).
            declaredLength = length
        } else if !passesBodyAsSent, colon == 16 || colon == 17, !library.decodes(name: name, codings: value) {
            // A coding apimacro did not ask for (`Content-Encoding: foo`, `Transfer-Encoding:
            // gzip`): libcurl would fail the transfer ("Unrecognized content encoding type") or
            // decode what was never asked for. The body is handed over as sent instead, its
            // header kept, as a browser does. libcurl 7.88 reads this option at each body write,
            // and the head (this line included) is complete before the first one.
            _ = ccurl_setopt_long(library.api, handle, CURLOPT_HTTP_CONTENT_DECODING, 0)
            passesBodyAsSent = true
        }
        headers.append((name: name, value: value))
    }
}

private let curlWrite: curl_write_callback = { data, size, count, user in
    guard let user else { return 0 }
    return Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue().received(data, size * count)
}

private let curlHeader: curl_write_callback = { data, size, count, user in
    let total = size * count
    guard let user, let data else { return total }
    let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
    guard easy.countHead(total) else { return 0 }  // aborts the transfer: CURLE_WRITE_ERROR
    data.withMemoryRebound(to: UInt8.self, capacity: total) {
        easy.headerLine(UnsafeBufferPointer(start: $0, count: total))
    }
    return total
}

private let curlPrerequest: curl_prereq_callback = { user, _, _, _, _ in
    guard let user else { return CURL_PREREQFUNC_OK }
    return Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue().sending()
}
