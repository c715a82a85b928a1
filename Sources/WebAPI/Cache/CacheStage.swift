public import Platform
import Synchronization

/// Answers GETs from the persistent HTTP cache, revalidates stale copies with
/// their validators, stores what may be stored, and serves a stored copy when
/// the network fails or the server answers 5xx (stale-if-error, with a warning).
///
/// Two tiers answer: this process's own cache (`LocalCacheTier`, SQLite) and, when it has
/// nothing, the copies other processes keep in Redis (`SharedCacheTier`); each tier's reads,
/// writes and failures are its own, and this stage decides between them and the network.
///
/// It sits above `RetryStage`, so a cache hit costs no retry and stale-if-error
/// sees the failure only after the retries; and above `CredentialStage`, so it
/// keys entries with a keyed hash (HMAC) of the credential that stage would attach.
public struct CacheStage: Stage {
    /// This process's cache (SQLite).
    let local: LocalCacheTier
    /// The second tier in Redis (`APIMACRO_SHARED_STATE`), asked when this process's cache has nothing.
    let shared: SharedCacheTier?
    /// `--offline`: serve any stored copy, fresh or not, and never ask the network first.
    let offline: Bool
    /// Whether a stored copy answers when the network fails or the server answers 5xx
    /// (stale-if-error); false with `--no-stale`: such a request fails, revalidation stays.
    let staleIfError: Bool
    let credentials: CredentialStage
    let slot: CredentialSlot
    let log: ExchangeLog
    let warn: @Sendable (String) -> Void
    let now: @Sendable () -> Double
    /// The keys of the requests looked up last.
    private let keys = KeyMemo()
    /// The decisions on stored entries that hold at every clock, made last.
    private let decisions = DecisionMemo()

    /// - Parameters:
    ///   - cache: the HTTP cache (SQLite).
    ///   - offline: answer only from the cache (`--offline`).
    ///   - slot: the client's credential, which keys and seals its entries.
    ///   - baseURL: the client's base URL (whose host gets the credential).
    ///   - log: the exchange log (`-v` shows hits and revalidations).
    ///   - warn: writes one line to stderr (stale-if-error).
    ///   - now: the clock, seconds since 1970 (tests set it).
    ///   - shared: the second tier in Redis (`APIMACRO_SHARED_STATE`), or nil.
    ///   - staleIfError: serve a stored copy when the network fails or the server answers 5xx
    ///     (true; false with `--no-stale`).
    public init(
        cache: HTTPCache, offline: Bool, slot: CredentialSlot, baseURL: String, log: ExchangeLog,
        warn: @escaping @Sendable (String) -> Void,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        shared: SharedState? = nil, staleIfError: Bool = true
    ) {
        self.staleIfError = staleIfError
        let credentials = CredentialStage(slot: slot, baseURL: baseURL)
        local = LocalCacheTier(cache: cache, warn: warn)
        self.shared = shared.map { SharedCacheTier(shared: $0, slot: slot, credentials: credentials) }
        self.offline = offline
        self.credentials = credentials
        self.slot = slot
        self.log = log
        self.warn = warn
        self.now = now
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        if exchange.method != "GET" && exchange.method != "HEAD" { return try await unsafe(exchange, next: next) }
        if let choice = exchange.cache, exchange.method == "GET" {
            return try await chosen(choice, exchange, next: next)
        }
        // What `answerAtOnce` read for this very exchange was read because it looks up.
        let prefetched = exchange.prefetch?.take(for: exchange)
        guard prefetched != nil || Self.looksUp(exchange) else { return try await next(exchange) }
        let start = ContinuousClock.now
        let found = await lookup(exchange, prefetched: prefetched?.lookup)
        var request = exchange
        var conditional = false
        // A decision `answerAtOnce` made moments ago on the same local entry stands.
        let decided = found.fromShared ? nil : prefetched?.decision
        switch decided
            ?? CachePolicy.decide(
                request: exchange.headers, stored: found.entry?.stored, now: now(), disconnected: offline)
        {
        case .serve(let age, let stale):
            if let entry = found.entry {
                // Kept here too: the next request of this process is a local hit.
                if found.fromShared { await local.store(entry) }
                let source: Response.Source = stale ? .stale : found.fromShared ? .sharedHit : .cacheHit
                return serve(entry, exchange, age: age, source: source, since: start)
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
            guard staleIfError, let entry = found.entry, CachePolicy.mayServeOnError(entry.stored) else { throw error }
            return stale(entry, exchange, because: error.kind == .timeout ? "timed out" : "no response", since: start)
        }
        let responseTime = now()
        if staleIfError, let entry = found.entry, response.status >= 500, CachePolicy.mayServeOnError(entry.stored) {
            return stale(
                entry, exchange, because: "\(response.status) \(HTTPStatus.reason(response.status))", since: start)
        }
        if conditional, response.status == 304, let entry = found.entry {
            return await revalidated(
                entry, by: response, found, requestTime: requestTime, responseTime: responseTime)
        }
        if CachePolicy.isStorable(
            method: exchange.method, requestHeaders: exchange.headers, status: response.status,
            responseHeaders: response.headers)
        {
            let entry = local.entry(
                for: response, key: found.key, exchange: exchange, wire: found.wire, requestTime: requestTime,
                responseTime: responseTime)
            await local.store(entry)
            if let shared {
                await shared.store(
                    entry, wire: found.wire, at: found.place ?? shared.place(keyText: found.keyText, wire: found.wire))
            }
        }
        return response
    }

    /// Whether `handle` looks `exchange` up: a GET without a cache rule of its call, without
    /// conditions of its own, that does not bypass the cache (`CachePolicy.bypasses`).
    private static func looksUp(_ exchange: Exchange) -> Bool {
        guard exchange.method == "GET", exchange.cache == nil else { return false }
        return looksUp(exchange, asked: CachePolicy.RequestDirectives(exchange.headers))
    }

    /// `looksUp` of a GET without a cache rule, whose `Cache-Control` directives are `asked`.
    private static func looksUp(_ exchange: Exchange, asked: CachePolicy.RequestDirectives) -> Bool {
        let ownConditions = exchange.headers["If-None-Match"] != nil || exchange.headers["If-Modified-Since"] != nil
        return !ownConditions && !asked.noStore
    }

    /// A fresh 2xx answer from this process's cache, served as `handle` serves it (the same
    /// exchange-log line, the same `Age`), without a task: the lookup is a synchronous read.
    ///
    /// Anything else is nil and the lookup is kept on the exchange (`CachePrefetch`), for
    /// `handle` to use rather than read again: a miss (the shared tier is asked there), a stale
    /// or unsatisfiable entry, one to revalidate. Only a 2xx: the stages above pass it through
    /// at once (a stored redirect or rate-limit answer may make them wait or send again).
    public var atOnce: AtOnce.Role { .answers }

    public func answerAtOnce(_ exchange: Exchange, next: AtOnce) throws -> Response? {
        guard let prefetch = exchange.prefetch, exchange.method == "GET", exchange.cache == nil else { return nil }
        let asked = CachePolicy.RequestDirectives(exchange.headers)
        guard Self.looksUp(exchange, asked: asked) else { return nil }
        let start = ContinuousClock.now
        let found = localLookup(exchange)
        // Without an entry, the decision waits for the shared tier's answer (`handle`).
        let decision = found.entry.map { decide(asked, $0) }
        if let entry = found.entry, (200..<300).contains(entry.status), case .serve(let age, let stale) = decision {
            return serve(entry, exchange, age: age, source: stale ? .stale : .cacheHit, since: start)
        }
        prefetch.keep(found, decision, for: exchange)
        return nil
    }

    /// `CachePolicy.decide` for a request whose directives are `asked` and this process's `entry`:
    /// the decision made last on the same stored headers for the same directives when it holds
    /// at every clock (an entry that is revalidated each time: `DecisionMemo`), else made now.
    private func decide(_ asked: CachePolicy.RequestDirectives, _ entry: HTTPCache.Entry) -> CachePolicy.Decision {
        if let known = decisions.find(entry.headers, asked) { return known }
        let (decision, timeless) = CachePolicy.decision(
            asked: asked, stored: entry.stored, now: now(), disconnected: offline)
        if timeless { decisions.keep(entry.headers, asked, decision) }
        return decision
    }

    /// The decisions made last that hold at every clock (`CachePolicy.decision(asked:…)`'s
    /// `timeless`), each with the stored headers and the request's directives it was made for.
    ///
    /// Such a decision depends on those alone (and on `--offline`, the stage's own): the same
    /// headers again — the very same array, which the kept `Headers` holds alive, so no other can
    /// share its storage — with equal directives get it without deciding again (the directives
    /// parsed, the freshness worked out, the conditions' table built: ~3 k instructions a 304).
    /// Headers read anew or changed by a 304 are another array, decided for themselves. In
    /// memory only, like the stored entries the cache keeps opened; at most `capacity`.
    private final class DecisionMemo: Sendable {
        static let capacity = 8

        struct Made: @unchecked Sendable {
            /// The stored headers it was made for, kept alive (the storage identifies them).
            let headers: Headers
            let storage: UnsafeRawPointer?
            let asked: CachePolicy.RequestDirectives
            let decision: CachePolicy.Decision
        }
        private let made = Mutex<[Made]>([])

        static func storage(_ headers: Headers) -> UnsafeRawPointer? {
            headers.fields.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }

        func find(_ headers: Headers, _ asked: CachePolicy.RequestDirectives) -> CachePolicy.Decision? {
            let storage = Self.storage(headers)
            guard storage != nil else { return nil }  // no fields: nothing to tell them apart by
            return made.withLock { made in
                made.last { $0.storage == storage && $0.asked == asked }?.decision
            }
        }

        func keep(_ headers: Headers, _ asked: CachePolicy.RequestDirectives, _ decision: CachePolicy.Decision) {
            let storage = Self.storage(headers)
            guard storage != nil else { return }
            let kept = Made(headers: headers, storage: storage, asked: asked, decision: decision)
            made.withLock { made in
                made.removeAll { $0.storage == storage }
                if made.count >= DecisionMemo.capacity { made.removeFirst() }
                made.append(kept)
            }
        }
    }

    /// A GET whose call chose its cache rule (`cache=`, `CacheChoice`): that rule decides,
    /// and `-v` names it.
    private nonisolated(nonsending) func chosen(_ choice: CacheChoice, _ exchange: Exchange, next: Next) async throws
        -> Response
    {
        let start = ContinuousClock.now
        let url = slot.redactor.redactURL(exchange.url)
        switch choice {
        case .off:
            log.note("\(choice.rule): GET \(url) sent, the HTTP cache neither read nor written")
            return try await next(exchange)
        case .keep(let seconds):
            // This process's cache only: an answer kept past its headers never reaches the shared tier.
            let wire = credentials.wire(exchange)
            let key = local.key(CacheStage.keyText(for: wire, credentialHeader: CacheStage.headerName(of: slot.value)))
            if let entry = await local.entry(key: key, for: wire), now() - entry.storedAt < seconds,
                (200..<300).contains(entry.status)
            {
                return serve(
                    entry, exchange, age: CachePolicy.currentAge(entry.stored, now: now()), source: .cacheHit,
                    since: start, rule: "\(choice.rule) kept it")
            }
            let requestTime = now()
            let response = try await next(exchange)
            if (200..<300).contains(response.status) {
                let entry = local.entry(
                    for: response, key: key, exchange: exchange, wire: wire, requestTime: requestTime,
                    responseTime: now())
                await local.store(entry)
                log.note("\(choice.rule): GET \(url) stored whatever its headers say, in this process's cache only")
            }
            return response
        case .onlyIfCached:
            let found = await lookup(exchange)
            guard let entry = found.entry else {
                log.record(
                    method: exchange.method, url: exchange.url, status: nil,
                    milliseconds: Self.milliseconds(since: start), source: "not sent",
                    note: "\(choice.rule): nothing stored", redactor: slot.redactor)
                throw APIError(
                    .offline,
                    "offline: GET \(url) is not in the cache and cache=\"only-if-cached\" sends nothing "
                        + "(call it once without cache=\"only-if-cached\" to fill the cache)", url: url)
            }
            if found.fromShared { await local.store(entry) }
            let age = CachePolicy.currentAge(entry.stored, now: now())
            let stale: Bool
            switch CachePolicy.decide(request: Headers(), stored: entry.stored, now: now()) {
            case .serve(_, let isStale): stale = isStale
            default: stale = true
            }
            return serve(
                entry, exchange, age: age, source: stale ? .stale : found.fromShared ? .sharedHit : .cacheHit,
                since: start, rule: stale ? "\(choice.rule), a stale copy" : choice.rule)
        case .refresh:
            var plain = exchange
            plain.cache = nil
            plain.headers.set("Cache-Control", "no-cache")
            log.note("\(choice.rule): GET \(url) asks the server (a stored copy is at most revalidated)")
            return try await handle(plain, next: next)
        }
    }

    /// What the tiers hold for one GET, and the names it was looked up by.
    ///
    /// A class: it is handed on whole (kept on the exchange, taken back, passed to the 304's
    /// refresh) with one reference, not a copy of each of its fields.
    final class Lookup: Sendable {
        /// The request as the wire carries it (with the credential the client would attach).
        let wire: Exchange
        /// Its cache key text (`keyText`) and the local tier's key for it.
        let keyText: String
        let key: [UInt8]
        /// The stored answer: this process's, else a copy from the shared tier.
        let entry: HTTPCache.Entry?
        /// Where the shared tier keeps the answer, once worked out (only past a local miss).
        let place: SharedCache.Slot?
        /// Whether `entry` came from the shared tier.
        let fromShared: Bool

        init(
            wire: Exchange, keyText: String, key: [UInt8], entry: HTTPCache.Entry?, place: SharedCache.Slot? = nil,
            fromShared: Bool = false
        ) {
            self.wire = wire
            self.keyText = keyText
            self.key = key
            self.entry = entry
            self.place = place
            self.fromShared = fromShared
        }
    }

    /// Looks `exchange` up in this process's cache (unless `prefetched` is what it found moments
    /// ago), then, when that has nothing, in the shared tier: another process may have fetched it.
    private nonisolated(nonsending) func lookup(_ exchange: Exchange, prefetched: Lookup? = nil) async -> Lookup {
        let found = prefetched ?? localLookup(exchange)
        guard found.entry == nil, let shared else { return found }
        let place = shared.place(keyText: found.keyText, wire: found.wire)
        let copy = await shared.entry(at: place, for: found.wire).map { copy in
            local.entry(adopting: copy, key: found.key, exchange: exchange, wire: found.wire, now: now())
        }
        return Lookup(
            wire: found.wire, keyText: found.keyText, key: found.key, entry: copy, place: place,
            fromShared: copy != nil)
    }

    /// This process's cache's entry for `exchange`, if any (a synchronous read).
    private func localLookup(_ exchange: Exchange) -> Lookup {
        let wire = credentials.wire(exchange)
        let header = CacheStage.headerName(of: slot.value)
        let keyText: String
        let key: [UInt8]
        if let known = keys.find(wire, credentialHeader: header) {
            (keyText, key) = known
        } else {
            keyText = CacheStage.keyText(for: wire, credentialHeader: header)
            key = local.key(keyText)
            keys.keep(wire, credentialHeader: header, keyText: keyText, key: key)
        }
        return Lookup(wire: wire, keyText: keyText, key: key, entry: local.entryAtOnce(key: key, for: wire))
    }

    /// The key texts and keys (`keyText`, `LocalCacheTier.key`) of the requests looked up last.
    ///
    /// Found by the request as the wire sees it: a request repeated (a loop polling one URL) is not
    /// spelled out, filtered for its credential fields and hashed into the names' table again.
    /// In memory only, like the credentials the key texts hold; at most `capacity`.
    private final class KeyMemo: Sendable {
        static let capacity = 8

        /// A class: found and handed out with one reference, not a copy of each of its fields.
        final class Known: Sendable {
            let method: String
            let url: String
            let headers: Headers
            let body: [UInt8]
            let credentialHeader: String?
            let keyText: String
            let key: [UInt8]

            init(
                method: String, url: String, headers: Headers, body: [UInt8], credentialHeader: String?,
                keyText: String, key: [UInt8]
            ) {
                self.method = method
                self.url = url
                self.headers = headers
                self.body = body
                self.credentialHeader = credentialHeader
                self.keyText = keyText
                self.key = key
            }

            /// Byte for byte, as the key text spells them (String's == takes canonically
            /// equivalent text as equal, which would give one key to two spellings).
            func fits(_ wire: Exchange, _ header: String?) -> Bool {
                let sameHeader =
                    switch (credentialHeader, header) {
                    case (nil, nil): true
                    case (let kept?, let asked?): Headers.sameBytes(kept, asked)
                    default: false
                    }
                return sameHeader && Headers.sameBytes(method, wire.method) && Headers.sameBytes(url, wire.url)
                    && body == wire.body && Headers.sameBytes(headers.fields, wire.headers.fields)
            }
        }
        private let known = Mutex<[Known]>([])

        func find(_ wire: Exchange, credentialHeader: String?) -> (String, [UInt8])? {
            known.withLock { known in
                guard let found = known.last(where: { $0.fits(wire, credentialHeader) }) else { return nil }
                return (found.keyText, found.key)
            }
        }

        func keep(_ wire: Exchange, credentialHeader: String?, keyText: String, key: [UInt8]) {
            let entry = Known(
                method: wire.method, url: wire.url, headers: wire.headers, body: wire.body,
                credentialHeader: credentialHeader, keyText: keyText, key: key)
            known.withLock { known in
                if known.count >= KeyMemo.capacity { known.removeFirst() }
                known.append(entry)
            }
        }
    }

    /// The stored `entry` after the server said 304 Not Modified: its headers merged and its
    /// age restarted, kept in this process's cache (and in the shared tier when it came from
    /// there).
    private nonisolated(nonsending) func revalidated(
        _ stored: HTTPCache.Entry, by response: Response, _ found: Lookup, requestTime: Double, responseTime: Double
    ) async -> Response {
        // Most 304s repeat what is stored (the same validators, a Date of the same second):
        // then only the clock is written, not a re-sealed head that says the same.
        let merged = CachePolicy.merged(stored: stored.headers, notModified: response.headers)
        let headersChanged = merged.map { !CachePolicy.sameFields($0, stored.headers) } ?? false
        let initialAge = CachePolicy.initialAge(response.headers, requestTime: requestTime, responseTime: responseTime)
        // Ages are whole seconds (RFC 9111 §1.2.2, delta-seconds): a clock restarted less than a
        // second after the stored one, with every header as stored, says nothing new to any
        // later reader, and writing it (an UPDATE, a WAL frame) is most of a repeated 304's cost.
        let clockMoved = abs(responseTime - stored.storedAt) >= 1 || abs(initialAge - stored.initialAge) >= 1
        // The entry as refreshed, made only when something is written.
        if found.fromShared || headersChanged || clockMoved {
            var entry = stored
            if let merged { entry.headers = merged }
            entry.storedAt = responseTime
            entry.initialAge = initialAge
            if found.fromShared {
                await local.store(entry)
            } else {
                await local.refresh(entry, headersChanged: headersChanged)
            }
            // The shared copy is replaced only when it was the one revalidated (this process had
            // none): then the next machine's miss finds it fresh. A 304 of this process's own copy
            // sends nothing to Redis (no body re-uploaded per 304); a machine that finds the
            // shared copy stale revalidates it itself, with a 304.
            if found.fromShared, let shared, let place = found.place {
                await shared.store(entry, wire: found.wire, at: place, waiting: false)
            }
        }
        var answer = Response(
            status: stored.status, headers: merged ?? stored.headers, body: stored.body, url: response.url,
            source: .revalidated)
        // The 304's round trip is where the time went.
        answer.timing = response.timing
        return answer
    }

    /// An unsafe method (POST, PUT, DELETE, PATCH, …) goes to the server; a non-error
    /// answer invalidates what is stored for its URL and the same-origin `Location` and
    /// `Content-Location` it names (RFC 9111 §4.4), for every credential and variant.
    private nonisolated(nonsending) func unsafe(_ exchange: Exchange, next: Next) async throws -> Response {
        let response = try await next(exchange)
        if CachePolicy.invalidates(method: exchange.method, status: response.status) {
            let urls = CachePolicy.invalidatedURLs(target: exchange.url, responseHeaders: response.headers)
            await local.invalidate(urls)
            await shared?.invalidate(urls, after: exchange)
        }
        return response
    }

    private func serve(
        _ entry: HTTPCache.Entry, _ exchange: Exchange, age: Double, source: Response.Source,
        since start: ContinuousClock.Instant, rule: String? = nil
    ) -> Response {
        log.record(
            method: exchange.method, url: exchange.url, status: entry.status,
            milliseconds: Self.milliseconds(since: start),
            source: source.rawValue, note: rule, redactor: slot.redactor)
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

/// What this process's cache held for an exchange when `CacheStage.answerAtOnce` looked and
/// could not answer at once, and what it decided.
///
/// The lookup `CacheStage.handle` makes next for the same exchange, moments later, is not made
/// twice. Taken once, and only by the exchange
/// it was made for (the same method, URL and headers): a redirect's next hop, a resend after a
/// wait, look up anew.
final class CachePrefetch: Sendable {
    final class Kept: Sendable {
        let method: String
        let url: String
        let headers: Headers
        let lookup: CacheStage.Lookup
        /// Nil when nothing was stored locally (the shared tier may have it).
        let decision: CachePolicy.Decision?

        init(_ exchange: Exchange, _ lookup: CacheStage.Lookup, _ decision: CachePolicy.Decision?) {
            method = exchange.method
            url = exchange.url
            headers = exchange.headers
            self.lookup = lookup
            self.decision = decision
        }
    }
    private let kept = Mutex<Kept?>(nil)

    init() {}

    func keep(_ lookup: CacheStage.Lookup, _ decision: CachePolicy.Decision?, for exchange: Exchange) {
        let kept = Kept(exchange, lookup, decision)
        self.kept.withLock { $0 = kept }
    }

    /// Byte for byte: a request whose URL or headers differ only in their Unicode spelling is
    /// looked up anew (its key text differs).
    func take(for exchange: Exchange) -> Kept? {
        guard let kept = kept.withLock({ kept in kept.take() }), Headers.sameBytes(kept.method, exchange.method),
            Headers.sameBytes(kept.url, exchange.url), Headers.sameBytes(kept.headers.fields, exchange.headers.fields)
        else { return nil }
        return kept
    }
}
