import Clients
import Platform
import PythonBridge
import WebAPI

extension InstagramBinding {
    /// `apimacro.instagram` on the Instagram API with Instagram Login (the default backend):
    /// `me`, `media` (and its alias `recent_media`), `children`, `insights`, `get`, `paginate`,
    /// `rate_limit`, and Business Login in a macro (`authorize_url`, `complete_login`).
    final class Graph: InstagramFaceBase<InstagramGraphClient>, InstagramFace {
        var loggedIn: Bool { client.loggedIn }

        var shownURL: String { client.api.redactor.redactURL(client.configuration.versionedBaseURL) }

        /// The token ready (refreshed if due), or the reason there is none (GIL held; waits without it).
        func prepare() throws {
            let client = self.client
            GraphVersionSchedule.warnOnce(
                version: client.configuration.apiVersion, warn: runtime.transport.warn)
            if !client.loggedIn, let storeProblem { throw storeProblem }
            try client.requireToken()
            try withoutGIL { try await client.prepare() }
        }

        /// Makes the values a macro passes under credential names (`params={"access_token": …}`)
        /// secrets of the process: its tracebacks, which quote the macro's line, redact them too.
        func learnSecrets(in route: InstagramGraphRouter) {
            for (name, value) in route.request.query where CredentialNames.isCredentialParameter(name) {
                runtime.secrets.add(value)
            }
        }

        /// One request's decoded answer, its page links without the token.
        func fetch(_ route: InstagramGraphRouter) throws -> PyRef {
            learnSecrets(in: route)
            try prepare()
            let client = self.client
            let response = try client.api.sendFromPython(route.request)
            let payload = try decoder.decode(response, api: Instagram.name)
            try Self.scrubPaging(payload)
            return payload
        }

        /// A lazy iterator over the items of every page (`data`), following `paging.next`.
        func iterate(_ route: InstagramGraphRouter, limit: Int?) throws -> PyRef {
            learnSecrets(in: route)
            try prepare()
            return try pages(client.api, from: route.firstPage(limit: limit), paging: client.paging, limit: limit)
        }

        /// Every item of every page, as a list.
        func all(_ route: InstagramGraphRouter) throws -> PyRef {
            try Interpreter.import("builtins").attribute("list").call([iterate(route, limit: nil)])
        }

        /// `paging.next` and `paging.previous` of a decoded answer without the token they carry.
        static func scrubPaging(_ payload: PyRef) throws {
            guard let paging = payload.value(at: ["paging"]) else { return }
            for key in ["next", "previous"] {
                guard let link = paging.value(at: [key]), case .string(let url) = try PythonValue(python: link) else {
                    continue
                }
                try paging.setItem(key, PyRef(string: InstagramGraphRouter.withoutToken(url)))
            }
        }

        /// `instagram.rate_limit`: the usage last reported (percentages, and minutes until access
        /// returns), or None before the first answer that carried one.
        func rateLimit() throws -> PyRef {
            guard let usage = client.usage else { return .none }
            let names = InstagramGraphUsage.percentages + [InstagramGraphUsage.regain]
            return try PythonValue.object(
                names.map { name in
                    (name, usage.figures[name].map { $0.rounded() == $0 ? .int(Int($0)) : .float($0) } ?? .none)
                }
            ).toPython()
        }

        /// Business Login's browser step: Meta's authorize page for this app (`response_type=code`).
        func loginFlow() throws -> OAuthImplicitFlow {
            try Instagram.businessLogin.flow(in: runtime.view(of: Instagram.descriptor))
        }

        /// `complete_login(redirect_url)`: checks the redirect against the pending login (this
        /// session's `authorize_url()`, else one `apimacro login instagram` saved), exchanges the
        /// code for a 60-day token (over the network itself: never cached nor recorded), stores
        /// it (mode 0600) and uses it from now on.
        func completeLogin(redirect: String) throws {
            guard !runtime.transport.offline else {
                throw APIError(
                    .auth,
                    "instagram.complete_login() exchanges the code over the network, which --offline and --replay "
                        + "do not reach; log in without them", api: Instagram.name)
            }
            let login = Instagram.businessLogin
            let view = runtime.view(of: Instagram.descriptor)
            let flow = try login.flow(in: view)
            let app = try login.app(in: view)
            let time = Date()
            let expected = try expectedState(of: flow, at: time)
            let code = try flow.code(from: redirect, expectedState: expected)
            pending = nil
            let secrets = runtime.secrets
            secrets.add(code.revealed)
            let network = runtime.network
            let log = runtime.log
            let issued = try withoutGIL { try await login.redeem(code, app, network, log) }
            secrets.add(issued.token.revealed)
            try store.save(
                issued.token, for: Instagram.name, kind: "access_token", scope: issued.scope,
                expiresAt: issued.expiresAt)
            client.setToken(issued.token, obtainedAt: Int(time.timeIntervalSince1970), expiresAt: issued.expiresAt)
        }

        /// `fields` as the API takes them: None for `defaults`, a str as it is, a list of str joined by commas.
        static func fields(_ value: PyRef?, _ name: String, in function: String, defaults: String) throws -> String {
            guard let value, !value.isNone else { return defaults }
            switch try PythonValue(python: value) {
            case .string(let text): return text
            case .list(let items), .tuple(let items):
                return try items.map { item -> String in
                    guard case .string(let text) = item else {
                        throw ArgumentError("\(function)() argument '\(name)' must be a str or a list of str")
                    }
                    return text
                }.joined(separator: ",")
            default:
                throw ArgumentError(
                    "\(function)() argument '\(name)' must be a str or a list of str, not \(value.typeName)")
            }
        }

        /// `followed_by()` and `follows()`: the Graph API has no follower lists.
        static func noLists(_ name: String) -> APIError {
            APIError(
                .invalidRequest,
                "instagram.\(name)(): the Instagram API with Instagram Login has no follower lists, only the counts "
                    + "followers_count and follows_count of instagram.me(); \(name)() exists only on the legacy v1 API "
                    + "(a base URL ending in /v1)", api: Instagram.name)
        }

        /// Builds `apimacro.instagram` on `client`.
        static func install(_ context: BuiltInClient.Context, client: InstagramGraphClient) throws {
            let runtime = context.runtime
            let binding = Graph(client: client, context)
            let builder = try Graph.faceClass(
                doc:
                    "The Instagram API with Instagram Login (base URL from \(Instagram.url.variable), version from "
                    + "\(Instagram.apiVersion.variable); token from \(Instagram.token.variable) or `apimacro login instagram`).",
                docs: InstagramFaceDocs(
                    authorizeURL: "Meta's authorize URL (response_type=code) to open in a browser.",
                    completeLogin:
                        "Exchanges the code in the redirect URL for a 60-day token and stores it; "
                        + "AuthError on error= or a state mismatch.",
                    get: "decoded JSON\n\nOne GET relative to the versioned base URL.",
                    paginate: "Every item of every page (data, paging.next).")
            ) { label in
                let (view, store) = try runtime.view(of: Instagram.descriptor, account: label)
                return Graph(
                    client: Instagram.graphClient(
                        InstagramGraphConfiguration(view), on: runtime.clientContext(store: store)),
                    context, account: store)
            }
            try builder.property(
                "rate_limit",
                doc:
                    "The usage Meta last reported (X-App-Usage, X-Business-Use-Case-Usage): call_count, total_time, "
                    + "total_cputime (percent), estimated_time_to_regain_access (minutes); None before the first answer."
            ) { binding in try binding.rateLimit() }
            try builder.method(
                "me",
                doc:
                    "me(fields=None) -> dict\n\nGET me: the professional account (default fields: \(InstagramGraphRouter.meFields))."
            ) { binding, arguments in
                let slots = try arguments.bind("me", ["fields"])
                return try binding.fetch(
                    .me(fields: fields(slots[0], "fields", in: "me", defaults: InstagramGraphRouter.meFields)))
            }
            for name in ["media", "recent_media"] {
                try builder.method(
                    name,
                    doc:
                        "\(name)(user_id='me', fields=None, limit=None) -> iterator of media dicts\n\n"
                        + "GET {user_id}/media, every page (default fields: \(InstagramGraphRouter.mediaFields))."
                ) { binding, arguments in
                    let slots = try arguments.bind(name, ["user_id", "fields", "limit"])
                    let user = try Arguments.optionalString(slots[0], "user_id", in: name) ?? "me"
                    let route = InstagramGraphRouter.media(
                        userID: user,
                        fields: try fields(slots[1], "fields", in: name, defaults: InstagramGraphRouter.mediaFields))
                    return try binding.iterate(route, limit: Arguments.limit(slots[2], in: name))
                }
            }
            try builder.method(
                "children", doc: "children(media_id) -> list of dicts\n\nGET {media_id}/children: a carousel's items."
            ) { binding, arguments in
                let slots = try arguments.bind("children", ["media_id"], required: 1)
                return try binding.all(
                    .children(
                        mediaID: Arguments.string(slots[0], "media_id", in: "children"),
                        fields: InstagramGraphRouter.childFields))
            }
            try builder.method(
                "insights",
                doc:
                    "insights(target, metrics, period=None, **params) -> list of dicts\n\n"
                    + "GET {target}/insights: a media's or the account's ('me') insights, as the API shapes them."
            ) { binding, arguments in
                let names = ["target", "metrics", "period"]
                let known = PyArguments(
                    positional: arguments.positional, keywords: arguments.keywords.filter { names.contains($0.0) })
                let slots = try known.bind("insights", names, required: 2)
                var parameters: [(String, String)] = []
                if let period = slots[2], !period.isNone {
                    parameters.append(("period", try Arguments.string(period, "period", in: "insights")))
                }
                parameters += try Arguments.pairs(
                    keywords: arguments.keywords.filter { !names.contains($0.0) }, in: "insights")
                let route = InstagramGraphRouter.insights(
                    target: try Arguments.string(slots[0], "target", in: "insights"),
                    metrics: try fields(slots[1], "metrics", in: "insights", defaults: ""), parameters: parameters)
                let payload = try binding.fetch(route)
                return payload.value(at: InstagramGraphRouter.itemsPath) ?? payload
            }
            for name in ["followed_by", "follows"] {
                try builder.method(name, doc: "\(name)(limit=None): only on the legacy v1 API.") { _, _ in
                    throw noLists(name)
                }
            }
            try Graph.finish(builder, binding: binding, in: context)
        }
    }
}
