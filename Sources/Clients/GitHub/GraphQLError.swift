/// A GraphQL answer that held `errors` (GitHub sends them with HTTP 200).
///
/// Its description is the first message.
public import WebAPI

public struct GraphQLError: Error, Sendable, CustomStringConvertible {
    /// Every error's `message`, in order, redacted.
    public let messages: [String]
    /// Whether the answer also held (partial) `data`.
    public let hasData: Bool
    /// The whole answer (URL redacted).
    public let response: Response

    public var description: String {
        let first = messages.first ?? "GraphQL error"
        return messages.count > 1 ? "\(first) (and \(messages.count - 1) more)" : first
    }
}
