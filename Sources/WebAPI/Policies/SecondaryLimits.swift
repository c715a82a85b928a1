/// An API's secondary limits as its client declares them: the limits no header announces and
/// that a client can only keep by pacing itself (GitHub's "secondary rate limits"), and how to
/// recognise the answer that says one was exceeded.
///
/// The numbers are the API's facts and live with its client (GitHub's in
/// `Clients/GitHub/GitHubSecondaryLimits.swift`); `SecondaryPacer` applies them per credential,
/// `PaceStage` before each send, and `RateLimitPolicy` to the answers.
public struct SecondaryLimits: Sendable {
    /// How many points a request costs against a per-minute budget of the endpoint it names.
    public struct Cost: Sendable, Equatable {
        /// The endpoint's name (its budget is its own): a method and path template, `graphql`.
        public var endpoint: String
        /// What this request costs.
        public var points: Int
        /// The endpoint's budget per minute.
        public var perMinute: Int

        public init(endpoint: String, points: Int, perMinute: Int) {
            self.endpoint = endpoint
            self.points = points
            self.perMinute = perMinute
        }
    }

    /// A most-so-many-per-window rule.
    public struct Window: Sendable, Equatable {
        public var requests: Int
        public var seconds: Double

        public init(requests: Int, seconds: Double) {
            self.requests = requests
            self.seconds = seconds
        }
    }

    /// Requests in flight at once, per credential.
    public var maxInFlight: Int
    /// Seconds from one mutating request's answer to the next one's send; mutating requests
    /// never overlap.
    public var writeGap: Double
    /// Rules for content-creating requests (GitHub: 80 a minute, 500 an hour).
    public var contentCreation: [Window]
    /// The wait after an answer that says a secondary limit was exceeded and names none
    /// (`Retry-After` wins).
    public var defaultWait: Double
    /// Whether a request mutates (it is paced by `writeGap`).
    public var isMutating: @Sendable (Exchange) -> Bool
    /// Whether a request creates content (it counts against `contentCreation`).
    public var createsContent: @Sendable (Exchange) -> Bool
    /// The request's cost against its endpoint's per-minute budget; nil when none applies.
    public var cost: @Sendable (Exchange) -> Cost?
    /// Whether an answer says a secondary limit was exceeded.
    public var recognizes: @Sendable (Response) -> Bool

    public init(
        maxInFlight: Int, writeGap: Double, contentCreation: [Window], defaultWait: Double,
        isMutating: @escaping @Sendable (Exchange) -> Bool, createsContent: @escaping @Sendable (Exchange) -> Bool,
        cost: @escaping @Sendable (Exchange) -> Cost?, recognizes: @escaping @Sendable (Response) -> Bool
    ) {
        self.maxInFlight = maxInFlight
        self.writeGap = writeGap
        self.contentCreation = contentCreation
        self.defaultWait = defaultWait
        self.isMutating = isMutating
        self.createsContent = createsContent
        self.cost = cost
        self.recognizes = recognizes
    }
}
