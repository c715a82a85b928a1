import Synchronization

/// What the Graph routes of one server remember, and what a test turns: the usage its answers
/// report, whether they are throttled, and the refreshes they made.
public final class InstagramGraphState: Sendable {
    /// The usage every Graph answer reports (`X-App-Usage`, `X-Business-Use-Case-Usage`).
    public struct Usage: Sendable, Equatable {
        public var callCount: Int
        public var totalTime: Int
        public var totalCPUTime: Int
        /// `estimated_time_to_regain_access`, minutes.
        public var regainMinutes: Int
        /// Answer every API request with the Instagram account's rate-limit error (80002).
        public var throttled: Bool

        /// The usage of pyfb-2019-headers.json: 12 %, 10 %, 29 %, access now.
        public static let recorded = Usage(
            callCount: 12, totalTime: 10, totalCPUTime: 29, regainMinutes: 0, throttled: false)

        public init(callCount: Int, totalTime: Int, totalCPUTime: Int, regainMinutes: Int, throttled: Bool) {
            self.callCount = callCount
            self.totalTime = totalTime
            self.totalCPUTime = totalCPUTime
            self.regainMinutes = regainMinutes
            self.throttled = throttled
        }
    }

    /// One API request as it arrived, with the usage in force then.
    public struct Arrival: Sendable, Equatable {
        public let path: String
        public let usage: Usage
    }

    private struct State {
        var usage = Usage.recorded
        var arrivals: [Arrival] = []
        var refreshes = 0
    }

    private let state = Mutex(State())

    init() {}

    /// The usage answers report now.
    public var usage: Usage {
        get { state.withLock { $0.usage } }
        set { state.withLock { $0.usage = newValue } }
    }

    /// Every API request so far, with the usage in force when it arrived.
    public var arrivals: [Arrival] { state.withLock { $0.arrivals } }

    /// How many tokens `refresh_access_token` renewed.
    public var refreshes: Int { state.withLock { $0.refreshes } }

    func arrived(_ path: String) -> Usage {
        state.withLock { state in
            state.arrivals.append(Arrival(path: path, usage: state.usage))
            return state.usage
        }
    }

    func refreshed() -> Int {
        state.withLock { state in
            state.refreshes += 1
            return state.refreshes
        }
    }
}

extension TestServer {
    /// The state of this server's Graph routes (`/instagram/graph`).
    public var instagramGraph: InstagramGraphState {
        for handler in core.router.handlers {
            if let routes = handler as? InstagramGraphRoutes { return routes.state }
        }
        return InstagramGraphState()
    }
}
