import Clients
import Platform
import PluginHost
import WebAPI

/// What `apimacro api` sends a request through for one client: the client's pipeline (its base
/// URL, credentials, cache, retries and rate limits), how its lists link their pages, and where
/// a page that is an object keeps its items (`--paginate`).
struct ApiTarget: Sendable {
    /// The client's name (`github`, a plugin's).
    let name: String
    /// The client's connection to the pipeline.
    let client: APIClient
    /// How a list answer links its next page.
    let pagination: Pagination
    /// The path of the items in a page that is an object, for the requested path (a plugin's
    /// endpoint's `result`, Instagram v1's `data`); nil or empty when a page is the list.
    let items: @Sendable (String) -> [String]?
    /// The query parameter and value that ask for the largest page (GitHub's `per_page=100`),
    /// added by `--paginate` unless the request names that parameter itself.
    var pageSize: (name: String, value: String)?
    /// What must happen before the first request (Instagram's stored token checked, and
    /// refreshed when due); nothing for most clients.
    var prepare: @Sendable () async throws -> Void = {}
    /// A next page's link as the client follows it (the Graph API's without the token it
    /// carries: the pipeline adds the client's own, on its host only).
    var followLink: @Sendable (String) -> String = { $0 }

    /// A target whose pages are lists or keep their items at `items` for every path.
    init(
        name: String, client: APIClient, pagination: Pagination, items: [String]? = nil,
        pageSize: (name: String, value: String)? = nil
    ) {
        self.init(name: name, client: client, pagination: pagination, items: { _ in items })
        self.pageSize = pageSize
    }

    /// A built-in client as its factory built it: its pages as it declares them (`Paging`), and
    /// what it gets ready before the first request.
    init(name: String, built: any BuiltClient) {
        let paging = built.paging
        self.init(
            name: name, client: built.api, pagination: paging.pagination, items: paging.items,
            pageSize: paging.pageSize)
        prepare = { try await built.prepare() }
        followLink = paging.followLink
    }

    /// A target whose items path depends on the requested path.
    init(name: String, client: APIClient, pagination: Pagination, items: @escaping @Sendable (String) -> [String]?) {
        self.name = name
        self.client = client
        self.pagination = pagination
        self.items = items
    }

    /// Any http(s) URL, with no base URL and no credential (`apimacro.request`'s client); it
    /// follows `Link: rel="next"` headers.
    static func plain(_ runtime: Runtime) -> ApiTarget {
        var configuration = ClientConfiguration(
            name: "http", baseURL: "", timeout: runtime.settings.requestTimeout, maxWait: runtime.settings.maxWait)
        configuration.remembersRateLimit = false
        let client = APIClient(
            configuration: configuration, transport: runtime.transport, log: runtime.log, redactor: runtime.redactor)
        return ApiTarget(name: "http", client: client, pagination: .linkHeader)
    }

    /// A plugin's client: its manifest's pagination, and the items at the `result` of the
    /// endpoint whose path template matches the requested path.
    static func plugin(_ plugin: PluginClient) -> ApiTarget {
        let manifest = plugin.manifest
        var target = ApiTarget(name: manifest.name, client: plugin.api, pagination: manifest.pagination) { path in
            manifest.endpoints.first { matches($0.path, path) }?.result
        }
        // An offset pagination with a page size sends it with the first page, as a macro's call does.
        if case .offset(_, let limitParameter?, let size?, _) = manifest.pagination {
            target.pageSize = (limitParameter, String(size))
        }
        return target
    }

    /// Whether `path` (its query and a trailing `/` aside) is an instance of `template`, whose
    /// `{name}` segments match any one segment.
    static func matches(_ template: String, _ path: String) -> Bool {
        func segments(_ text: String) -> [Substring] {
            let plain = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return plain.split(separator: "/")
        }
        let wanted = segments(template)
        let given = segments(path)
        guard wanted.count == given.count else { return false }
        return zip(wanted, given).allSatisfy { pattern, segment in
            (pattern.hasPrefix("{") && pattern.hasSuffix("}")) || pattern == segment
        }
    }
}
