import Foundation

/// A request resolved against its client and ready for the wire: an absolute
/// URL, the final headers and body bytes.
///
/// Stages pass it down and may change it.
public struct Exchange: Sendable {
    public var method: String
    /// Absolute `http(s)` URL.
    public var url: String
    public var headers: Headers
    public var body: [UInt8]
    /// Seconds before the request fails with `Timeout`.
    public var timeout: Double
    /// Whether an error status raises (the default) or comes back as a response
    /// (`Request.validatesStatus`, e.g., `apimacro.request(..., raise_for_status=False)`).
    public var validatesStatus = true
    /// Whether a retry cannot repeat a side effect.
    public var isIdempotent: Bool { ["GET", "HEAD", "OPTIONS"].contains(method) }

    public init(method: String, url: String, headers: Headers, body: [UInt8], timeout: Double) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// Scheme, host and port of the URL (lower-cased; default ports filled in).
    public var origin: Origin? { Origin(url: url) }
}

/// The scheme, host and port a URL points at.
public struct Origin: Sendable, Equatable {
    public let scheme: String
    public let host: String
    public let port: Int

    public init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// 127.0.0.0/8, ::1 and localhost: credentials may go there over plain http.
    public var isLoopback: Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if bare == "localhost" || bare == "::1" || bare.hasSuffix(".localhost") { return true }
        let octets = bare.split(separator: ".")
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// Whether a credential may travel to this origin: https, or loopback.
    public var isSecureForCredentials: Bool { scheme == "https" || isLoopback }
}

/// One step of the pipeline: it gets the exchange and the rest of the
/// pipeline, and returns the response (or throws `APIError`).
public protocol Stage: Sendable {
    func handle(_ exchange: Exchange, next: Next) async throws -> Response
}

/// The rest of the pipeline below a stage.
public struct Next: Sendable {
    let run: @Sendable (Exchange) async throws -> Response
    /// Sends `exchange` through the remaining stages.
    public func callAsFunction(_ exchange: Exchange) async throws -> Response { try await run(exchange) }
}

/// Sends an exchange over the network (or pretends to).
///
/// A transport that also keeps exchanges (`ExchangeStore`: the cache, HAR recording and replay,
/// shared state) contributes stages to each client's pipeline through the two `stages`
/// requirements; a plain transport contributes none (the defaults below).
public protocol Transport: Sendable {
    func send(_ exchange: Exchange) async throws -> Response
    /// Stages above the retries: recording, then the cache or the replay.
    func storeStages(slot: CredentialSlot, baseURL: String, log: ExchangeLog) -> [any Stage]
    /// Stages between the retries and the credentials (the shared rate-limit governor).
    func wireStages(slot: CredentialSlot, baseURL: String, maxWait: Double, api: String) -> [any Stage]
    /// Whether recorded exchanges answer instead of the network (`--replay`): then a client
    /// that requires a credential lets its calls through without one.
    var answersFromRecording: Bool { get }
}

extension Transport {
    public func storeStages(slot: CredentialSlot, baseURL: String, log: ExchangeLog) -> [any Stage] { [] }
    public func wireStages(slot: CredentialSlot, baseURL: String, maxWait: Double, api: String) -> [any Stage] { [] }
    public var answersFromRecording: Bool { false }
}

/// Stages in order (outermost first) in front of a transport.
///
/// The chain of `Next` links is built once, here, not per request: sending an exchange
/// allocates no closures.
public struct Pipeline: Sendable {
    public let stages: [any Stage]
    public let transport: any Transport
    private let entry: Next

    public init(stages: [any Stage], transport: any Transport) {
        self.stages = stages
        self.transport = transport
        var next = Next { [transport] in try await transport.send($0) }
        for stage in stages.reversed() {
            let below = next
            next = Next { try await stage.handle($0, next: below) }
        }
        entry = next
    }

    /// Runs `exchange` through every stage, then the transport.
    public func send(_ exchange: Exchange) async throws -> Response {
        try await entry(exchange)
    }
}
