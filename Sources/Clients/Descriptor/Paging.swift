public import WebAPI

/// How a client's lists come in pages: what `api --paginate` and a binding's iterators follow.
///
/// A client declares it next to its router (`GitHubClient.paging`, `InstagramGraphRouter.paging`,
/// `ShortenerBackend.paging`); a binding reads it and never restates a path or a rule.
public struct Paging: Sendable {
    /// How a page links the next one, and when the list ends.
    public var pagination: Pagination
    /// Where a page that is an object keeps its items (Graph's `data`); nil when a page is the list.
    public var items: [String]?
    /// Whether the value at `items` is an object whose members, in order, are the items
    /// (`link_1`, `link_2`, …) rather than a list; such an object may be left out of a page
    /// (an object) that has none.
    public var keyedItems = false
    /// The query parameter and value that ask for the largest page (GitHub's `per_page=100`),
    /// added by `--paginate` unless the request names that parameter itself.
    public var pageSize: (name: String, value: String)?
    /// A next page's link as the client follows it (the Graph API's without the token it
    /// carries: the pipeline adds the client's own, on its host only).
    public var followLink: @Sendable (String) -> String

    /// Pages linked by `pagination`, their items at `items`.
    public init(
        _ pagination: Pagination, items: [String]? = nil, keyedItems: Bool = false,
        pageSize: (name: String, value: String)? = nil, followLink: @escaping @Sendable (String) -> String = { $0 }
    ) {
        self.pagination = pagination
        self.items = items
        self.keyedItems = keyedItems
        self.pageSize = pageSize
        self.followLink = followLink
    }

    /// No pages: an answer is the whole of what it holds.
    public static let none = Paging(.none)
}

/// A built-in client as it was built by its factory: its connection to the pipeline, how its
/// lists come in pages, and what must happen before its first request.
public protocol BuiltClient: Sendable {
    /// The connection to the pipeline (base URL, credential, rate limits).
    var api: APIClient { get }
    /// How its lists link their pages and where a page keeps its items.
    var paging: Paging { get }
    /// Gets the credential ready before the first request (Instagram's stored token checked,
    /// and refreshed when due); nothing for most clients.
    func prepare() async throws
}

extension BuiltClient {
    /// Nothing to get ready.
    public func prepare() async throws {}
}
