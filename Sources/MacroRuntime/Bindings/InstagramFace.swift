import Clients
import Platform
import PythonBridge
import WebAPI

/// What both faces of `apimacro.instagram` take the same arguments for.
///
/// The Graph API's `InstagramBinding.Graph` and the legacy v1 API's `InstagramBinding` each
/// log in within a macro, say whether a token is set, send one request and page through one,
/// each its own way; the methods' Python side, `get` and `paginate`, the `cache=` keyword,
/// `as_account` and `__repr__` are written once (`faceClass`, `finish`); what both keep is
/// `InstagramFaceBase`.
protocol InstagramFace: AnyObject {
    /// The backend's router, whose `get` is `get(path, params=None)`'s request.
    associatedtype Route: InstagramRoute
    /// Whether a token is set.
    var loggedIn: Bool { get }
    /// The base URL as `__repr__` shows it (redacted).
    var shownURL: String { get }
    /// Where tokens are stored, and where `apimacro login instagram` leaves a login pending.
    var store: CredentialStore { get }
    /// The login an `authorize_url()` started in this session (its state expires after 15 minutes).
    var pending: OAuthImplicitFlow.PendingLogin? { get set }
    /// The browser step of this backend's login; `AuthError` when its app is not set.
    func loginFlow() throws -> OAuthImplicitFlow
    /// `complete_login(redirect_url)`: the token from the redirect, stored and used from now on.
    func completeLogin(redirect: String) throws
    /// One request's decoded answer (GIL held; sends without it).
    func fetch(_ route: Route) throws -> PyRef
    /// A lazy iterator over the items of every page of `route`.
    func iterate(_ route: Route, limit: Int?) throws -> PyRef
}

/// What both faces of `apimacro.instagram` keep: their client, and the same parts besides.
class InstagramFaceBase<Client> {
    let client: Client
    let runtime: Runtime
    let decoder: JSONDecoding
    let iterators: NativeClass<PageState>
    let store: CredentialStore
    /// A stored-token problem (say, a file others can read) reported when a call needs the token.
    let storeProblem: APIError?
    var pending: OAuthImplicitFlow.PendingLogin?

    /// The face of `client` for the default account (the runtime's store, and its problem), or
    /// for the account whose store is `account`.
    init(client: Client, _ context: BuiltInClient.Context, account: CredentialStore? = nil) {
        self.client = client
        runtime = context.runtime
        decoder = context.decoder
        iterators = context.iterators
        store = account ?? context.runtime.credentials
        storeProblem = account == nil ? context.runtime.credentialProblem : nil
    }

    /// A lazy iterator over the items of every page from `first` (at most `limit`).
    func pages(_ api: APIClient, from first: Request, paging: Paging, limit: Int?) throws -> PyRef {
        try iterators.instance(PageState(client: api, first: first, paging: paging, limit: limit, decoder: decoder))
    }
}

/// A route of both backends' routers: one GET relative to the base URL.
protocol InstagramRoute {
    static func get(path: String, parameters: [(String, String)]) -> Self
}

extension InstagramRouter: InstagramRoute {}
extension InstagramGraphRouter: InstagramRoute {}

/// The docstrings of `InstagramFace`'s methods: what each backend does.
struct InstagramFaceDocs {
    let authorizeURL: String
    let completeLogin: String
    let get: String
    let paginate: String
}

extension InstagramFace {
    /// `authorize_url(state=None)`: the URL to open; its state is kept for `complete_login`.
    func authorizeURL(state: String?) throws -> String {
        let flow = try loginFlow()
        let state = state ?? OAuthImplicitFlow.newState()
        pending = OAuthImplicitFlow.PendingLogin(state: state, created: Date())
        return flow.authorizationURL(state: state)
    }

    /// The state `complete_login` expects at `time`: this session's `authorize_url()`'s, else
    /// the one `apimacro login instagram` saved; nil when neither is pending (the flow then
    /// refuses the redirect).
    func expectedState(of flow: OAuthImplicitFlow, at time: Date) throws -> String? {
        try pending?.state(at: time) ?? flow.takePendingState(for: Instagram.name, in: store.home, now: time)
    }

    /// `get(path, params=None)`.
    func get(path: String, parameters: [(String, String)]) throws -> PyRef {
        try fetch(.get(path: path, parameters: parameters))
    }

    /// `paginate(path, params=None, limit=None)`.
    func paginate(path: String, parameters: [(String, String)], limit: Int?) throws -> PyRef {
        try iterate(.get(path: path, parameters: parameters), limit: limit)
    }

    /// The class of `apimacro.instagram` on this backend, its methods for both backends added.
    ///
    /// Documented as `doc`, with the `cache=` keyword, the methods both backends share (`docs`)
    /// and `as_account`, whose face `account` builds from a stored account's label; `finish`
    /// completes it.
    static func faceClass(
        doc: String, docs: InstagramFaceDocs, account: @escaping (String) throws -> Self
    ) throws -> NativeClass<Self> {
        let builder = NativeClass<Self>(name: "Instagram", module: "apimacro", doc: doc)
        CacheKeyword.install(on: builder)
        try installShared(on: builder, docs: docs)
        try AccountBinding.install(on: builder, client: Instagram.name, make: account)
        return builder
    }

    /// Adds `__repr__` to `builder`, builds it and sets `apimacro.instagram` to `binding`.
    static func finish(_ builder: NativeClass<Self>, binding: Self, in context: BuiltInClient.Context) throws {
        try builder.method("__repr__") { binding, _ in
            try PyRef(
                string:
                    "<apimacro.instagram \(binding.shownURL) (\(binding.loggedIn ? "logged in" : "not logged in"))>")
        }
        try builder.build()
        try context.module.set("instagram", builder.instance(binding))
    }

    /// Adds `authorize_url`, `complete_login`, `logged_in`, `get` and `paginate` to `builder`.
    private static func installShared(on builder: NativeClass<Self>, docs: InstagramFaceDocs) throws {
        try builder.method("authorize_url", doc: "authorize_url(state=None) -> str\n\n" + docs.authorizeURL) {
            binding, arguments in
            let slots = try arguments.bind("authorize_url", ["state"])
            let state = try Arguments.optionalString(slots[0], "state", in: "authorize_url")
            return try PyRef(string: binding.authorizeURL(state: state))
        }
        try builder.method("complete_login", doc: "complete_login(redirect_url)\n\n" + docs.completeLogin) {
            binding, arguments in
            let slots = try arguments.bind("complete_login", ["redirect_url"], required: 1)
            try binding.completeLogin(redirect: Arguments.string(slots[0], "redirect_url", in: "complete_login"))
            return .none
        }
        try builder.property("logged_in", doc: "Whether a token is set.") { .bool($0.loggedIn) }
        try builder.method("get", doc: "get(path, params=None) -> " + docs.get) { binding, arguments in
            let call = try Arguments.pathCall(arguments, "get")
            return try binding.get(path: call.path, parameters: call.parameters)
        }
        try builder.method(
            "paginate", doc: "paginate(path, params=None, limit=None) -> iterator\n\n" + docs.paginate
        ) { binding, arguments in
            let call = try Arguments.pathCall(arguments, "paginate", limited: true)
            return try binding.paginate(path: call.path, parameters: call.parameters, limit: call.limit)
        }
    }
}
