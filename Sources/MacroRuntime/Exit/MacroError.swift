/// A problem with how apimacro was asked to run a macro (not an error raised
/// by the macro itself): the CLI prints its message on one line and exits 2
/// (`ExitReport`).
public struct MacroError: UsageError, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
