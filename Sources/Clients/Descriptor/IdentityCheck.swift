import Platform
public import WebAPI

/// How `apimacro auth status --check` asks a service who a credential belongs to, as `gh auth
/// status` does: one request through the client (its base URL, credential, redirects, errors),
/// and what the answer says.
///
/// A client declares it in its descriptor (`ClientDescriptor.identity`); a client that
/// declares none shows "check not supported".
public struct IdentityCheck: Sendable {
    /// The request, relative to the client's base URL.
    public let request: Request
    /// What the answer says: the account, then facts such as scopes or expiry.
    public let read: @Sendable (Response) -> Identity

    /// A check sending `request` and reading its answer with `read`.
    public init(_ request: Request, read: @escaping @Sendable (Response) -> Identity) {
        self.request = request
        self.read = read
    }
}

/// Who a credential belongs to, as a service answered.
public struct Identity: Sendable, Equatable {
    /// The account (a login, a user name), or a phrase when the service names none.
    public let account: String
    /// Further facts, each a short phrase: `scopes: repo, read:org`, `expires 2026-12-01 04:12 UTC`.
    public let facts: [String]

    /// An identity of `account` with `facts`.
    public init(account: String, facts: [String] = []) {
        self.account = account
        self.facts = facts
    }
}
