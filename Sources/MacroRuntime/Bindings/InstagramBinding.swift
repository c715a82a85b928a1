import Clients
import Platform
import PythonBridge
import WebAPI

/// `apimacro.instagram` on the legacy v1 API of SPEC §3 and its OAuth implicit login (a base URL
/// ending in `/v1`); `InstagramBinding.Graph` is the Instagram API with Instagram Login.
final class InstagramBinding: InstagramFaceBase<InstagramClient>, InstagramFace {
    var loggedIn: Bool { client.loggedIn }

    var shownURL: String { client.api.redactor.redactURL(client.configuration.baseURL) }

    func requireToken() throws {
        if !client.loggedIn, let storeProblem { throw storeProblem }
        try client.requireToken()
    }

    /// The envelope's `data`, after checking `meta.code` (GIL held).
    func data(of payload: PyRef, response: Response) throws -> PyRef {
        guard payload.value(at: InstagramEnvelope.metaPath) != nil,
            let data = payload.value(at: InstagramEnvelope.dataPath)
        else {
            throw APIError(
                .parse, "\(response.url) did not answer with the v1 envelope (meta, data)", status: response.status,
                url: response.url, api: "instagram", body: response.text)
        }
        if let code = payload.value(at: InstagramEnvelope.codePath),
            case .int(let value) = (try? PythonValue(python: code)) ?? .none, value != 200
        {
            let type = payload.value(at: InstagramEnvelope.errorTypePath).flatMap { try? $0.str() }
            let message =
                payload.value(at: InstagramEnvelope.errorMessagePath).flatMap { try? $0.str() } ?? "meta.code \(value)"
            throw APIError(
                InstagramEnvelope.kind(errorType: type, code: value) ?? .http,
                "\(response.url): \(type.map { "\($0): " } ?? "")\(message)",
                status: value, url: response.url, api: "instagram", body: response.text)
        }
        return data
    }

    func fetch(_ route: InstagramRouter) throws -> PyRef {
        try requireToken()
        let client = self.client
        try client.requireToken()
        let response = try client.api.sendFromPython(route.request)
        return try data(of: decoder.decode(response, api: "instagram"), response: response)
    }

    func iterate(_ route: InstagramRouter, limit: Int?) throws -> PyRef {
        try requireToken()
        return try pages(client.api, from: route.firstPage(limit: limit), paging: client.paging, limit: limit)
    }

    /// The implicit grant's browser step (`authorize_url()` opens it).
    func loginFlow() throws -> OAuthImplicitFlow { try client.loginFlow() }

    /// `complete_login(redirect_url)`: checks the redirect against the pending login (this
    /// session's `authorize_url()`, else one `apimacro login instagram` saved), stores the
    /// token (mode 0600) and uses it from now on.
    ///
    /// No pending login, or an expired one, is an `AuthError`: the token is not stored.
    func completeLogin(redirect: String) throws {
        let flow = try client.loginFlow()
        let expected = try expectedState(of: flow, at: Date())
        let token = try flow.complete(redirect: redirect, expectedState: expected)
        pending = nil
        try store.save(token, for: "instagram", kind: "access_token")
        // Redacted from tracebacks and the REPL's echo from now on.
        runtime.secrets.add(token.revealed)
        client.setToken(token)
    }

    /// v1 has no `fields=`: anything but None is a `TypeError`-like ArgumentError naming the Graph API.
    static func noFields(_ value: PyRef?, in function: String) throws {
        if let value, !value.isNone {
            throw ArgumentError(
                "\(function)() argument 'fields' is a Graph API parameter; the legacy v1 API returns fixed fields")
        }
    }

    /// Builds `apimacro.instagram` for the backend the settings choose: the Instagram API with
    /// Instagram Login (`Graph`), or the legacy v1 API (a base URL ending in `/v1`).
    static func install(_ context: BuiltInClient.Context) throws {
        let runtime = context.runtime
        switch Instagram.client(in: runtime.view(of: Instagram.descriptor), on: runtime.clientContext()) {
        case .graph(let client): try Graph.install(context, client: client)
        case .legacy(let client): try installLegacy(context, client: client)
        }
    }

    /// Builds `apimacro.instagram` on the legacy v1 API.
    static func installLegacy(_ context: BuiltInClient.Context, client: InstagramClient) throws {
        let runtime = context.runtime
        let binding = InstagramBinding(client: client, context)
        let builder = try faceClass(
            doc:
                "The Instagram v1 API (base URL from \(Instagram.url.variable); token from \(Instagram.token.variable) or "
                + "`apimacro login instagram`).",
            docs: InstagramFaceDocs(
                authorizeURL: "The OAuth2 URL (response_type=token) to open in a browser.",
                completeLogin:
                    "Stores the access_token from the redirect URL's fragment; AuthError on error= or a state mismatch.",
                get: "the `data` member of the envelope", paginate: "Every item of every page (data, pagination).")
        ) { label in
            let (view, store) = try runtime.view(of: Instagram.descriptor, account: label)
            return InstagramBinding(
                client: Instagram.legacyClient(InstagramConfiguration(view), on: runtime.clientContext(store: store)),
                context, account: store)
        }
        try builder.property("rate_limit", doc: "None: the v1 API reports no usage (the Graph API does).") { _ in
            .none
        }
        try builder.method("me", doc: "me(fields=None) -> dict\n\nGET users/self (v1 takes no fields).") {
            binding, arguments in
            let slots = try arguments.bind("me", ["fields"])
            try noFields(slots[0], in: "me")
            return try binding.fetch(.me)
        }
        try builder.method("followed_by", doc: "followed_by(limit=None) -> iterator of users") { binding, arguments in
            let slots = try arguments.bind("followed_by", ["limit"])
            return try binding.iterate(.followedBy, limit: Arguments.limit(slots[0], in: "followed_by"))
        }
        try builder.method("follows", doc: "follows(limit=None) -> iterator of users") { binding, arguments in
            let slots = try arguments.bind("follows", ["limit"])
            return try binding.iterate(.follows, limit: Arguments.limit(slots[0], in: "follows"))
        }
        for name in ["recent_media", "media"] {
            try builder.method(
                name,
                doc:
                    "\(name)(user_id='self', fields=None, limit=None) -> iterator of media dicts (filter, link, images, "
                    + "caption, …); v1 takes no fields"
            ) { binding, arguments in
                let slots = try arguments.bind(name, ["user_id", "fields", "limit"])
                let user = try Arguments.optionalString(slots[0], "user_id", in: name) ?? "self"
                try noFields(slots[1], in: name)
                return try binding.iterate(.recentMedia(userID: user), limit: Arguments.limit(slots[2], in: name))
            }
        }
        for (name, parameters) in [("children", "media_id"), ("insights", "target, metrics, period=None, **params")] {
            try builder.method(name, doc: "\(name)(\(parameters)) -> list of dicts\n\nOnly on the Graph API.") {
                _, _ in
                throw APIError(
                    .invalidRequest,
                    "instagram.\(name)() exists only on the Instagram API with Instagram Login; this base URL is the "
                        + "legacy v1 API (unset \(Instagram.url.variable) for graph.instagram.com)", api: Instagram.name
                )
            }
        }
        try finish(builder, binding: binding, in: context)
    }
}
