import Platform
import Synchronization

/// The first tier of the HTTP cache: this process's SQLite file (`HTTPCache`), whose entries
/// are named, varied and sealed with this machine's secret.
///
/// Reading or writing it never fails a request: a cache file that cannot be used is reported
/// once per process (through `warn`) and the request goes on without it.
struct LocalCacheTier: Sendable {
    let cache: HTTPCache
    private let warn: @Sendable (String) -> Void
    private let trouble = Trouble()
    /// The keyed names of the requests this client made lately: a request repeated (a loop
    /// polling one URL, the pages of a list fetched again) is named once, not per call.
    private let names = Names()

    /// - Parameters:
    ///   - cache: the HTTP cache (SQLite).
    ///   - warn: writes one line to stderr (a cache file that is not usable).
    init(cache: HTTPCache, warn: @escaping @Sendable (String) -> Void) {
        self.cache = cache
        self.warn = warn
    }

    /// Key texts to their keyed names (HMAC-SHA256, about 17 k instructions each).
    ///
    /// At most `capacity` of them (emptied when full); in memory only, like the credential they hold.
    private final class Names: Sendable {
        static let capacity = 256
        private let known = Mutex<[Text: [UInt8]]>([:])

        /// A key text found by its bytes, which its name is made of: String's == and hashing take
        /// canonically equivalent text as equal ("é" and "e\u{301}"), which would give a request
        /// carrying one spelling of a credential the name of the other's entry.
        struct Text: Hashable, Sendable {
            let bytes: [UInt8]

            func hash(into hasher: inout Hasher) {
                bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            }
        }

        func name(_ text: String, secret: CacheSecret) -> [UInt8] {
            let bytes = Text(bytes: Array(text.utf8))
            if let name = known.withLock({ $0[bytes] }) { return name }
            let name = secret.name(text)
            known.withLock { known in
                if known.count >= Names.capacity { known.removeAll() }
                known[bytes] = name
            }
            return name
        }
    }

    /// Warns once per process when the cache file cannot be read or written.
    private final class Trouble: Sendable {
        let reported = Atomic<Bool>(false)
    }

    /// The entry key of a request whose key text (`CacheStage.keyText`) is `keyText`.
    func key(_ keyText: String) -> [UInt8] {
        names.name(keyText, secret: cache.secret)
    }

    /// The stored entry under `key` whose variant fits `wire`'s headers, if any.
    nonisolated(nonsending) func entry(key: [UInt8], for wire: Exchange) async -> HTTPCache.Entry? {
        entryAtOnce(key: key, for: wire)
    }

    /// `entry(key:for:)` on the calling thread (the read is a synchronous SQLite step in any case).
    func entryAtOnce(key: [UInt8], for wire: Exchange) -> HTTPCache.Entry? {
        let secret = cache.secret
        do {
            return try cache.entriesAtOnce(key: key).first { entry in
                entry.variant == CacheStage.variant(entry.varyNames, wire.headers, secret: secret)
            }
        } catch {
            report(error)
            return nil
        }
    }

    /// The entry to store for `response`, the answer to `exchange` (sent as `wire`): its
    /// `Set-Cookie` left out, its age from the request and response times.
    func entry(
        for response: Response, key: [UInt8], exchange: Exchange, wire: Exchange, requestTime: Double,
        responseTime: Double
    ) -> HTTPCache.Entry {
        let names = CachePolicy.varyNames(response.headers)
        // Set-Cookie alone is never stored (a session handed to this client only); every
        // other header is, Set-Cookie2 included (RFC 9111 §3.1; cache-tests headers-store-*).
        var headers = response.headers
        headers.remove("Set-Cookie")
        return HTTPCache.Entry(
            key: key, variant: CacheStage.variant(names, wire.headers, secret: cache.secret),
            target: CacheStage.target(exchange.url, secret: cache.secret), status: response.status, headers: headers,
            body: response.body, varyNames: names, storedAt: responseTime,
            initialAge: CachePolicy.initialAge(response.headers, requestTime: requestTime, responseTime: responseTime))
    }

    /// A shared tier's copy made an entry of this tier, under `key`, for `exchange` (sent as `wire`).
    func entry(adopting found: SharedCache.Stored, key: [UInt8], exchange: Exchange, wire: Exchange, now: Double)
        -> HTTPCache.Entry
    {
        HTTPCache.Entry(
            key: key, variant: CacheStage.variant(found.varyNames, wire.headers, secret: cache.secret),
            target: CacheStage.target(exchange.url, secret: cache.secret), status: found.status, headers: found.headers,
            // Another machine's clock (or a writer of Redis) does not make an entry younger
            // than now: a storage time in the future would keep it fresh past its max-age.
            body: found.body, varyNames: found.varyNames, storedAt: min(found.storedAt, now),
            initialAge: found.initialAge)
    }

    /// Stores `entry` (a new answer, or one found in the shared tier).
    nonisolated(nonsending) func store(_ entry: HTTPCache.Entry) async {
        do {
            try await cache.store(entry)
        } catch {
            report(error)
        }
    }

    /// Updates a stored entry after a 304 (its headers, when `headersChanged`, and its times;
    /// the body is kept).
    nonisolated(nonsending) func refresh(_ entry: HTTPCache.Entry, headersChanged: Bool) async {
        do {
            try await cache.refresh(entry, headersChanged: headersChanged)
        } catch {
            report(error)
        }
    }

    /// Removes what is stored for `urls`, for every credential and variant.
    nonisolated(nonsending) func invalidate(_ urls: [String]) async {
        do {
            try await cache.invalidate(targets: urls.map { CacheStage.target($0, secret: cache.secret) })
        } catch {
            report(error)
        }
    }

    private func report(_ error: any Error) {
        guard !trouble.reported.exchange(true, ordering: .relaxed) else { return }
        warn(
            "apimacro: warning: the HTTP cache \(cache.file.path) is not usable (\(SystemErrorText.reason(error))); continuing without it"
        )
    }
}
