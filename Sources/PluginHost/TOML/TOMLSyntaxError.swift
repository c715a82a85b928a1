/// A TOML document that does not parse: what is wrong and where.
public struct TOMLSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, and what to write instead where that is clear.
    public let message: String
    /// Where the error is (1-based; the column counts Unicode scalars).
    public let line: Int
    public let column: Int
    /// For a value written without its quotes (`format = csv`), whose text `message` quotes:
    /// the message without that text; nil for any other error.
    public var messageWithoutValue: String?

    /// `line L, column C: MESSAGE`.
    public var description: String { "line \(line), column \(column): \(message)" }

    /// The error without the text of the value it is about, for a caller whose value may be a
    /// secret (`token = ghp_…` in `config.toml`, written without quotes).
    public var concealingValue: TOMLSyntaxError {
        TOMLSyntaxError(message: messageWithoutValue ?? message, line: line, column: column)
    }
}
