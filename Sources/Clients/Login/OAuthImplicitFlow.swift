public import Platform
public import WebAPI

/// The browser step of an OAuth 2 login as a CLI drives it: build the authorize URL the user
/// opens in a browser, then read the URL the browser was redirected to, checking its `state`.
///
/// For the implicit grant (RFC 6749 §4.2, `response_type=token`) that URL carries the
/// `access_token` (`complete`); for the authorization-code grant (§4.1, `response_type=code`)
/// it carries the code (`code(from:expectedState:)`) the client then exchanges.
///
/// Any API can use it (Instagram, manifest plugins with `auth.kind = "oauth2_implicit"`);
/// `OAuthLogin` builds an implicit one from a client's settings, `OAuthCodeLogin` a code one.
public struct OAuthImplicitFlow: Sendable {
    /// The provider's authorize endpoint (`https://api.instagram.com/oauth/authorize`).
    public var authorizeURL: String
    /// The application's client id.
    public var clientID: String
    /// The redirect URI registered with the provider.
    public var redirectURI: String
    /// The scopes asked for (space-separated), if any.
    public var scope: String?
    /// The login's name in messages (`apimacro login NAME`).
    public var name: String?
    /// How a macro logs in instead, for messages (Instagram's
    /// `instagram.authorize_url(), then instagram.complete_login(url)`), if it can.
    public var inMacro: String?
    /// `token` (the implicit grant) or `code` (the authorization-code grant).
    ///
    /// Default `token`.
    public var responseType = "token"

    /// The redirect URI a login uses unless one is set: `http://127.0.0.1:8765/callback`.
    public static let defaultRedirectURI = "http://127.0.0.1:8765/callback"

    /// A flow for one provider and application.
    public init(
        authorizeURL: String, clientID: String, redirectURI: String, scope: String? = nil, name: String? = nil,
        inMacro: String? = nil
    ) {
        self.authorizeURL = authorizeURL
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.name = name
        self.inMacro = inMacro
    }

    /// The URL to open in a browser: `client_id`, `redirect_uri`,
    /// `response_type` (`token` or `code`), `scope` when set, and `state`, percent-encoded.
    public func authorizationURL(state: String) -> String {
        var fields = [("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", responseType)]
        if let scope, !scope.isEmpty { fields.append(("scope", scope)) }
        fields.append(("state", state))
        let base =
            authorizeURL.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            ?? ""
        let separator = !base.contains("?") ? "?" : (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&")
        return base + separator + FormEncoding.encode(fields)
    }

    /// 32 random URL-safe characters (192 bits) from the system's secure generator.
    public static func newState() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    /// The access token carried by `redirect`, the URL the browser ended on
    /// (in its fragment, or its query).
    ///
    /// Throws `.auth` for a provider error, a state mismatch or a missing
    /// token, `.invalidRequest` for a non-URL. `expectedState` is the state of
    /// the login this redirect finishes; nil (no login pending, or an expired
    /// one) is a refusal: a token is only ever taken for a login this user
    /// started.
    public func complete(redirect: String, expectedState: String?) throws -> Secret {
        let url = try checked(redirect: redirect, expectedState: expectedState)
        guard let token = url.parameters["access_token"], !token.isEmpty else {
            throw APIError(.auth, missingTokenMessage(found: url.names))
        }
        return Secret(token)
    }

    /// The authorization code carried by `redirect` (in its query), after the same checks as
    /// `complete`: a provider error, a state other than `expectedState`, no pending login.
    public func code(from redirect: String, expectedState: String?) throws -> Secret {
        let url = try checked(redirect: redirect, expectedState: expectedState)
        guard let code = url.parameters["code"], !code.isEmpty else {
            throw APIError(.auth, missingCodeMessage(found: url.names))
        }
        return Secret(code)
    }

    /// Whether `redirect` carries `state` (in its fragment or query): a redirect of the login that
    /// made that state, not a stranger's.
    public static func carries(state: String, _ redirect: String) -> Bool {
        !state.isEmpty && (try? RedirectURL(redirect))?.parameters["state"] == state
    }

    /// `redirect` parsed, once it is known to be neither a provider's refusal nor a stranger's.
    private func checked(redirect: String, expectedState: String?) throws -> RedirectURL {
        let url = try RedirectURL(redirect)
        let parameters = url.parameters
        if let error = parameters["error"] {
            var message = "login refused by the provider: \(error)"
            if let reason = parameters["error_reason"], !reason.isEmpty { message += " (\(reason))" }
            if let description = parameters["error_description"], !description.isEmpty { message += ": \(description)" }
            throw APIError(
                .auth, Redactor(secrets: [parameters["access_token"] ?? "", parameters["code"] ?? ""]).redact(message))
        }
        // An address with no parameters at all was cut short: say how to paste it whole.
        if url.names.isEmpty {
            throw APIError(
                .auth, responseType == "code" ? missingCodeMessage(found: []) : missingTokenMessage(found: []))
        }
        guard let expectedState, !expectedState.isEmpty else {
            throw APIError(.auth, noPendingLoginMessage)
        }
        if parameters["state"] != expectedState {
            throw APIError(
                .auth,
                "state mismatch: the redirect does not belong to this login (possible CSRF); "
                    + "start again with apimacro login \(name ?? "NAME")")
        }
        return url
    }

    /// Why a redirect is refused when no login is pending, and what to do.
    var noPendingLoginMessage: String {
        let login = name ?? "NAME"
        var message =
            "no \(login) login is pending (none was started, it was already used, or it is older than 15 minutes), "
            + "so this redirect cannot be trusted and nothing was stored; start the login again with apimacro login \(login)"
        if let inMacro { message += " (in a macro: \(inMacro))" }
        return message
    }

    private func missingCodeMessage(found names: [String]) -> String {
        let login = "apimacro login \(name ?? "NAME")"
        guard !names.isEmpty else {
            return "the redirect holds no ?code= (it has no parameters at all): paste the whole address "
                + "the browser ended on (…/callback?code=…&state=…), or start again with \(login)"
        }
        return "the redirect holds no ?code= (it has: \(names.joined(separator: ", "))); the address the browser "
            + "ended on holds ?code=…&state=…; start again with \(login)"
    }

    private func missingTokenMessage(found names: [String]) -> String {
        let login = "apimacro login \(name ?? "NAME")"
        guard !names.isEmpty else {
            return "the redirect holds no access_token (it has no parameters at all): paste the whole address "
                + "the browser ended on, including the part after '#', or start again with \(login)"
        }
        var message = "the redirect holds no access_token (it has: \(names.joined(separator: ", ")))"
        if names.contains("code") {
            message +=
                "; the provider answered with an authorization code: allow the implicit (token) flow for this app"
        }
        return message + "; start again with \(login)"
    }
}

extension OAuthImplicitFlow {
    /// How long a pending login's state stays valid: 15 minutes.
    public static let pendingStateLifetime: TimeInterval = 15 * 60

    /// A login started in this process (`instagram.authorize_url()`): its state
    /// is good for `pendingStateLifetime`, like one saved by `savePendingState`.
    public struct PendingLogin: Sendable, Equatable {
        public let state: String
        public let created: Date

        public init(state: String, created: Date) {
            self.state = state
            self.created = created
        }

        /// The state while it is young enough at `now`, else nil.
        public func state(at now: Date) -> String? {
            let age = now.timeIntervalSince(created)
            return age >= -60 && age <= OAuthImplicitFlow.pendingStateLifetime ? state : nil
        }
    }

    /// Remembers `state` for the second half of a login in a later command
    /// (`apimacro login NAME --redirect-url URL`), in `<home>/pending-login-<name>` (mode 0600).
    public func savePendingState(_ state: String, for name: String, in home: URL, now: Date = Date()) throws {
        let file = try Self.pendingFile(for: name, in: home)
        try SecureFile.ensureDirectory(home)
        try SecureFile.replace(file, with: Array("\(Int(now.timeIntervalSince1970))\n\(state)".utf8))
    }

    /// The state saved for `name`, deleting it; nil when there is none or it is
    /// older than `pendingStateLifetime` (an expired one is deleted too).
    public func takePendingState(for name: String, in home: URL, now: Date = Date()) throws -> String? {
        let file = try Self.pendingFile(for: name, in: home)
        guard let bytes = try SecureFile.contents(of: file) else { return nil }
        try SecureFile.remove(file)
        let parts = String(decoding: bytes, as: UTF8.self).split(
            separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let saved = Double(parts[0]) else { return nil }
        let age = now.timeIntervalSince1970 - saved
        guard age >= -60, age <= Self.pendingStateLifetime else { return nil }
        return String(parts[1])
    }

    private static func pendingFile(for name: String, in home: URL) throws -> URL {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
        guard !name.isEmpty, name.allSatisfy(allowed.contains) else {
            throw APIError(.invalidRequest, "\"\(name)\" is not a login name: use letters, digits, '_' or '-'")
        }
        return home.appendingPathComponent("pending-login-\(name)")
    }
}
