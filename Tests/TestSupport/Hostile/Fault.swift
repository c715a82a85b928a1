/// A misbehaviour the test server applies to one request instead of (or on top of) its normal answer.
public enum Fault: Sendable {
    /// Answer with this status instead; `body` defaults to `{"message":"<reason phrase>"}`, and
    /// `headers` are added to (or replace) the usual ones.
    case status(Int, body: String? = nil, headers: [(String, String)] = [])
    /// Close the connection without any response (a TCP reset: SO_LINGER 0, then close).
    case reset
    /// Answer normally, but only after this many milliseconds (scheduled on the event loop).
    case delay(milliseconds: Int)
    /// Send the head with the real `Content-Length`, then half of the body, then close.
    case truncated
    /// Answer normally, keep-alive (no `Connection: close`), then close the connection: a
    /// server whose keep-alive timeout ends just after its answer.
    case closeAfterAnswer
    /// 429 with `retry-after` (if given), `x-ratelimit-remaining: 0` and
    /// `x-ratelimit-reset` = now + `retryAfter` (or + 60) seconds.
    case rateLimited(retryAfter: Int?)
    /// 403 with GitHub's "API rate limit exceeded" body, `x-ratelimit-remaining: 0` and
    /// `x-ratelimit-reset` = now + `resetIn` seconds.
    case forbiddenRateLimit(resetIn: Int)
}

/// The random fault mode for soak tests: every request draws one number from a generator seeded
/// with `seed`; fault *i* applies when it falls in its slice of [0, 1) (slices are the `rates` in
/// order, so each fault happens with its own probability when the rates add up to at most 1).
///
/// The sequence of decisions depends only on the seed and the order requests arrive in.
public struct RandomFaults: Sendable {
    /// The generator's seed.
    public var seed: UInt64
    /// Each fault with its probability (0...1).
    public var rates: [(Fault, Double)]

    /// A random fault mode with this seed and these rates.
    public init(seed: UInt64, rates: [(Fault, Double)]) {
        self.seed = seed
        self.rates = rates
    }
}

/// SplitMix64: a small, fast, deterministic generator (seeded, so a failure repeats).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform number in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
}
