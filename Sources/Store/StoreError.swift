/// Why the store refused or failed: a struct around a private kind, as `APIError` is, so a new
/// kind breaks nobody; `description` is the one line a user sees.
public struct StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, for the bindings' choice of Python exception.
    public enum Kind: Sendable, Equatable {
        /// A value the macro gave is wrong (a name that is not an identifier, a type clash, a
        /// file that is not SQLite): `ValueError`.
        case invalid
        /// A value of the wrong type (a row that is not a dict): `TypeError`.
        case type
        /// Another run held the state lock or the database past the wait.
        case locked
        /// The file system refused (not writable, disk full), or a database server did.
        case io
        /// A database server could not be reached (before anything was sent).
        case unreachable
        /// Another run committed the macro's state first (compare-and-set lost).
        case conflict
    }

    /// What went wrong.
    public let kind: Kind
    /// The one line a user sees: what was refused and what to do.
    public let description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    static func invalid(_ message: String) -> StoreError { StoreError(.invalid, message) }
    static func type(_ message: String) -> StoreError { StoreError(.type, message) }
    static func locked(_ message: String) -> StoreError { StoreError(.locked, message) }
    static func io(_ message: String) -> StoreError { StoreError(.io, message) }
    static func unreachable(_ message: String) -> StoreError { StoreError(.unreachable, message) }
    static func conflict(_ message: String) -> StoreError { StoreError(.conflict, message) }
}
