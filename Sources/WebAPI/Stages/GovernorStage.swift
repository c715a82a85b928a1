import Platform
import Synchronization

/// The rate-limit governor: one budget per (host, credential, resource) shared by every
/// apimacro process through Redis (`APIMACRO_SHARED_STATE`), plus a shared pace
/// (`APIMACRO_MAX_RATE`) and a shared cap on requests in flight (`APIMACRO_MAX_CONCURRENCY`).
///
/// Before each send it reserves one unit of the budget atomically (`GovernorScripts.reserve`):
/// with budget left the request goes; with none it waits for the reset when that fits in
/// `APIMACRO_MAX_WAIT`, else raises `RateLimited` without sending; while the budget is
/// unknown (first request, or a window that has passed) only one request in all processes
/// goes, and the others wait for its answer. Every answer's `x-ratelimit-*` headers lower the
/// stored budget (`GovernorScripts.record`). So N processes cannot overshoot the budget.
///
/// It sits below the retries (each retry is a send and reserves again) and right above the
/// credentials, whose value it names by a keyed hash. When Redis is not usable it lets
/// requests through: the local rate-limit stage still handles 403/429 answers.
public struct GovernorStage: Stage {
    let shared: SharedState
    let limits: GovernorLimits
    let slot: CredentialSlot
    let credentials: CredentialStage
    let maxWait: Double
    let api: String?
    let sleep: @Sendable (Double) async throws -> Void
    /// `APIMACRO_MAX_CONCURRENCY` (0: none) and the pace in microseconds (0: none), as the
    /// reserve script's arguments.
    let maxConcurrency: [UInt8]
    let pace: [UInt8]
    /// The last request's identity and what it was worked out from (`identity(of:origin:)`).
    private let lastIdentity = IdentityMemo()

    public init(
        shared: SharedState, limits: GovernorLimits, slot: CredentialSlot, baseURL: String, maxWait: Double,
        api: String?,
        sleep: @escaping @Sendable (Double) async throws -> Void = RetryPolicy.taskSleep
    ) {
        self.shared = shared
        self.limits = limits
        self.slot = slot
        self.credentials = CredentialStage(slot: slot, baseURL: baseURL)
        self.maxWait = maxWait
        self.api = api
        self.sleep = sleep
        maxConcurrency = Array(String(limits.maxConcurrency ?? 0).utf8)
        pace = Array(String(limits.paceMicroseconds).utf8)
    }

    /// `seconds` in whole milliseconds, bounded to a day (a huge `timeout=` must not trap).
    static func milliseconds(_ seconds: Double) -> Int {
        Seconds.milliseconds(min(seconds, 86_400))
    }

    public nonisolated(nonsending) func handle(_ exchange: Exchange, next: Next) async throws -> Response {
        guard let origin = exchange.origin, shared.isAvailable else { return try await next(exchange) }
        let identity = identity(of: exchange, origin: origin)
        let keys = identity.governorKeys(origin)
        // The route's keyed name, never the segment itself: it may hold a token (`/bot<TOKEN>/…`).
        let route = identity.route(ResourceRoute.segment(of: exchange.url))
        let lease = GovernorStage.leaseID()
        let arguments = [
            route, lease, maxConcurrency, Array(String(Self.milliseconds(exchange.timeout + 10)).utf8), pace,
            Array(String(Self.milliseconds(exchange.timeout + 5)).utf8),
        ]
        var machine = StateMachine(maxWait: maxWait)
        var action = StateMachine.Action.reserve
        while true {
            switch action {
            case .reserve:
                let reply = await shared.evaluate(GovernorScripts.reserve, encodedKeys: keys, arguments: arguments)
                action = machine.receive(.reply(reply)) ?? .sendUngoverned
            case .sleep(let seconds):
                let started = ContinuousClock.now
                try await sleep(seconds)
                let took = (ContinuousClock.now - started).components
                action =
                    machine.receive(.slept(took: Double(took.seconds) + Double(took.attoseconds) / 1e18)) ?? .reserve
            case .sendUngoverned:
                return try await next(exchange)
            case .refuseSpent(let reset, let seconds):
                throw APIError(
                    .rateLimited,
                    "\(exchange.method) \(slot.redactor.redactURL(exchange.url)): the rate limit shared by every apimacro process "
                        + "(\(shared.source)) is spent for \(origin.host) until \(GovernorStage.clock(reset)), "
                        + "in \(Seconds.whole(seconds)) s; APIMACRO_MAX_WAIT is \(SecondsText.format(maxWait)) s",
                    url: slot.redactor.redactURL(exchange.url), api: api, resetAt: Int(reset), retryAfter: seconds)
            case .refuseWaited(let waited, let seconds):
                throw APIError(
                    .rateLimited,
                    "\(exchange.method) \(slot.redactor.redactURL(exchange.url)): waited \(SecondsText.format(waited)) s "
                        + "for the pace or a probe shared by every apimacro process (\(shared.source)) on \(origin.host); "
                        + "APIMACRO_MAX_WAIT is \(SecondsText.format(maxWait)) s",
                    url: slot.redactor.redactURL(exchange.url), api: api, retryAfter: seconds)
            case .send(let reservation):
                return try await send(
                    exchange, next: next, keys: keys, route: route, lease: lease, reservation: reservation)
            }
        }
    }

    /// Sends the request under `reservation` and records its answer, or its failure.
    private func send(
        _ exchange: Exchange, next: Next, keys: [[UInt8]], route: [UInt8], lease: [UInt8],
        reservation: StateMachine.Reservation
    ) async throws -> Response {
        let response: Response
        do {
            response = try await next(exchange)
        } catch {
            await record(keys: keys, route: route, lease: lease, reservation: reservation, response: nil)
            throw error
        }
        await record(keys: keys, route: route, lease: lease, reservation: reservation, response: response)
        return response
    }

    /// The shared keys of `exchange`'s credential as the wire will carry it.
    ///
    /// A request with the same header bytes and the same attached credential as the last one
    /// (most requests of a client) takes the last one's keys: the material (the headers
    /// scanned for credentials, sorted and joined) and its lookup were ~16 k instructions.
    func identity(of exchange: Exchange, origin: Origin) -> SharedCredential {
        let credential = slot.value
        // `CredentialStage.allows`, on the origin parsed once.
        let attached = credential != nil && credentials.home == origin && origin.isSecureForCredentials
        let own = SharedCredential.ownLine(credential, attached: attached)
        let fields = exchange.headers.fields
        if let last = lastIdentity.state.withLock({ $0 }), Headers.sameBytes(last.fields, fields),
            last.own.map({ mine in own.map { Headers.sameBytes(mine, $0) } ?? false }) ?? (own == nil)
        {
            return last.credential
        }
        let material = SharedCredential.material(wire: exchange, credential: credential, attached: attached)
        let identity = shared.credential(material: material)
        lastIdentity.state.withLock { $0 = (fields, own, identity) }
        return identity
    }

    /// The last identity worked out, with the header fields and own-credential line it came from.
    final class IdentityMemo: Sendable {
        let state = Mutex<(fields: [(name: String, value: String)], own: String?, credential: SharedCredential)?>(nil)
    }

    /// Frees the lease (and the probe) and stores what the answer says of the budget.
    private func record(
        keys: [[UInt8]], route: [UInt8], lease: [UInt8], reservation: StateMachine.Reservation,
        response: Response?
    ) async {
        let info = response.flatMap { RateLimitInfo(headers: $0.headers) }
        let remaining = info?.remaining
        let reset = info?.reset
        let usable = remaining != nil && reset != nil
        let arguments: [[UInt8]] = [
            route, lease, reservation.probe ? GovernorStage.one : GovernorStage.zero, reservation.resource,
            response == nil ? GovernorStage.zero : GovernorStage.one,
            usable ? GovernorStage.one : GovernorStage.zero,
            GovernorStage.digits(info?.limit), GovernorStage.digits(remaining), GovernorStage.digits(reset),
            Array(ResourceRoute.resourceName(info?.resource).utf8),
        ]
        // Nobody waits for its answer: written now, read later. A routine answer's record may
        // wait for the next command on the connection (most often the next request's
        // reservation: one write, and Redis woken once, for both), at most
        // `SharedState.holdLimit` (50 ms): nobody waits on it. Written at once: a probe's (other
        // processes wait for it), a lease under APIMACRO_MAX_CONCURRENCY (it holds a slot), an
        // answer that spent the budget or failed.
        let routine = StateMachine.holdsRecord(
            probe: reservation.probe, maxConcurrency: limits.maxConcurrency, answered: response != nil,
            remaining: remaining)
        await shared.post(GovernorScripts.record, encodedKeys: keys, arguments: arguments, holding: routine)
    }

    static let one = Array("1".utf8)
    static let zero = Array("0".utf8)

    /// A number as decimal digits; empty for none.
    static func digits(_ value: Int?) -> [UInt8] {
        value.map { Array(String($0).utf8) } ?? []
    }

    /// A lease's name, unique among the requests in flight: 64 random bits drawn once per
    /// process and a count of the leases it took, as hex (two `getrandom` calls a request
    /// were most of the governor's system time after the Redis round trips).
    static func leaseID() -> [UInt8] {
        let number = leaseCount.add(1, ordering: .relaxed).newValue
        return Array((leasePrefix + String(number, radix: 16)).utf8)
    }

    private static let leasePrefix: String = {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 16) + "-"
    }()
    private static let leaseCount = Atomic<UInt64>(0)

    /// `14:05:09 UTC`, computed (a `DateFormatter` per call cost more than the request).
    static func clock(_ epoch: Int64) -> String {
        let second = Int((epoch % 86_400 + 86_400) % 86_400)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)) UTC"
    }
}
