import Clients
import PythonBridge

/// What both faces of `apimacro.instagram` take the same arguments for.
///
/// The Graph API's `InstagramBinding.Graph` and the legacy v1 API's `InstagramBinding` each
/// log in within a macro, say whether a token is set, send one GET and page through one,
/// each its own way; the methods' Python side is written once (`installShared`).
protocol InstagramFace: AnyObject {
    /// Whether a token is set.
    var loggedIn: Bool { get }
    /// `authorize_url(state=None)`: the URL to open; its state is kept for `complete_login`.
    func authorizeURL(state: String?) throws -> String
    /// `complete_login(redirect_url)`: the token from the redirect, stored and used from now on.
    func completeLogin(redirect: String) throws
    /// `get(path, params=None)`.
    func get(path: String, parameters: [(String, String)]) throws -> PyRef
    /// `paginate(path, params=None, limit=None)`.
    func paginate(path: String, parameters: [(String, String)], limit: Int?) throws -> PyRef
}

/// The docstrings of `InstagramFace`'s methods: what each backend does.
struct InstagramFaceDocs {
    let authorizeURL: String
    let completeLogin: String
    let get: String
    let paginate: String
}

extension InstagramFace {
    /// Adds `authorize_url`, `complete_login`, `logged_in`, `get` and `paginate` to `builder`.
    static func installShared(on builder: NativeClass<Self>, docs: InstagramFaceDocs) throws {
        try builder.method("authorize_url", doc: "authorize_url(state=None) -> str\n\n" + docs.authorizeURL) {
            binding, arguments in
            let slots = try arguments.bind("authorize_url", ["state"])
            let state = try slots[0].flatMap {
                $0.isNone ? nil : try Arguments.string($0, "state", in: "authorize_url")
            }
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
