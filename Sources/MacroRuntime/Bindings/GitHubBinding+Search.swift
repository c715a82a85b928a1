import Clients
import Platform
import PythonBridge
import WebAPI

extension GitHubBinding {
    /// `github.search(kind, query, limit=None, sort=None, order=None)`: a lazy iterator over
    /// the `items` of GitHub's search, past the 1,000-result cap for issues and repositories
    /// (`GitHubSearch` decides what to ask for; each page goes through `PageState`).
    enum Search {
        static let doc = """
            search(kind, query, limit=None, sort=None, order=None) -> iterator of dicts

            GitHub's search (kind: issues, repositories, code, commits or users), every item of every page,
            fetched as they are used. GitHub gives at most 1,000 results per query: for issues and repositories
            apimacro splits a larger query by created: date ranges and yields every result once (slice by slice,
            oldest first; newest first for sort="created", order="desc"); other kinds stop at 1,000 with a
            warning, as does a search GitHub reports incomplete. The search rate limit (30 a minute) is waited on.
            """

        /// Adds `search` to the `github` class.
        static func install(on builder: NativeClass<GitHubBinding>) throws {
            try builder.method("search", doc: doc) { binding, arguments in
                let slots = try arguments.bind("search", ["kind", "query", "limit", "sort", "order"], required: 2)
                let kindName = try Arguments.string(slots[0], "kind", in: "search")
                guard let kind = GitHubSearch.Kind(rawValue: kindName) else {
                    throw APIError(
                        .invalidRequest,
                        "search() kind must be one of \(GitHubSearch.Kind.allCases.map(\.rawValue).joined(separator: ", ")), "
                            + "not \(kindName.debugDescription)")
                }
                let query = try Arguments.string(slots[1], "query", in: "search")
                guard !query.trimmingWhitespace().isEmpty else {
                    throw APIError(.invalidRequest, "search() needs a query, such as \"repo:owner/name is:open\"")
                }
                let sort = try optionalString(slots[3], "sort")
                let order = try optionalString(slots[4], "order")
                if let order, !["asc", "desc"].contains(order) {
                    throw APIError(
                        .invalidRequest, "search() order must be \"asc\" or \"desc\", not \(order.debugDescription)")
                }
                let limit = try Arguments.limit(slots[2], in: "search")
                let plan = GitHubSearch(
                    kind: kind, query: query, sort: sort, order: order, limit: limit,
                    now: Date().timeIntervalSince1970)
                let seen = SeenItems()
                let warn = binding.warn
                let state = PageState(
                    client: binding.client.api, first: plan.first(), pagination: .none, limit: limit,
                    decoder: binding.decoder,
                    page: { payload, _, sent in
                        let items = try payload.value(at: ["items"]) ?? PySequence.list([])
                        let count = PySequence.isList(items) ? PySequence.count(items) : 0
                        let decision = plan.after(
                            GitHubSearch.Page(
                                totalCount: integer(payload.value(at: ["total_count"])) ?? 0,
                                incompleteResults: isTrue(payload.value(at: ["incomplete_results"])),
                                itemCount: count,
                                firstCreatedAt: count > 0
                                    ? (try? PyRef.checked(PySequence.item(items, 0)))?.value(at: ["created_at"])
                                        .flatMap { try? $0.str() } : nil))
                        for warning in decision.warnings { warn(warning) }
                        var next = decision.next
                        next?.timeout = sent.timeout
                        let kept = decision.keepsItems ? try seen.new(in: items) : try PySequence.list([])
                        return PageState.Page(items: kept, next: next)
                    })
                return try binding.iterators.instance(state)
            }
        }

        /// A str argument, or nil for None or absent.
        static func optionalString(_ value: PyRef?, _ name: String) throws -> String? {
            guard let value, !value.isNone else { return nil }
            return try Arguments.string(value, name, in: "search")
        }

        /// Whether decoded JSON is `true`.
        static func isTrue(_ value: PyRef?) -> Bool {
            guard let value, case .bool(let flag)? = try? PythonValue(python: value) else { return false }
            return flag
        }

        /// An int in decoded JSON, if it is one.
        static func integer(_ value: PyRef?) -> Int? {
            guard let value, case .int(let number)? = try? PythonValue(python: value) else { return nil }
            return number
        }
    }

    /// The results a search has yielded, by `id` (or `sha`, `url`): a page read while results
    /// move between pages gives none twice.
    final class SeenItems {
        private var keys = Set<String>()

        /// The items of `list` not seen before, as a new list (GIL held).
        func new(in list: PyRef) throws -> PyRef {
            guard PySequence.isList(list) else { return list }
            var fresh: [PyRef] = []
            for index in 0..<PySequence.count(list) {
                let item = try PyRef.checked(PySequence.item(list, index))
                let key = ["id", "sha", "url"].lazy.compactMap { item.value(at: [$0]).flatMap { try? $0.str() } }.first
                if let key, !keys.insert(key).inserted { continue }
                fresh.append(item)
            }
            return try PySequence.list(fresh)
        }
    }
}
