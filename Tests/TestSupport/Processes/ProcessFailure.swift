/// A helper program (openssl, tinyproxy) that could not do what a test needs.
public struct ProcessFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
