public import WebAPI

/// The first request of `shortener.links()`: the first page, or a lookup whose answer names
/// what the first page needs (Bitly's `GET /user`, for the account's default group).
public struct LinksStart: Sendable {
    /// What a lookup's answer must name, and the first page it makes.
    public struct Lookup: Sendable {
        /// Where the answer names it.
        public let path: [String]
        /// What it is, for the error when the answer does not name it.
        public let what: String
        /// The first page, for the value found.
        public let firstPage: @Sendable (String) -> Request
    }

    /// The request to send first.
    public let request: Request
    /// Nil when `request` is the first page.
    public let lookup: Lookup?

    /// A listing that starts with its first page.
    public init(_ firstPage: Request) {
        request = firstPage
        lookup = nil
    }

    /// A listing that starts with `request`, whose answer names at `path` what `firstPage` needs.
    public init(
        _ request: Request, lookingUp path: [String], what: String,
        firstPage: @escaping @Sendable (String) -> Request
    ) {
        self.request = request
        lookup = Lookup(path: path, what: what, firstPage: firstPage)
    }

    /// Whether `sent` is this start's lookup (not a page).
    public func isLookup(_ sent: Request) -> Bool {
        lookup != nil && sent.method == request.method && sent.target == request.target
    }
}
