/// A TOML document that does not parse: what is wrong and where.
public struct TOMLSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, and what to write instead where that is clear.
    public let message: String
    /// Where the error is (1-based; the column counts Unicode scalars).
    public let line: Int
    public let column: Int

    /// `line L, column C: MESSAGE`.
    public var description: String { "line \(line), column \(column): \(message)" }
}
