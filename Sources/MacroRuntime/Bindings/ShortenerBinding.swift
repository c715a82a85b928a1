import Clients
import PythonBridge
import WebAPI

/// `apimacro.shortener`: one macro API over Bitly, Shlink or Google's legacy API (SPEC §3; the
/// backend's facts are `ShortenerBackend`'s).
///
/// `shorten` and `expand` answer with the same dict on every backend (`id`, `longUrl`,
/// `created_at`, `backend`, `raw`: `Presenter.link`), `links` is a lazy iterator of those, and
/// `clicks` an int. `shorten`, `expand` and `clicks` run natively in parallel under
/// `apimacro.map`, within the client's cap on requests in flight (Bitly: 5).
final class ShortenerBinding {
    let client: ShortenerClient
    let decoder: JSONDecoding
    let iterators: NativeClass<PageState>
    /// With no credential set: why the stored one could not be read, reported instead of
    /// sending the call without it.
    let storeProblem: APIError?

    init(client: ShortenerClient, decoder: JSONDecoding, iterators: NativeClass<PageState>, storeProblem: APIError?) {
        self.client = client
        self.decoder = decoder
        self.iterators = iterators
        self.storeProblem = storeProblem
    }

    /// A call's request, built with every check (no request is sent when one fails); a store
    /// that could not be read is the error rather than a call without its credential.
    func prepare<Built>(_ build: (ShortenerClient) throws -> Built) throws -> Built {
        do {
            let request = try build(client)
            if let storeProblem { throw storeProblem }
            return request
        } catch let error as APIError where error.kind == .auth {
            throw storeProblem ?? error
        }
    }

    /// Sends `request` (GIL released for the wait) and decodes the answer.
    func fetch(_ request: Request) throws -> (PyRef, Response) {
        let client = self.client
        let response = try client.api.sendFromPython(request)
        return (try decoder.decode(response, api: Shortener.name), response)
    }

    /// A lazy iterator over the account's links, each as `Presenter.link` makes it, following
    /// the backend's pages as it declares them (`ShortenerBackend.paging`, `LinksStart`).
    func links(limit: Int?) throws -> PyRef {
        let start = try prepare { try $0.linksStart(limit: limit) }
        let present = Presenter(backend: client.backend)
        let paging = client.paging
        let items = paging.items ?? []
        let read = PageState.bodyValue(of: paging.pagination)
        let page: (PyRef, Response, Request) throws -> PageState.Page = { payload, response, request in
            if let lookup = start.lookup, start.isLookup(request) {
                guard let found = Self.string(payload.value(at: lookup.path)), !found.isEmpty else {
                    throw Self.parseError(response, "did not name \(lookup.what)")
                }
                return PageState.Page(items: try PySequence.list([]), next: lookup.firstPage(found))
            }
            var found = payload.value(at: items)
            if paging.keyedItems {
                if let object = found, object.typeName == "dict" {
                    found = try Interpreter.import("builtins").attribute("list").call([object.callMethod("values", [])])
                } else if found == nil, payload.typeName == "dict" {
                    found = try PySequence.list([])
                }
            }
            let list = try Self.list(found, response, items.joined(separator: "."))
            let next = paging.pagination.next(
                after: response, request: request, itemCount: PySequence.count(list),
                bodyValue: .some(try read?(payload) ?? nil))
            return PageState.Page(items: try present.links(list, response), next: next)
        }
        return try iterators.instance(
            PageState(
                client: client.api, first: start.request, pagination: .none, limit: limit, decoder: decoder,
                page: page))
    }

    /// How a backend's answers become what a macro sees.
    struct Presenter: Sendable {
        let backend: ShortenerBackend

        /// The dict for one link answer: `id` (the full short URL), `longUrl`, `created_at` (or
        /// None), `backend` and `raw` (the answer as sent); the legacy Google shape keeps its
        /// own keys too (`kind`, `status`).
        ///
        /// An answer with no short URL is a `ParseError`.
        func link(_ raw: PyRef, _ response: Response) throws -> PyRef {
            let shape = backend.shape
            func text(_ paths: [[String]]) -> String? {
                ShortLinkShape.first(paths) { ShortenerBinding.string(raw.value(at: $0)) }
            }
            guard raw.typeName == "dict", let id = text(shape.id), !id.isEmpty else {
                // An answer marked as failed says why in the backend's error message.
                let failed = raw.typeName == "dict" ? shape.failure.flatMap { text([$0]) } : nil
                let why = failed.map { backend.service.errorMessage(response) ?? $0 }
                throw ShortenerBinding.parseError(
                    response,
                    "did not answer with a short link (no \(ShortLinkShape.describe(shape.id)))"
                        + (why.map { ": \($0)" } ?? ""))
            }
            let result =
                shape.keepsAnswerKeys
                ? try Interpreter.import("builtins").attribute("dict").call([raw])
                : try PythonValue.object([]).toPython()
            try result.setItem("id", PyRef(string: shape.shortURL(id)))
            try result.setItem("longUrl", text(shape.longURL).map { try PyRef(string: $0) } ?? .none)
            try result.setItem("created_at", text(shape.createdAt).map { try PyRef(string: $0) } ?? .none)
            try result.setItem("backend", PyRef(string: backend.rawValue))
            try result.setItem("raw", raw)
            return result
        }

        /// The dict for a fetched answer.
        func link(_ fetched: (PyRef, Response)) throws -> PyRef { try link(fetched.0, fetched.1) }

        /// The count of clicks in a fetched answer.
        func clicks(_ fetched: (PyRef, Response)) throws -> PyRef { try clicks(fetched.0, fetched.1) }

        /// Each item of a page of links, as `link` makes it.
        func links(_ items: PyRef, _ response: Response) throws -> PyRef {
            try PySequence.list(
                (0..<PySequence.count(items)).map { try link(PyRef.checked(PySequence.item(items, $0)), response) })
        }

        /// The total of clicks in a `clicks` answer, as an int (Google sent it as a string of digits).
        func clicks(_ raw: PyRef, _ response: Response) throws -> PyRef {
            let shape = backend.shape
            let found = ShortLinkShape.first(shape.clicks) { raw.value(at: $0) }
            guard let total = found.flatMap(ShortenerBinding.int), total >= 0 else {
                throw ShortenerBinding.parseError(
                    response, "did not answer with a count of clicks at \(ShortLinkShape.describe(shape.clicks))")
            }
            return try PythonValue.int(total).toPython()
        }
    }

    /// The text of a Python `str`, else nil.
    static func string(_ value: PyRef?) -> String? {
        guard let value, case .string(let text)? = try? PythonValue(python: value) else { return nil }
        return text
    }

    /// A whole number from an `int`, or a `str` of digits; else nil (a bool is no count).
    static func int(_ value: PyRef) -> Int? {
        guard value.typeName != "bool" else { return nil }
        switch try? PythonValue(python: value) {
        case .int(let number)?: return number
        case .string(let text)?: return Int(text)
        default: return nil
        }
    }

    /// The list at a page's `path`, else a `ParseError` naming it.
    static func list(_ value: PyRef?, _ response: Response, _ path: String) throws -> PyRef {
        guard let value, PySequence.isList(value) else {
            throw parseError(response, "did not answer with a list at \(path)")
        }
        return value
    }

    /// A `ParseError` about `response`'s answer.
    static func parseError(_ response: Response, _ what: String) -> APIError {
        APIError(
            .parse, "\(response.url) \(what)", status: response.status, url: response.url, api: Shortener.name,
            body: response.text)
    }

    /// Builds the `shortener` object and registers its natively parallel methods with `map`.
    static func install(_ context: BuiltInClient.Context) throws {
        let runtime = context.runtime
        func makeBinding(view: SettingsView, storeProblem: APIError?) -> ShortenerBinding {
            let client = Shortener.client(in: view, on: runtime.clientContext())
            return ShortenerBinding(
                client: client, decoder: context.decoder, iterators: context.iterators,
                storeProblem: client.api.credential == nil ? storeProblem : nil)
        }
        let binding = makeBinding(view: runtime.view(of: Shortener.descriptor), storeProblem: runtime.credentialProblem)
        let client = binding.client
        let present = Presenter(backend: client.backend)
        let builder = NativeClass<ShortenerBinding>(
            name: "Shortener", module: "apimacro",
            doc: "A URL shortener: " + ShortenerBackend.allCases.map(Self.summary).joined(separator: "; ") + ".")
        CacheKeyword.install(on: builder)
        let shorten = try builder.method(
            "shorten",
            doc: """
                shorten(long_url, *, domain=None, slug=None, tags=None) -> dict

                The short link for long_url (the existing one when the account has it): id (the short URL),
                longUrl, created_at, backend and raw (the answer as sent). slug is a custom back-half
                (Bitly's keyword, Shlink's customSlug); tags a list of str.
                """
        ) { binding, arguments in
            try present.link(binding.fetch(binding.prepare { try shortenRequest($0, arguments) }))
        }
        let expand = try builder.method(
            "expand",
            doc: "expand(short_url) -> dict\n\nThe link behind short_url: id, longUrl, created_at, backend, raw."
        ) { binding, arguments in
            try present.link(binding.fetch(binding.prepare { try expandRequest($0, arguments) }))
        }
        let clicks = try builder.method(
            "clicks", doc: "clicks(short_url) -> int\n\nEvery click on short_url, all time."
        ) { binding, arguments in
            try present.clicks(binding.fetch(binding.prepare { try clicksRequest($0, arguments) }))
        }
        try builder.method(
            "links",
            doc: "links(limit=None) -> iterator of dicts\n\nThe account's links, every page, in the service's order."
        ) { binding, arguments in
            let slots = try arguments.bind("links", ["limit"])
            return try binding.links(limit: Arguments.limit(slots[0], in: "links"))
        }
        try AccountBinding.install(on: builder, client: "shortener") { label in
            let (view, _) = try runtime.view(of: Shortener.descriptor, account: label)
            return makeBinding(view: view, storeProblem: nil)
        }
        try builder.property(
            "backend",
            doc: "The service in use: " + ShortenerBackend.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                + "."
        ) {
            try PyRef(string: $0.client.backend.rawValue)
        }
        try builder.property(
            "rate_limit",
            doc:
                "Bitly's limits (read once a run): plan_limits and platform_limits as Bitly sends them, with "
                + "this run's requests counted, api_requests (the month's API quota, or None), organization_guid "
                + "and notes (why a lookup failed). None with the other backends."
        ) { binding in
            guard let limits = binding.client.limits else { return .none }
            return try Self.rateLimit(withoutGIL { await limits.snapshot() }, reset: BitlyLimits.monthlyReset())
        }
        try builder.method("__repr__") { binding, _ in
            let client = binding.client
            let base =
                client.configuration.baseURL.isEmpty
                ? "no URL" : client.api.redactor.redactURL(client.configuration.baseURL)
            let credential = client.api.credential == nil ? "no credential" : "credential set"
            return try PyRef(string: "<apimacro.shortener \(client.backend.rawValue) \(base) (\(credential))>")
        }
        try builder.build()
        try context.module.set("shortener", builder.instance(binding))
        // `map` builds each call with the same builders as the direct calls, and presents its answer alike.
        let calls:
            [(PyRef, (ShortenerClient, PyArguments) throws -> Request, @Sendable (PyRef, Response) throws -> PyRef)] = [
                (shorten, shortenRequest, present.link), (expand, expandRequest, present.link),
                (clicks, clicksRequest, present.clicks),
            ]
        for (function, build, presentation) in calls {
            context.parallel.register(function) { receiver, arguments in
                let binding = receiver.flatMap { try? builder.state(of: $0) } ?? binding
                let client = binding.client
                let request = try binding.prepare { try build($0, arguments) }
                return ParallelCall(api: Shortener.name, run: { try await client.send(request) }, present: presentation)
            }
        }
    }

    /// `shortener.rate_limit`'s dict for `snapshot`: Bitly's own shapes (`plan_limits`,
    /// `platform_limits`; None when unknown), the month's API quota as `api_requests` (`name`,
    /// `count`, `limit`, `remaining`, `reset`: the first of next month, epoch seconds; None when
    /// the plan names none), `organization_guid` and `notes`.
    static func rateLimit(_ snapshot: BitlyLimits.Snapshot, reset: Int) throws -> PyRef {
        let plan = snapshot.plan.map { entries in
            PythonValue.list(
                entries.map { entry in
                    .object([
                        ("name", .string(entry.name)), ("description", entry.description.map { .string($0) } ?? .none),
                        ("count", .int(entry.count)), ("limit", .int(entry.limit)),
                    ])
                })
        }
        let platform = snapshot.platform.map { endpoints in
            PythonValue.list(
                endpoints.map { endpoint in
                    .object([
                        ("endpoint", .string(endpoint.endpoint)),
                        (
                            "methods",
                            .list(
                                endpoint.methods.map {
                                    .object([
                                        ("name", .string($0.name)), ("count", .int($0.count)),
                                        ("limit", .int($0.limit)),
                                    ])
                                })
                        ),
                    ])
                })
        }
        let quota = snapshot.apiRequests.flatMap { snapshot.plan?[$0] }.map { entry in
            PythonValue.object([
                ("name", .string(entry.name)), ("count", .int(entry.count)), ("limit", .int(entry.limit)),
                ("remaining", .int(max(0, entry.limit - entry.count))),
                ("reset", .int(reset)),
            ])
        }
        return try PythonValue.object([
            ("plan_limits", plan ?? .none), ("platform_limits", platform ?? .none), ("api_requests", quota ?? .none),
            ("organization_guid", snapshot.organization.map { .string($0) } ?? .none),
            ("notes", .list(snapshot.notes.map { .string($0) })),
        ]).toPython()
    }

    /// How the class's docstring names `backend`: its title, how it is chosen, its settings.
    static func summary(_ backend: ShortenerBackend) -> String {
        let chosen =
            backend == .standard ? "the default" : "\(Shortener.backend.variable)=\(backend.rawValue)"
        let url = backend.defaultBaseURL == nil ? "\(Shortener.url.variable), " : ""
        return "\(backend.title) (\(chosen); \(url)\(backend.credentialSetting.variable))"
    }

    /// `shorten(long_url, *, domain=None, slug=None, tags=None)`'s request.
    static func shortenRequest(_ client: ShortenerClient, _ arguments: PyArguments) throws -> Request {
        let slots = try arguments.bind(
            "shorten", ["long_url", "domain", "slug", "tags"], required: 1, positionalLimit: 1)
        return try client.shortenRequest(
            Arguments.string(slots[0], "long_url", in: "shorten"),
            domain: optionalString(slots[1], "domain", in: "shorten"),
            slug: optionalString(slots[2], "slug", in: "shorten"),
            tags: strings(slots[3], "tags", in: "shorten"))
    }

    /// `expand(short_url)`'s request.
    static func expandRequest(_ client: ShortenerClient, _ arguments: PyArguments) throws -> Request {
        let slots = try arguments.bind("expand", ["short_url"], required: 1)
        return try client.expandRequest(Arguments.string(slots[0], "short_url", in: "expand"))
    }

    /// `clicks(short_url)`'s request.
    static func clicksRequest(_ client: ShortenerClient, _ arguments: PyArguments) throws -> Request {
        let slots = try arguments.bind("clicks", ["short_url"], required: 1)
        return try client.clicksRequest(Arguments.string(slots[0], "short_url", in: "clicks"))
    }

    /// A `str` or None (nil); an empty string is refused, as no service takes one.
    static func optionalString(_ value: PyRef?, _ name: String, in function: String) throws -> String? {
        guard let value, !value.isNone else { return nil }
        let text = try Arguments.string(value, name, in: function)
        guard !text.isEmpty else {
            throw ArgumentError("\(function)() argument '\(name)' must not be empty", raising: .valueError)
        }
        return text
    }

    /// A list (or tuple) of `str`, or None (empty); a lone `str` is refused rather than split
    /// into letters.
    static func strings(_ value: PyRef?, _ name: String, in function: String) throws -> [String] {
        guard let value, !value.isNone else { return [] }
        switch try PythonValue(python: value) {
        case .list(let items), .tuple(let items):
            return try items.map { item in
                guard case .string(let text) = item, !text.isEmpty else {
                    throw ArgumentError("\(function)() argument '\(name)' must be a list of non-empty str")
                }
                return text
            }
        default:
            throw ArgumentError("\(function)() argument '\(name)' must be a list of str, not \(value.typeName)")
        }
    }
}
