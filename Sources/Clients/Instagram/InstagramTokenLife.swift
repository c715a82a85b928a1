/// When an Instagram token is used as it is, refreshed, or known to have expired: Meta's
/// long-lived tokens live 60 days, and `refresh_access_token` renews one that is at least
/// 24 hours old and not yet expired (its "Refresh Access Token" reference).
///
/// apimacro refreshes a stored token once it is within 10 days of its expiry.
///
/// Pure: the time is passed in.
public enum InstagramTokenLife {
    /// What to do with a token before a request.
    public enum Decision: Sendable, Equatable {
        /// Send it.
        case use
        /// Refresh it first (then store and send the new one).
        case refresh
        /// It expired at this time (epoch seconds): nothing is sent.
        case expired(at: Int)
    }

    /// A long-lived token's life: 60 days.
    public static let lifetime = 60 * 86_400
    /// The youngest token `refresh_access_token` renews: 24 hours.
    public static let minimumAge = 86_400
    /// How close to its expiry a token is refreshed: 10 days.
    public static let refreshWindow = 10 * 86_400

    /// The decision for a token obtained at `obtainedAt` that expires at `expiresAt` (both epoch
    /// seconds; nil: not known, then it is used), at `now`.
    public static func decide(obtainedAt: Int, expiresAt: Int?, now: Double) -> Decision {
        guard let expiresAt else { return .use }
        let now = now.isFinite ? now : 0
        if Double(expiresAt) <= now { return .expired(at: expiresAt) }
        let age = now - Double(obtainedAt)
        let left = Double(expiresAt) - now
        return age >= Double(minimumAge) && left <= Double(refreshWindow) ? .refresh : .use
    }
}
