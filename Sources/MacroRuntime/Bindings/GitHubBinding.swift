import Clients
import PythonBridge
import WebAPI

/// `apimacro.github`: SPEC §3's GitHub API, as methods of one object.
final class GitHubBinding {
    let client: GitHubClient
    let decoder: JSONDecoding
    let iterators: NativeClass<PageState>
    /// Prints a warning line on stderr.
    let warn: @Sendable (String) -> Void

    init(
        client: GitHubClient, decoder: JSONDecoding, iterators: NativeClass<PageState>,
        warn: @escaping @Sendable (String) -> Void
    ) {
        self.client = client
        self.decoder = decoder
        self.iterators = iterators
        self.warn = warn
    }

    /// One request, decoded (GIL held; the wait releases it); None for an empty body (a
    /// write's 204 No Content).
    func fetch(_ route: GitHubRouter) throws -> PyRef {
        let response = try client.api.sendFromPython(route.request)
        if response.body.isEmpty, route.request.method != "GET" { return .none }
        return try decoder.decode(response, api: "github")
    }

    /// A lazy iterator over every page of a list endpoint.
    func iterate(_ route: GitHubRouter, limit: Int?) throws -> PyRef {
        try iterators.instance(
            PageState(
                client: client.api, first: route.firstPage(limit: limit), pagination: client.paging.pagination,
                limit: limit, decoder: decoder))
    }

    /// A `datetime.datetime` in UTC for epoch seconds (GIL held).
    static func datetime(_ epoch: Double) throws -> PyRef {
        let module = try Interpreter.import("datetime")
        let utc = try module.attribute("timezone").attribute("utc")
        return try module.attribute("datetime").callMethod(
            "fromtimestamp", [try PythonValue.float(epoch).toPython(), utc])
    }

    /// `github.app`: which App and installation, or None without one (GIL held).
    func app() throws -> PyRef {
        guard let auth = client.appAuth else { return .none }
        let known = auth.known
        let installation = known.installationID ?? auth.app.installationID
        let dict = try PythonValue.object([
            ("app_id", auth.app.appID.map { .string($0) } ?? .none),
            ("installation_id", installation.map { .int($0) } ?? .none),
            ("account", known.account.map { .string($0) } ?? .none),
        ]).toPython()
        // Spelled out: `try known.expiresAt.map(Self.datetime) ?? .none` crashes Swift 6.3.1's
        // optimizer (CopyPropagation's ownership check) in release builds.
        let expires: PyRef
        if let epoch = known.expiresAt {
            expires = try Self.datetime(epoch)
        } else {
            expires = .none
        }
        try dict.setItem("token_expires_at", expires)
        return dict
    }

    /// `github.rate_limit`: a dict as last seen, or None.
    func rateLimit() throws -> PyRef {
        guard let info = client.rateLimit else { return .none }
        func number(_ value: Int?) -> PythonValue { value.map { .int($0) } ?? .none }
        return try PythonValue.object([
            ("limit", number(info.limit)), ("remaining", number(info.remaining)), ("reset", number(info.reset)),
            ("used", number(info.used)), ("resource", info.resource.map { .string($0) } ?? .none),
        ]).toPython()
    }

    /// Builds the `github` object and registers its natively parallel methods with `map`.
    static func install(_ context: BuiltInClient.Context) throws {
        let runtime = context.runtime
        let module = context.module
        func makeBinding(view: SettingsView, store: CredentialStore) -> GitHubBinding {
            let client = GitHub.client(in: view, on: runtime.clientContext(store: store))
            return GitHubBinding(
                client: client, decoder: context.decoder, iterators: context.iterators, warn: runtime.transport.warn)
        }
        let binding = makeBinding(view: runtime.view(of: GitHub.descriptor), store: runtime.credentials)
        let client = binding.client
        let builder = NativeClass<GitHubBinding>(
            name: "GitHub", module: "apimacro",
            doc:
                "The GitHub REST API (base URL from \(GitHub.url.variable); token from \(GitHub.token.variable) or "
                + "\(GitHub.sharedToken))."
        )
        CacheKeyword.install(on: builder)
        let user = try builder.method("user", doc: "user(login) -> dict\n\nGET users/{login}.") { binding, arguments in
            try binding.fetch(userRoute(arguments))
        }
        try builder.method(
            "repos",
            doc: "repos(login, limit=None, **params) -> iterator of dicts\n\nGET users/{login}/repos, every page."
        ) { binding, arguments in
            let known = PyArguments(
                positional: arguments.positional,
                keywords: arguments.keywords.filter { ["login", "limit"].contains($0.0) })
            let slots = try known.bind("repos", ["login", "limit"], required: 1)
            let parameters = try Arguments.pairs(
                keywords: arguments.keywords.filter { !["login", "limit"].contains($0.0) }, in: "repos")
            return try binding.iterate(
                .repos(login: Arguments.string(slots[0], "login", in: "repos"), parameters: parameters),
                limit: Arguments.limit(slots[1], in: "repos"))
        }
        for (name, path) in [("followers", "followers"), ("following", "following")] {
            try builder.method(
                name, doc: "\(name)(login, limit=None) -> iterator of dicts\n\nGET users/{login}/\(path), every page."
            ) { binding, arguments in
                let slots = try arguments.bind(name, ["login", "limit"], required: 1)
                let login = try Arguments.string(slots[0], "login", in: name)
                return try binding.iterate(
                    name == "followers" ? .followers(login: login) : .following(login: login),
                    limit: Arguments.limit(slots[1], in: name))
            }
        }
        let get = try builder.method(
            "get", doc: "get(path, params=None, headers=None) -> decoded JSON\n\nOne GET relative to the base URL."
        ) { binding, arguments in
            try binding.fetch(getRoute(arguments))
        }
        var writes: [(PyRef, (PyArguments) throws -> GitHubRouter)] = []
        for method in GitHubRouter.writeMethods {
            let name = method.lowercased()
            let route: (PyArguments) throws -> GitHubRouter = { try writeRoute(method, $0) }
            let function = try builder.method(
                name,
                doc: """
                    \(name)(path, json=None, params=None, headers=None) -> decoded JSON, or None for an empty answer

                    One \(method) relative to the base URL with the client's token (json: sent as the JSON body).
                    Never sent twice once its body may have left; a 422 raises HTTPError whose .errors lists
                    what GitHub found wrong.
                    """
            ) { binding, arguments in
                try binding.fetch(route(arguments))
            }
            writes.append((function, route))
        }
        try builder.method(
            "paginate",
            doc: "paginate(path, params=None, limit=None) -> iterator\n\nEvery item of every page of a list endpoint."
        ) { binding, arguments in
            let call = try Arguments.pathCall(arguments, "paginate", limited: true)
            return try binding.iterate(.paginate(path: call.path, parameters: call.parameters), limit: call.limit)
        }
        try AccountBinding.install(on: builder, client: "github") { label in
            let (view, store) = try runtime.view(of: GitHub.descriptor, account: label)
            return makeBinding(view: view, store: store)
        }
        try GraphQL.install(on: builder, module: module)
        try Search.install(on: builder)
        try builder.property("rate_limit", doc: "The rate limit as last seen in response headers, or None.") {
            try $0.rateLimit()
        }
        try builder.property(
            "token_expires_at",
            doc:
                "When the token expires (a datetime in UTC), as GitHub's last answer said "
                + "(GitHub-Authentication-Token-Expiration); None before one did, or for a token that never expires."
        ) { binding in
            guard let epoch = binding.client.tokenExpiresAt else { return .none }
            return try datetime(epoch)
        }
        try builder.property(
            "app",
            doc:
                "The GitHub App in use (\(GitHub.appID.variable) and \(GitHub.appKey.variable)), or None: a dict of app_id, "
                + "installation_id and account (None until the first request finds them) and token_expires_at."
        ) { binding in
            try binding.app()
        }
        try builder.method("__repr__") { binding, _ in
            let token = binding.client.hasToken ? "token set" : "no token"
            return try PyRef(
                string:
                    "<apimacro.github \(binding.client.api.redactor.redactURL(binding.client.configuration.baseURL)) (\(token))>"
            )
        }
        try builder.build()
        try module.set("github", builder.instance(binding))
        // `map` builds each request with the same route builders as the direct calls.
        for (function, route) in [(user, userRoute), (get, getRoute)] + writes {
            context.parallel.register(function) { receiver, arguments in
                let client = receiver.flatMap { try? builder.state(of: $0).client } ?? client
                let built = try route(arguments)
                return ParallelCall(api: "github", emptyIsNone: built.request.method != "GET") {
                    try await client.send(built)
                }
            }
        }
    }

    /// `user(login)`'s request.
    static func userRoute(_ arguments: PyArguments) throws -> GitHubRouter {
        let slots = try arguments.bind("user", ["login"], required: 1)
        return .user(login: try Arguments.string(slots[0], "login", in: "user"))
    }

    /// `post(path, json=None, params=None, headers=None)`'s request (and put's, patch's, delete's).
    static func writeRoute(_ method: String, _ arguments: PyArguments) throws -> GitHubRouter {
        let name = method.lowercased()
        let slots = try arguments.bind(name, ["path", "json", "params", "headers"], required: 1)
        var body = Request.Body.none
        if let json = slots[1], !json.isNone {
            let dumps = try Interpreter.import("json").attribute("dumps")
            body = .json(
                Array(try String(pythonString: dumps.call([json], kwargs: [("ensure_ascii", .bool(false))])).utf8))
        }
        return .write(
            method: method, path: try Arguments.string(slots[0], "path", in: name),
            parameters: try Arguments.pairs(slots[2], "params", in: name),
            headers: try Arguments.pairs(slots[3], "headers", in: name), body: body)
    }

    /// `get(path, params=None, headers=None)`'s request.
    static func getRoute(_ arguments: PyArguments) throws -> GitHubRouter {
        let slots = try arguments.bind("get", ["path", "params", "headers"], required: 1)
        return .get(
            path: try Arguments.string(slots[0], "path", in: "get"),
            parameters: try Arguments.pairs(slots[1], "params", in: "get"),
            headers: try Arguments.pairs(slots[2], "headers", in: "get"))
    }
}
