import Foundation
import Synchronization

/// Answers GETs from the persistent HTTP cache, revalidates stale copies with
/// their validators, stores what may be stored, and serves a stored copy when
/// the network fails or the server answers 5xx (stale-if-error, with a warning).
///
/// It sits above `RetryStage`, so a cache hit costs no retry and stale-if-error
/// sees the failure only after the retries; and above `CredentialStage`, so it
/// keys entries with a keyed hash (HMAC) of the credential that stage would attach.
public struct CacheStage: Stage {
    let cache: HTTPCache
    /// `--offline`: serve any stored copy, fresh or not, and never ask the network first.
    let offline: Bool
    let credentials: CredentialStage
    let slot: CredentialSlot
    let log: ExchangeLog
    let warn: @Sendable (String) -> Void
    let now: @Sendable () -> Double
    /// The second tier in Redis (`APIMACRO_SHARED_STATE`), asked when this process's cache has nothing.
    let sharedTier: SharedCache?
    private let trouble = Trouble()
    /// The keyed names of the requests this client made lately: a request repeated (a loop
    /// polling one URL, the pages of a list fetched again) is named once, not per call.
    private let names = Names()

    /// - Parameters:
    ///   - cache: the HTTP cache (SQLite).
    ///   - offline: answer only from the cache (`--offline`).
    ///   - slot: the client's credential, which keys and seals its entries.
    ///   - baseURL: the client's base URL (whose host gets the credential).
    ///   - log: the exchange log (`-v` shows hits and revalidations).
    ///   - warn: writes one line to stderr (stale-if-error).
    ///   - now: the clock, seconds since 1970 (tests set it).
    ///   - shared: the second tier in Redis (`APIMACRO_SHARED_STATE`), or nil.
    public init(
        cache: HTTPCache, offline: Bool, slot: CredentialSlot, baseURL: String, log: ExchangeLog,
        warn: @escaping @Sendable (String) -> Void,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        shared: SharedState? = nil
    ) {
        self.cache = cache
        self.offline = offline
        self.credentials = CredentialStage(slot: slot, baseURL: baseURL)
        self.slot = slot
        self.log = log
        self.warn = warn
        self.now = now
        self.sharedTier = shared.map { SharedCache(shared: $0) }
    }

    /// Key texts to their keyed names (HMAC-SHA256, about 17 k instructions each).
    ///
    /// At most `capacity` of them (emptied when full); in memory only, like the credential they hold.
    private final class Names: Sendable {
        static let capacity = 256
        private let known = Mutex<[String: [UInt8]]>([:])

        func name(_ text: String, secret: CacheSecret) -> [UInt8] {
            if let name = known.withLock({ $0[text] }) { return name }
            let name = secret.name(text)
            known.withLock { known in
                if known.count >= Names.capacity { known.removeAll() }
                known[text] = name
            }
            return name
        }
    }

    /// Warns once per process when the cache file cannot be read or written.
    private final class Trouble: Sendable {
        let reported = Atomic<Bool>(false)
    }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        if exchange.method != "GET" && exchange.method != "HEAD" { return try await unsafe(exchange, next: next) }
        let ownConditions = exchange.headers["If-None-Match"] != nil || exchange.headers["If-Modified-Since"] != nil
        guard exchange.method == "GET", !ownConditions, !CachePolicy.bypasses(requestHeaders: exchange.headers) else {
            return try await next(exchange)
        }
        let start = ContinuousClock.now
        let secret = cache.secret
        let wire = credentials.wire(exchange)
        let credentialHeader = CacheStage.headerName(of: slot.value)
        let keyText = CacheStage.keyText(for: wire, credentialHeader: credentialHeader)
        let key = names.name(keyText, secret: secret)
        var stored: HTTPCache.Entry?
        do {
            stored = try await cache.entries(key: key).first { entry in
                entry.variant == CacheStage.variant(entry.varyNames, wire.headers, secret: secret)
            }
        } catch {
            report(error)
        }
        // The shared tier's slot (its credential's keys) is worked out only past a local hit.
        var sharedSlot: SharedCache.Slot?
        // Nothing here: another process may have fetched it (the shared tier).
        var fromShared = false
        if stored == nil, let sharedTier {
            sharedSlot = sharedTier.slot(keyText: keyText, material: sharedMaterial(wire))
        }
        if stored == nil, let sharedTier, let sharedSlot, let found = await sharedTier.load(sharedSlot),
            found.variant == SharedCache.variant(found.varyNames, wire.headers, credential: sharedSlot.credential)
        {
            stored = HTTPCache.Entry(
                key: key, variant: CacheStage.variant(found.varyNames, wire.headers, secret: secret),
                target: CacheStage.target(exchange.url, secret: secret), status: found.status, headers: found.headers,
                // Another machine's clock (or a writer of Redis) does not make an entry younger
                // than now: a storage time in the future would keep it fresh past its max-age.
                body: found.body, varyNames: found.varyNames, storedAt: min(found.storedAt, now()),
                initialAge: found.initialAge)
            fromShared = true
        }
        var request = exchange
        var conditional = false
        switch CachePolicy.decide(request: exchange.headers, stored: stored?.stored, now: now(), disconnected: offline)
        {
        case .serve(let age, let stale):
            if let entry = stored {
                if fromShared {
                    // Kept here too: the next request of this process is a local hit.
                    await keep(entry)
                    return serve(entry, exchange, age: age, source: stale ? .stale : .sharedHit, since: start)
                }
                return serve(entry, exchange, age: age, source: stale ? .stale : .cacheHit, since: start)
            }
        case .unsatisfiable:
            return unsatisfiable(exchange, since: start)
        case .revalidate(let conditions):
            for (name, value) in conditions { request.headers.set(name, value) }
            conditional = true
        case .fetch:
            break
        }
        let requestTime = now()
        let response: Response
        do {
            response = try await next(request)
        } catch let error as APIError where error.kind == .network || error.kind == .timeout {
            guard let entry = stored, CachePolicy.mayServeOnError(entry.stored) else { throw error }
            return stale(entry, exchange, because: error.kind == .timeout ? "timed out" : "no response", since: start)
        }
        let responseTime = now()
        if let entry = stored, response.status >= 500, CachePolicy.mayServeOnError(entry.stored) {
            return stale(
                entry, exchange, because: "\(response.status) \(HTTPStatus.reason(response.status))", since: start)
        }
        if conditional, response.status == 304, var entry = stored {
            entry.headers = CachePolicy.merge(stored: entry.headers, notModified: response.headers)
            entry.storedAt = responseTime
            entry.initialAge = CachePolicy.initialAge(
                response.headers, requestTime: requestTime, responseTime: responseTime)
            if fromShared {
                await keep(entry)
            } else {
                do {
                    try await cache.refresh(entry)
                } catch {
                    report(error)
                }
            }
            // The shared copy is replaced only when it was the one revalidated (this process had
            // none): then the next machine's miss finds it fresh. A 304 of this process's own copy
            // sends nothing to Redis (no body re-uploaded per 304); a machine that finds the
            // shared copy stale revalidates it itself, with a 304.
            if fromShared, let sharedTier, let sharedSlot {
                await sharedTier.store(shareable(entry, wire: wire, slot: sharedSlot), in: sharedSlot, waiting: false)
            }
            return Response(
                status: entry.status, headers: entry.headers, body: entry.body, url: response.url, source: .revalidated)
        }
        if CachePolicy.isStorable(
            method: exchange.method, requestHeaders: exchange.headers, status: response.status,
            responseHeaders: response.headers)
        {
            let names = CachePolicy.varyNames(response.headers)
            // Set-Cookie alone is never stored (a session handed to this client only); every
            // other header is, Set-Cookie2 included (RFC 9111 §3.1; cache-tests headers-store-*).
            var headers = response.headers
            headers.remove("Set-Cookie")
            let entry = HTTPCache.Entry(
                key: key, variant: CacheStage.variant(names, wire.headers, secret: secret),
                target: CacheStage.target(exchange.url, secret: secret), status: response.status, headers: headers,
                body: response.body, varyNames: names, storedAt: responseTime,
                initialAge: CachePolicy.initialAge(
                    response.headers, requestTime: requestTime, responseTime: responseTime))
            do {
                try await cache.store(entry)
            } catch {
                report(error)
            }
            if let sharedTier {
                let slot = sharedSlot ?? sharedTier.slot(keyText: keyText, material: sharedMaterial(wire))
                await sharedTier.store(shareable(entry, wire: wire, slot: slot), in: slot)
            }
        }
        return response
    }

    /// The shared cache's credential material of a request (`SharedCredential.cacheMaterial`) as
    /// the client sends it: only what holds a secret this client knows.
    private func sharedMaterial(_ wire: Exchange) -> String {
        let credential = slot.value
        return SharedCredential.cacheMaterial(
            wire: wire, credential: credential, attached: credential != nil && credentials.allows(wire.url),
            known: slot.redactor)
    }

    /// Stores an entry found in the shared tier in this process's cache.
    private func keep(_ entry: HTTPCache.Entry) async {
        do {
            try await cache.store(entry)
        } catch {
            report(error)
        }
    }

    /// The shared tier's form of an entry: its variant keyed by the credential, not by this machine's secret.
    private func shareable(_ entry: HTTPCache.Entry, wire: Exchange, slot: SharedCache.Slot) -> SharedCache.Stored {
        SharedCache.Stored(
            status: entry.status, headers: entry.headers, body: entry.body, varyNames: entry.varyNames,
            storedAt: entry.storedAt,
            initialAge: entry.initialAge,
            variant: SharedCache.variant(entry.varyNames, wire.headers, credential: slot.credential))
    }

    /// An unsafe method (POST, PUT, DELETE, PATCH, …) goes to the server; a non-error
    /// answer invalidates what is stored for its URL and the same-origin `Location` and
    /// `Content-Location` it names (RFC 9111 §4.4), for every credential and variant.
    private func unsafe(_ exchange: Exchange, next: Next) async throws -> Response {
        let response = try await next(exchange)
        if CachePolicy.invalidates(method: exchange.method, status: response.status) {
            let urls = CachePolicy.invalidatedURLs(target: exchange.url, responseHeaders: response.headers)
            do {
                try await cache.invalidate(targets: urls.map { CacheStage.target($0, secret: cache.secret) })
            } catch {
                report(error)
            }
            if let sharedTier {
                // The shared tier can find only this credential's GET of each URL: entries are named by it.
                for url in urls {
                    var get = exchange
                    get.method = "GET"
                    get.url = url
                    get.body = []
                    let wire = credentials.wire(get)
                    let text = CacheStage.keyText(for: wire, credentialHeader: CacheStage.headerName(of: slot.value))
                    await sharedTier.remove(sharedTier.slot(keyText: text, material: sharedMaterial(wire)))
                }
            }
        }
        return response
    }

    private func serve(
        _ entry: HTTPCache.Entry, _ exchange: Exchange, age: Double, source: Response.Source,
        since start: ContinuousClock.Instant
    ) -> Response {
        log.record(
            method: exchange.method, url: exchange.url, status: entry.status,
            milliseconds: Self.milliseconds(since: start),
            source: source.rawValue, redactor: slot.redactor)
        var headers = entry.headers
        headers.set("Age", String(Int(min(max(0, age), 2_147_483_648))))  // §5.1: a cache answering sends its Age
        return Response(status: entry.status, headers: headers, body: entry.body, url: exchange.url, source: source)
    }

    /// `only-if-cached` with nothing that fits: 504 without the network (RFC 9111 §5.2.1.7).
    private func unsatisfiable(_ exchange: Exchange, since start: ContinuousClock.Instant) -> Response {
        log.record(
            method: exchange.method, url: exchange.url, status: 504, milliseconds: Self.milliseconds(since: start),
            source: Response.Source.cacheHit.rawValue, redactor: slot.redactor)
        let message = "Cache-Control: only-if-cached, and the HTTP cache holds no response that fits this request"
        return Response(
            status: 504, headers: Headers([("Content-Type", "text/plain; charset=utf-8")]), body: Array(message.utf8),
            url: exchange.url, source: .cacheHit)
    }

    private func stale(
        _ entry: HTTPCache.Entry, _ exchange: Exchange, because reason: String, since start: ContinuousClock.Instant
    ) -> Response {
        let age = CachePolicy.currentAge(entry.stored, now: now())
        warn(
            "apimacro: warning: \(exchange.method) \(slot.redactor.redactURL(exchange.url)): \(reason); using the cached copy from \(CacheStage.describeAge(now() - entry.storedAt)) ago"
        )
        return serve(entry, exchange, age: age, source: .stale, since: start)
    }

    private func report(_ error: any Error) {
        guard !trouble.reported.exchange(true, ordering: .relaxed) else { return }
        warn("apimacro: warning: the HTTP cache \(cache.file.path) is not usable (\(error)); continuing without it")
    }

    /// The request's credential fields, the one filter of the cache key (`keyText`) and the
    /// shared state's credential material (`SharedCredential.material`): every header the
    /// credential rule names (`CredentialNames.isCredentialHeader`) and the header named `own`
    /// (the client credential's, whatever its name), each as "lower-cased name: value", sorted.
    ///
    /// Worked out per call from the names' bytes: nothing shared, no lock.
    static func credentialFields(_ headers: Headers, own: String?) -> [String] {
        var fields: [String] = []
        for field in headers {
            let isOwn = own.map { Headers.sameName($0, field.name) } ?? false
            if isOwn || CredentialNames.isCredentialHeader(field.name) {
                fields.append("\(field.name.lowercased()): \(field.value)")
            }
        }
        return fields.sorted()
    }

    /// The cache key: a keyed hash of the method, the URL as the wire sees it (a query
    /// credential included), every credential-looking header and the client credential's own
    /// header whatever its name, and the body (a GET rarely has one, but it may carry a secret).
    static func key(for wire: Exchange, credentialHeader: String?, secret: CacheSecret) -> [UInt8] {
        secret.name(keyText(for: wire, credentialHeader: credentialHeader))
    }

    /// What `key` hashes: the request as the wire sees it (credentials included, so it is
    /// only ever hashed, never stored).
    static func keyText(for wire: Exchange, credentialHeader: String?) -> String {
        let fields = credentialFields(wire.headers, own: credentialHeader)
        var text = "v2\n\(wire.method)\n\(wire.url)\n" + fields.joined(separator: "\n")
        if !wire.body.isEmpty { text += "\nbody " + Data(wire.body).base64EncodedString() }
        return text
    }

    /// The header a credential travels in, whatever its name (nil for a query credential).
    static func headerName(of credential: Credential?) -> String? {
        switch credential {
        case .bearer, .basic: "Authorization"
        case .header(let name, _): name
        case .query, nil: nil
        }
    }

    /// A keyed hash of the request's values of the headers a response varies on
    /// (the values may be credentials); empty when it varies on none.
    static func variant(_ names: [String], _ headers: Headers, secret: CacheSecret) -> [UInt8] {
        names.isEmpty ? [] : secret.name("variant\n" + CachePolicy.variantText(names, headers))
    }

    /// A keyed hash of the URL alone, which an unsafe method's answer invalidates.
    static func target(_ url: String, secret: CacheSecret) -> [UInt8] {
        secret.name("target\n" + url)
    }

    /// "12 s", "5 min", "3 h", "2 days".
    public static func describeAge(_ seconds: Double) -> String {
        let value = Seconds.clamped(seconds)  // a stored time from far away must not trap below
        switch value {
        case ..<120: return "\(Int(value)) s"
        case ..<7200: return "\(Int(value / 60)) min"
        case ..<172_800: return "\(Int(value / 3600)) h"
        default: return "\(Int(value / 86400)) days"
        }
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let duration = ContinuousClock.now - start
        return Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
