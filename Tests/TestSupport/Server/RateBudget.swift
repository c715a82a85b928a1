import Foundation
import Synchronization

/// The test server's budget mode: GitHub's primary rate limit as one server enforces it for
/// every client at once.
///
/// Each window of `window` seconds has `limit` units; every request the server sees spends one
/// (a 304 too), and past the limit the answer is GitHub's 403 "API rate limit exceeded" with
/// `x-ratelimit-remaining: 0` (the body recorded in `FaultResponses`, the headers GitHub
/// sends: `x-ratelimit-limit`, `-remaining`, `-reset`, `-used`, `-resource: core`, as in
/// ../shared/fixtures/github/octokit-*.json). It also counts the requests in flight (received,
/// not yet answered) and their peak, for concurrency caps.
///
/// For tests of what a client believes, it can also send a reset in milliseconds (an API that
/// counts its epoch so, or a hostile one), keep one window until told to start the next
/// (`nextWindow`), and hold answers back: the next few until released (`release`), or all until a number of
/// requests are in flight at once (an event, so that overlap never depends on timing).
final class RateBudget: Sendable {
    let limit: Int
    let window: Int
    /// Every answer waits this long, so that requests overlap and concurrency shows.
    let delayMilliseconds: Int
    /// The `x-ratelimit-reset` header in epoch milliseconds rather than seconds.
    let resetInMilliseconds: Bool
    /// Windows begin only through `nextWindow`, not when the clock passes the reset.
    let manualWindows: Bool
    /// Paths the mode leaves alone (`setBudget(exempting:)`).
    var exempt: Set<String> {
        get { state.withLock { $0.exempt } }
        set { state.withLock { $0.exempt = newValue } }
    }
    private let state: Mutex<State>

    struct State {
        var reset: Int
        var used = 0
        var inFlight = 0
        var report = BudgetReport()
        var gate = Gate.open
        /// Answers waiting for the gate to open, each a write to run then.
        var held: [@Sendable () -> Void] = []
        var exempt: Set<String> = []
    }

    /// Whether answers go out.
    enum Gate {
        case open
        /// This many more answers are held (later ones go out), until `release`.
        case closed(Int)
        /// Held until this many requests are in flight at once.
        case untilInFlight(Int)
    }

    init(
        limit: Int, window: Int, delayMilliseconds: Int, resetInMilliseconds: Bool = false,
        manualWindows: Bool = false, holdUntilInFlight: Int? = nil
    ) {
        self.limit = limit
        self.window = window
        self.delayMilliseconds = delayMilliseconds
        self.resetInMilliseconds = resetInMilliseconds
        self.manualWindows = manualWindows
        var initial = State(reset: ServerCore.now() + window)
        if let holdUntilInFlight { initial.gate = .untilInFlight(holdUntilInFlight) }
        state = Mutex(initial)
    }

    /// A request arrived.
    func begin() {
        let opened = state.withLock { state -> [@Sendable () -> Void] in
            state.inFlight += 1
            state.report.peakInFlight = max(state.report.peakInFlight, state.inFlight)
            guard case .untilInFlight(let count) = state.gate, state.inFlight >= count else { return [] }
            state.gate = .open
            state.report.gateOpened = true
            defer { state.held = [] }
            return state.held
        }
        for write in opened { write() }
    }

    /// A request was answered (or its connection closed first).
    func end() {
        state.withLock { $0.inFlight -= 1 }
    }

    /// Runs `write` (an answer going out) now, or when the gate opens.
    func deliver(_ write: @escaping @Sendable () -> Void) {
        let (now, first) = state.withLock { state -> (Bool, Bool) in
            switch state.gate {
            case .open, .closed(0): return (true, false)
            case .closed(let count): state.gate = .closed(count - 1)
            case .untilInFlight: break
            }
            state.held.append(write)
            state.report.held += 1
            return (false, state.report.held == 1)
        }
        if now { write() }
        // A count of requests in flight that never comes must not hang the client: after a
        // minute the gate opens anyway, and the report says it was not seen (`gateOpened`).
        if first {
            DispatchQueue.global().asyncAfter(deadline: .now() + 60) { [self] in
                let late = state.withLock { state -> [@Sendable () -> Void] in
                    guard case .untilInFlight = state.gate else { return [] }
                    state.gate = .open
                    defer { state.held = [] }
                    return state.held
                }
                for write in late { write() }
            }
        }
    }

    /// Holds the next `count` answers until `release` (the answers after them go out).
    func hold(next count: Int) {
        state.withLock { $0.gate = .closed(count) }
    }

    /// Sends the answers held and opens the gate.
    func release() {
        let held = state.withLock { state -> [@Sendable () -> Void] in
            state.gate = .open
            defer { state.held = [] }
            return state.held
        }
        for write in held { write() }
    }

    /// Starts the next window now, ending at `reset` (epoch seconds).
    func nextWindow(reset: Int) {
        state.withLock { state in
            state.reset = reset
            state.used = 0
            state.report.windows += 1
        }
    }

    /// Spends one unit on `response`'s request: the answer with the window's headers, or the 403.
    func spend(_ response: Response) -> Response {
        let now = ServerCore.now()
        let (allowed, remaining, reset) = state.withLock { state -> (Bool, Int, Int) in
            if !manualWindows, now >= state.reset {
                state.reset = now + window
                state.used = 0
                state.report.windows += 1
            }
            let allowed = state.used < limit
            if allowed {
                state.used += 1
                state.report.admitted += 1
                state.report.peakPerWindow = max(state.report.peakPerWindow, state.used)
            } else {
                state.report.refused += 1
            }
            return (allowed, limit - state.used, state.reset)
        }
        var answer =
            allowed
            ? response : Response.text(FaultResponses.rateLimitBody, contentType: Response.jsonContentType, status: 403)
        answer.headers += [
            ("x-ratelimit-limit", String(limit)),
            ("x-ratelimit-remaining", String(remaining)),
            ("x-ratelimit-reset", String(resetInMilliseconds ? reset * 1000 : reset)),
            ("x-ratelimit-used", String(limit - remaining)),
            ("x-ratelimit-resource", "core"),
        ]
        answer.delayMilliseconds += delayMilliseconds
        return answer
    }

    var report: BudgetReport { state.withLock { $0.report } }

    /// The end of the current window, epoch seconds.
    var reset: Int { state.withLock { $0.reset } }
}

/// What the budget mode saw.
public struct BudgetReport: Sendable, Equatable {
    /// Requests answered within the budget.
    public var admitted = 0
    /// Requests answered 403 because the window's budget was spent.
    public var refused = 0
    /// The most units spent in any one window.
    public var peakPerWindow = 0
    /// Windows that began after the first.
    public var windows = 0
    /// The most requests in flight at once.
    public var peakInFlight = 0
    /// Answers that waited for the gate.
    public var held = 0
    /// Whether a gate waiting for a number of requests in flight saw them.
    public var gateOpened = false
}

extension TestServer {
    /// Turns on the budget mode for every request from now on: `limit` requests per `window`
    /// seconds, each answer `delayMilliseconds` late (see `RateBudget`).
    /// - Parameters:
    ///   - limit: requests per window.
    ///   - window: the window's length in seconds.
    ///   - delayMilliseconds: how late every answer is.
    ///   - resetInMilliseconds: `x-ratelimit-reset` in epoch milliseconds (a reset that looks
    ///     centuries away to a client counting seconds).
    ///   - manualWindows: a window ends only at `nextBudgetWindow`.
    ///   - holdUntilInFlight: no answer goes out until this many requests are in flight at once.
    ///   - exempting: paths the mode leaves alone (neither counted nor held): a client's own
    ///     lookups before the requests under test (`TestServer.bitlyLimitLookups`).
    public func setBudget(
        limit: Int, window: Int = 3600, delayMilliseconds: Int = 0, resetInMilliseconds: Bool = false,
        manualWindows: Bool = false, holdUntilInFlight: Int? = nil, exempting: Set<String> = []
    ) {
        let budget = RateBudget(
            limit: limit, window: window, delayMilliseconds: delayMilliseconds,
            resetInMilliseconds: resetInMilliseconds, manualWindows: manualWindows,
            holdUntilInFlight: holdUntilInFlight)
        budget.exempt = exempting
        core.setBudget(budget)
    }

    /// What the budget mode saw so far (all zero when it is off).
    public var budgetReport: BudgetReport { core.budget?.report ?? BudgetReport() }

    /// The end of the budget's current window (epoch seconds); nil when the mode is off.
    public var budgetReset: Int? { core.budget?.reset }

    /// Starts the budget's next window now, ending at `reset` (epoch seconds).
    public func nextBudgetWindow(reset: Int) { core.budget?.nextWindow(reset: reset) }

    /// Holds the budget mode's next `count` answers until `releaseBudgetAnswers` (an answer
    /// that arrives late, after others).
    public func holdBudgetAnswers(next count: Int = 1) { core.budget?.hold(next: count) }

    /// Sends the answers held and lets the next ones through.
    public func releaseBudgetAnswers() { core.budget?.release() }
}
