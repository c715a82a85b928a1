/// Why a Redis command failed.
public enum RedisFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// No answer: refused, reset, closed or timed out. The state is used again once the server is back.
    case unreachable(String)
    /// An answer that says this address cannot be used as configured: a wrong password, a
    /// server that demands one, a port that does not speak Redis. Retrying will not help.
    case rejected(String)
    /// The server answered the command with an error reply.
    case reply(String)

    public var description: String {
        switch self {
        case .unreachable(let text), .rejected(let text), .reply(let text): text
        }
    }
}
