/// A problem with how a batch was asked for (a jobs file that cannot be read or
/// parsed, a bad `--shard`): the command line prints its message on one line and
/// exits 2, before any macro runs.
public struct BatchError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
