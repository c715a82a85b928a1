import CCurl
import Platform

/// libcurl, opened with `dlopen` on the first request that reaches the network (an empty
/// macro, or one the cache answers, never loads it nor its ~32 shared libraries), with the
/// one `curl_share` every easy handle of the process uses: connections, DNS answers and TLS
/// sessions are reused across threads.
///
/// One per process, like libcurl's own global state (`curl_global_init` must run once,
/// before any other thread uses libcurl); built under Swift's lazy-global lock.
final class CurlLibrary: @unchecked Sendable {
    /// The loaded functions; written once in `init`, read-only afterwards.
    let api: UnsafeMutablePointer<ccurl_api>
    /// The share of connections, DNS and TLS sessions (a `CURLSH *`).
    let share: UnsafeMutableRawPointer
    /// `libcurl/7.88.1` and so on, for error messages.
    let version: String
    /// One lock per kind of shared data (`curl_lock_data`), handed to the share's callbacks.
    private let locks: UnsafeMutablePointer<pthread_mutex_t>
    /// The content codings libcurl decodes, lower case: those it lists in `Accept-Encoding`
    /// (`CURLOPT_ACCEPT_ENCODING` "", every one it was built with) and `identity`.
    let contentCodings: Set<String>
    /// The `Accept-Encoding` value libcurl 7.88 sends for `CURLOPT_ACCEPT_ENCODING` ""
    /// (`Curl_all_content_encodings`: its decoders in its order), nil when it has none.
    ///
    /// `CurlEasy` sends it as one of the request's own header lines: libcurl then leaves out
    /// its own, which it prints anew at every request (~4.5 k instructions), and still decodes
    /// every coding it lists.
    let acceptEncoding: String?

    /// The library, loaded now if this is the first use; an `APIError` (network) when it is
    /// missing, saying which package to install.
    @inline(never)  // its Result stays out of the async frame of `CurlTransport.send`
    static func shared() throws -> CurlLibrary {
        try loadedLibrary.get()
    }

    fileprivate init() throws(APIError) {
        let api = UnsafeMutablePointer<ccurl_api>.allocate(capacity: 1)
        api.initialize(to: ccurl_api())
        var loaded: Int32 = -1
        // Debian's libcurl4 (OpenSSL) is libcurl.so.4; the -dev package adds the plain name.
        for name in ["libcurl.so.4", "libcurl.so"] {
            loaded = ccurl_load(name, api)
            if loaded == 0 { break }
        }
        guard loaded == 0 else {
            let reason = ccurl_dlerror().map { String(cString: $0) } ?? "not found"
            throw APIError(
                .network,
                "cannot load libcurl, which apimacro sends requests with (\(reason)): install it "
                    + "(Debian and Ubuntu: apt-get install libcurl4)")
        }
        // libcurl opens SSLKEYLOGFILE here, once for the process (see CurlEnvironment).
        CurlEnvironment.removeVariablesReadAtLoad()
        guard api.pointee.global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK, let share = api.pointee.share_init() else {
            throw APIError(.network, "cannot initialise libcurl (curl_global_init or curl_share_init failed)")
        }
        let kinds = Int(CURL_LOCK_DATA_LAST.rawValue)
        locks = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: kinds)
        for index in 0..<kinds { pthread_mutex_init(locks + index, nil) }
        _ = ccurl_share_setopt_pointer(api, share, CURLSHOPT_USERDATA, UnsafeMutableRawPointer(locks))
        _ = ccurl_share_setopt_lock(api, share) { _, data, _, user in
            guard let user, data.rawValue < CURL_LOCK_DATA_LAST.rawValue else { return }
            pthread_mutex_lock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        _ = ccurl_share_setopt_unlock(api, share) { _, data, user in
            guard let user, data.rawValue < CURL_LOCK_DATA_LAST.rawValue else { return }
            pthread_mutex_unlock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        // Not CURL_LOCK_DATA_CONNECT: libcurl does not support one connection cache used by
        // concurrent threads (CURLSHOPT_SHARE); each multi handle (a caller thread's, the
        // transfer thread's) keeps its own connections alive.
        for data in [CURL_LOCK_DATA_DNS, CURL_LOCK_DATA_SSL_SESSION] {
            _ = ccurl_share_setopt_long(api, share, CURLSHOPT_SHARE, Int(data.rawValue))
        }
        self.api = api
        self.share = share
        version = ccurl_version(api).map { "libcurl/" + String(cString: $0) } ?? "libcurl"
        let features = ccurl_features(api)
        var codings: Set<String> = ["identity"]
        if features & CURL_VERSION_LIBZ != 0 { codings.formUnion(["gzip", "x-gzip", "deflate"]) }
        if features & CURL_VERSION_BROTLI != 0 { codings.insert("br") }
        if features & CURL_VERSION_ZSTD != 0 { codings.insert("zstd") }
        contentCodings = codings
        var accepted: [String] = []
        if features & CURL_VERSION_LIBZ != 0 { accepted += ["deflate", "gzip"] }
        if features & CURL_VERSION_BROTLI != 0 { accepted.append("br") }
        if features & CURL_VERSION_ZSTD != 0 { accepted.append("zstd") }
        acceptEncoding = accepted.isEmpty ? nil : accepted.joined(separator: ", ")
    }

    /// Whether libcurl decodes a body sent with the header `name: codings` as apimacro asked:
    /// every coding of a `Content-Encoding` one it lists in `Accept-Encoding`, only `chunked`
    /// in a `Transfer-Encoding` (apimacro sends no `TE`); true for any other header.
    func decodes(name: String, codings: String) -> Bool {
        let transfer: Bool
        if Headers.sameName(name, "Content-Encoding") {
            transfer = false
        } else if Headers.sameName(name, "Transfer-Encoding") {
            transfer = true
        } else {
            return true
        }
        for token in codings.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            let coding = token.lowercased()
            guard transfer ? coding == "chunked" || coding == "identity" : contentCodings.contains(coding) else {
                return false
            }
        }
        return true
    }

    /// Moves `multi`'s transfers on as far as they go without waiting, then hands each one
    /// libcurl finished to `finished` with its result (the caller takes it off the multi).
    func performAndCollect(_ multi: UnsafeMutableRawPointer, _ finished: (UnsafeMutableRawPointer, CURLcode) -> Void) {
        var active: Int32 = 0
        _ = api.pointee.multi_perform(multi, &active)
        var queued: Int32 = 0
        var handle: UnsafeMutableRawPointer?
        var code = CURLE_OK
        while let message = api.pointee.multi_info_read(multi, &queued) {
            if ccurl_message_done(message, &handle, &code) != 0, let handle { finished(handle, code) }
        }
    }
}

/// Loaded once, on first use (a Swift global is initialised lazily and exactly once).
private let loadedLibrary: Result<CurlLibrary, APIError> = Result { () throws(APIError) in try CurlLibrary() }
