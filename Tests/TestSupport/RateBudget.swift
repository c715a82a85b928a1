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
final class RateBudget: Sendable {
    let limit: Int
    let window: Int
    /// Every answer waits this long, so that requests overlap and concurrency shows.
    let delayMilliseconds: Int
    private let state: Mutex<State>

    struct State {
        var reset: Int
        var used = 0
        var inFlight = 0
        var report = BudgetReport()
    }

    init(limit: Int, window: Int, delayMilliseconds: Int) {
        self.limit = limit
        self.window = window
        self.delayMilliseconds = delayMilliseconds
        state = Mutex(State(reset: ServerCore.now() + window))
    }

    /// A request arrived.
    func begin() {
        state.withLock { state in
            state.inFlight += 1
            state.report.peakInFlight = max(state.report.peakInFlight, state.inFlight)
        }
    }

    /// A request was answered (or its connection closed first).
    func end() {
        state.withLock { $0.inFlight -= 1 }
    }

    /// Spends one unit on `response`'s request: the answer with the window's headers, or the 403.
    func spend(_ response: Response) -> Response {
        let now = ServerCore.now()
        let (allowed, remaining, reset) = state.withLock { state -> (Bool, Int, Int) in
            if now >= state.reset {
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
            ("x-ratelimit-reset", String(reset)),
            ("x-ratelimit-used", String(limit - remaining)),
            ("x-ratelimit-resource", "core"),
        ]
        answer.delayMilliseconds += delayMilliseconds
        return answer
    }

    var report: BudgetReport { state.withLock { $0.report } }
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
}

extension TestServer {
    /// Turns on the budget mode for every request from now on: `limit` requests per `window`
    /// seconds, each answer `delayMilliseconds` late (see `RateBudget`).
    public func setBudget(limit: Int, window: Int = 3600, delayMilliseconds: Int = 0) {
        core.setBudget(RateBudget(limit: limit, window: window, delayMilliseconds: delayMilliseconds))
    }

    /// What the budget mode saw so far (all zero when it is off).
    public var budgetReport: BudgetReport { core.budget?.report ?? BudgetReport() }
}
