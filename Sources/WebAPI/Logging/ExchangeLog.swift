public import Logging
import Platform
import Spawning
import Synchronization

/// Counts exchanges and, with `-v`, logs one line per exchange on stderr:
/// method, redacted URL, status, milliseconds, where the answer came from; with `-vv`
/// (`full`), each request and response in full before that line (`ExchangeText`).
public final class ExchangeLog: Sendable {
    private let counters = Mutex((requests: 0, cacheHits: 0, replayed: 0))
    let logger: Logger?
    /// `-vv`: requests and responses in full, redacted, besides the one line.
    public let full: Bool

    /// - Parameters:
    ///   - logger: where `-v` lines go; nil to count only.
    ///   - full: whether each request and response is logged in full (`-vv`).
    public init(logger: Logger?, full: Bool = false) {
        self.logger = logger
        self.full = full && logger != nil
    }

    /// Requests sent over the network so far.
    public var requests: Int { counters.withLock { $0.requests } }
    /// Responses served from the cache so far.
    public var cacheHits: Int { counters.withLock { $0.cacheHits } }
    /// Requests answered by the replay file (`--replay`) so far.
    public var replayed: Int { counters.withLock { $0.replayed } }

    /// Records one exchange; `note` (which attempt it was, why it failed) follows in parentheses.
    public func record(
        method: String, url: String, status: Int?, milliseconds: Int, source: String, note: String? = nil,
        account: String? = nil, redactor: @autoclosure () -> Redactor
    ) {
        counters.withLock {
            if source == Response.Source.cacheHit.rawValue || source == Response.Source.stale.rawValue
                || source == Response.Source.sharedHit.rawValue
            {
                $0.cacheHits += 1
            } else if source == Response.Source.replay.rawValue {
                $0.replayed += 1
            } else {
                $0.requests += 1
            }
        }
        guard let logger else { return }
        let redactor = redactor()
        let outcome = status.map(String.init) ?? "---"
        var line = "\(method) \(redactor.redactURL(url)) \(outcome) \(milliseconds)ms \(source)"
        if let note { line += " (\(redactor.redact(note)))" }
        if let account { line += " [account \(account)]" }
        logger.info("\(line)")
    }

    /// Logs one line with `-v` (a pacing wait); the line must hold nothing secret.
    public func note(_ line: String) {
        logger?.info("\(line)")
    }

    /// With `-vv`, logs `lines` (already redacted: `ExchangeText`), one log line each.
    public func show(_ lines: @autoclosure () -> [String]) {
        guard full, let logger else { return }
        for line in lines() { logger.info("\(line)") }
    }
}

/// Records every exchange that passes below it, redacted with its client's redactor.
public struct ExchangeLogStage: Stage {
    let log: ExchangeLog
    let slot: CredentialSlot
    /// The stored account's label, named on each `-v` line (`[account work]`).
    let account: String?

    /// - Parameters:
    ///   - log: where the exchanges go.
    ///   - slot: the client's credential and redactor, as they are at each exchange.
    ///   - account: the label of the stored account the client sends, if any.
    public init(log: ExchangeLog, slot: CredentialSlot, account: String? = nil) {
        self.log = log
        self.slot = slot
        self.account = account
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        // The logging is done in functions of its own: what they hold lives on the thread's
        // stack, not in this async frame (each call's frames come from its task's allocator).
        let start = ContinuousClock.now
        showRequest(exchange)
        do {
            let response = try await next(exchange)
            recordResponse(response, to: exchange, since: start)
            return response
        } catch let error as APIError where error.kind != .cancelled {
            recordFailure(error, of: exchange, since: start)
            throw error
        }
    }

    /// Milliseconds since `start`.
    private static func elapsed(since start: ContinuousClock.Instant) -> Int {
        let duration = ContinuousClock.now - start
        return Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// With `-vv`, the request as it goes.
    @inline(never)
    private func showRequest(_ exchange: Exchange) {
        log.show(
            ExchangeText.request(
                method: exchange.method, url: exchange.url, headers: exchange.headers, body: exchange.body,
                redactor: slot.redactor.adding(credentialsOf: exchange)))
    }

    /// The answer's line (and with `-vv`, the answer).
    @inline(never)
    private func recordResponse(_ response: Response, to exchange: Exchange, since start: ContinuousClock.Instant) {
        log.show(
            ExchangeText.response(
                status: response.status, headers: response.headers, body: response.body,
                source: response.source == .network ? nil : response.source.rawValue,
                redactor: slot.redactor.adding(credentialsOf: exchange)))
        // A 304 to a conditional request is the cache's revalidation (CacheStage serves the stored body).
        let conditional = exchange.headers["If-None-Match"] != nil || exchange.headers["If-Modified-Since"] != nil
        let source = response.status == 304 && conditional ? Response.Source.revalidated : response.source
        // A status RetryStage answers with another attempt, or the answer to one: which attempt it was.
        let retried =
            exchange.attempt > 1
            || (exchange.attemptLimit > 1 && RetryPolicy.retryableStatuses.contains(response.status))
        log.record(
            method: exchange.method, url: exchange.url, status: response.status,
            milliseconds: Self.elapsed(since: start), source: source.rawValue,
            note: retried ? Self.attempt(of: exchange) : nil, account: account, redactor: slot.redactor)
    }

    /// The failed attempt's line.
    @inline(never)
    private func recordFailure(_ error: APIError, of exchange: Exchange, since start: ContinuousClock.Instant) {
        log.record(
            method: exchange.method, url: exchange.url, status: nil, milliseconds: Self.elapsed(since: start),
            source: "network", note: Self.attempt(of: exchange) + ", " + Self.reason(error, exchange: exchange),
            account: account, redactor: slot.redactor)
    }

    /// "attempt 2 of 4" (retries allowed), or "attempt 1" (a request never retried).
    static func attempt(of exchange: Exchange) -> String {
        exchange.attemptLimit > 1
            ? "attempt \(exchange.attempt) of \(exchange.attemptLimit)" : "attempt \(exchange.attempt)"
    }

    /// Why an attempt failed, without the method and URL the line already shows:
    /// "network error: no response (Failed to connect to …)", "timeout: …".
    static func reason(_ error: APIError, exchange: Exchange) -> String {
        let prefix = "\(exchange.method) \(exchange.url): "
        let message = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
        let kind = error.kind == .network ? "network error" : error.kind.description
        return "\(kind): \(message)"
    }
}

/// A swift-log handler that writes bare lines to stderr (the `-v` format).
public struct StderrLineHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let prefix: String

    public init(prefix: String = "apimacro: ") { self.prefix = prefix }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // A line quotes URLs and messages a server chose (a `Link` next page): shown, not obeyed.
        let line = TerminalText.shown(event.message.description, on: STDERR_FILENO)
        _ = DescriptorIO.writeAll(STDERR_FILENO, Array((prefix + line + "\n").utf8))
    }
}
