import Foundation
import Synchronization

/// Answers GETs from the persistent HTTP cache, revalidates stale copies with
/// their validators, stores what may be stored, and serves a stored copy when
/// the network fails or the server answers 5xx (stale-if-error, with a warning).
///
/// It sits above `RetryStage`, so a cache hit costs no retry and stale-if-error
/// sees the failure only after the retries; and above `CredentialStage`, so it
/// keys entries with a SHA-256 of the credential that stage would attach.
public struct CacheStage: Stage {
    let cache: HTTPCache
    /// `--offline`: serve any stored copy, fresh or not, and never ask the network first.
    let offline: Bool
    let credentials: CredentialStage
    let slot: CredentialSlot
    let log: ExchangeLog
    let warn: @Sendable (String) -> Void
    let now: @Sendable () -> Double
    private let trouble = Trouble()

    /// - Parameters:
    ///   - baseURL: the client's base URL (whose host gets the credential).
    ///   - warn: writes one line to stderr (stale-if-error).
    public init(
        cache: HTTPCache, offline: Bool, slot: CredentialSlot, baseURL: String, log: ExchangeLog,
        warn: @escaping @Sendable (String) -> Void, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.cache = cache
        self.offline = offline
        self.credentials = CredentialStage(slot: slot, baseURL: baseURL)
        self.slot = slot
        self.log = log
        self.warn = warn
        self.now = now
    }

    /// Warns once per process when the cache file cannot be read or written.
    private final class Trouble: Sendable {
        let reported = Atomic<Bool>(false)
    }

    public func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        let ownConditions = exchange.headers["If-None-Match"] != nil || exchange.headers["If-Modified-Since"] != nil
        guard exchange.method == "GET", !ownConditions, !CachePolicy.bypasses(requestHeaders: exchange.headers) else {
            return try await next(exchange)
        }
        let start = ContinuousClock.now
        let wire = await credentials.injected(exchange)
        let key = CacheStage.key(for: wire)
        var stored: HTTPCache.Entry?
        do {
            stored = try await cache.entry(key: key)
        } catch {
            report(error)
        }
        if let entry = stored, entry.varyDigest != CacheStage.varyDigest(entry.varyNames, wire.headers) { stored = nil }
        var request = exchange
        var conditional = false
        if let entry = stored {
            let decision = CachePolicy.decide(
                requestHeaders: exchange.headers, responseHeaders: entry.headers, storedAt: entry.storedAt, now: now())
            if decision == .fresh || offline {
                return serve(entry, exchange, source: decision == .fresh ? .cacheHit : .stale, since: start)
            }
            if case .revalidate(let conditions) = decision {
                for (name, value) in conditions { request.headers.set(name, value) }
                conditional = true
            }
        }
        let response: Response
        do {
            response = try await next(request)
        } catch let error as APIError where error.kind == .network || error.kind == .timeout {
            guard let entry = stored else { throw error }
            return stale(entry, exchange, because: error.kind == .timeout ? "timed out" : "no response", since: start)
        }
        if let entry = stored, response.status >= 500 {
            return stale(entry, exchange, because: "\(response.status) \(HTTPStatus.reason(response.status))", since: start)
        }
        if conditional, response.status == 304, let entry = stored {
            let headers = CachePolicy.merge(stored: entry.headers, notModified: response.headers)
            do {
                try await cache.refresh(key: key, headers: headers, storedAt: now())
            } catch {
                report(error)
            }
            return Response(status: entry.status, headers: headers, body: entry.body, url: response.url, source: .revalidated)
        }
        if CachePolicy.isStorable(
            method: exchange.method, requestHeaders: exchange.headers, status: response.status, responseHeaders: response.headers)
        {
            let names = CachePolicy.varyNames(response.headers)
            var headers = response.headers
            headers.remove("Set-Cookie")
            let entry = HTTPCache.Entry(
                key: key, url: slot.redactor.redactURL(exchange.url), status: response.status, headers: headers,
                body: response.body, varyNames: names, varyDigest: CacheStage.varyDigest(names, wire.headers), storedAt: now())
            do {
                try await cache.store(entry)
            } catch {
                report(error)
            }
        }
        return response
    }

    private func serve(_ entry: HTTPCache.Entry, _ exchange: Exchange, source: Response.Source, since start: ContinuousClock.Instant) -> Response {
        log.record(
            method: exchange.method, url: exchange.url, status: entry.status, milliseconds: Self.milliseconds(since: start),
            source: source.rawValue, redactor: slot.redactor)
        return Response(status: entry.status, headers: entry.headers, body: entry.body, url: exchange.url, source: source)
    }

    private func stale(_ entry: HTTPCache.Entry, _ exchange: Exchange, because reason: String, since start: ContinuousClock.Instant) -> Response {
        let age = CacheStage.describeAge(now() - entry.storedAt)
        warn("apimacro: warning: \(exchange.method) \(slot.redactor.redactURL(exchange.url)): \(reason); using the cached copy from \(age) ago")
        return serve(entry, exchange, source: .stale, since: start)
    }

    private func report(_ error: any Error) {
        guard !trouble.reported.exchange(true, ordering: .relaxed) else { return }
        warn("apimacro: warning: the HTTP cache \(cache.file.path) is not usable (\(error)); continuing without it")
    }

    /// The cache key: method, URL and credential as the wire would see them, hashed.
    static func key(for wire: Exchange) -> String {
        let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]
        var text = "v1\n\(wire.method)\n\(wire.url)\n"
        for field in wire.headers where secretHeaders.contains(field.name.lowercased()) {
            text += "\(field.name.lowercased()): \(field.value)\n"
        }
        return SHA256.hex(text)
    }

    /// A digest of the request's values of the headers a response varies on
    /// (the values may be credentials, so only their digest is stored).
    static func varyDigest(_ names: [String], _ headers: Headers) -> String {
        guard !names.isEmpty else { return "" }
        return SHA256.hex(names.map { "\($0): \(headers.values($0).joined(separator: ", "))" }.joined(separator: "\n"))
    }

    /// "12 s", "5 min", "3 h", "2 days".
    public static func describeAge(_ seconds: Double) -> String {
        let value = max(0, seconds)
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

extension CredentialStage {
    /// The exchange as this stage would send it: with the credential when the
    /// URL's origin gets one. For keys and recordings, never for the wire.
    func injected(_ exchange: Exchange) async -> Exchange {
        let seen = Mutex(exchange)
        _ = try? await handle(exchange, next: Next { wire in
            seen.withLock { $0 = wire }
            return Response(status: 0, headers: Headers(), body: [], url: wire.url)
        })
        return seen.withLock { $0 }
    }
}
