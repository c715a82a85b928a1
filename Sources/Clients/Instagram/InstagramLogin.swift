import Platform
public import WebAPI

/// Business Login for Instagram, the login of the Instagram API with Instagram Login (Meta's
/// "Business Login for Instagram" page and its `access_token` and `refresh_access_token`
/// references): the authorization code is exchanged at the token URL for a short-lived token
/// (one hour), which is exchanged at the Graph base URL (`ig_exchange_token`) for a long-lived
/// one (60 days); `refresh_access_token` renews a long-lived token.
///
/// The client secret travels only over https or to loopback, in the code exchange's form body
/// and the long-lived exchange's query (`client_secret`, which the credential rule redacts in
/// every URL shown); the code and both tokens are redacted in every error.
public enum InstagramLogin {
    /// The scopes asked for: the profile and media (`instagram_business_basic`) and insights
    /// (`instagram_business_manage_insights`).
    public static let scope = "instagram_business_basic,instagram_business_manage_insights"
    /// Meta's authorize page for Business Login (its "Business Login for Instagram" page).
    public static let defaultAuthorizeURL = "https://www.instagram.com/oauth/authorize"
    /// Where a code is exchanged for a short-lived token (the same page, step 2).
    public static let defaultTokenURL = "https://api.instagram.com/oauth/access_token"

    /// The code → short-lived → long-lived exchange, through `transport` (exchanges logged to `log`).
    @Sendable public static func redeem(
        code: Secret, app: OAuthCodeApp, transport: any Transport, log: ExchangeLog
    ) async throws -> IssuedToken {
        let graph = InstagramGraphConfiguration(app.view)
        try requireSecure(app.tokenURL, what: "the token URL (\(Instagram.businessLogin.tokenURL.variable))")
        try requireSecure(graph.baseURL, what: "the Graph base URL (\(Instagram.url.variable))")
        let secrets = [app.clientSecret.revealed, code.revealed]
        let tokenAPI = APIClient(
            configuration: ClientConfiguration(
                name: Instagram.name, baseURL: app.tokenURL, defaultHeaders: [("Accept", "application/json")],
                timeout: graph.timeout, maxWait: graph.maxWait, errorMessage: InstagramGraphEnvelope.message),
            transport: transport, log: log, redactor: Redactor(secrets: secrets))
        let exchanged = try await tokenAPI.send(
            Request(
                "POST", app.tokenURL,
                body: .form([
                    ("client_id", app.clientID), ("client_secret", app.clientSecret.revealed),
                    ("grant_type", "authorization_code"), ("redirect_uri", app.redirectURI),
                    ("code", code.revealed),
                ])))
        let short = try token(in: exchanged, now: Date().timeIntervalSince1970, redactor: tokenAPI.redactor)
        var configuration = graph.client
        configuration.baseURL = graph.baseURL
        configuration.credential = .query(name: "access_token", value: short.token)
        // The answer is a token: never rewritten, even should it be the one sent.
        configuration.redactsEchoedCredential = false
        let graphAPI = APIClient(
            configuration: configuration, transport: transport, log: log,
            redactor: Redactor(secrets: secrets + [short.token.revealed]))
        let long = try await graphAPI.send(
            Request(
                "GET", "/access_token",
                query: [("grant_type", "ig_exchange_token"), ("client_secret", app.clientSecret.revealed)]))
        let issued = try token(in: long, now: Date().timeIntervalSince1970, redactor: graphAPI.redactor)
        return IssuedToken(token: issued.token, expiresAt: issued.expiresAt, scope: short.scope ?? issued.scope)
    }

    /// `GET refresh_access_token?grant_type=ig_refresh_token` on `api`'s host, with the token `api` sends.
    public static func refresh(on api: APIClient, root: String) async throws -> IssuedToken {
        let response = try await api.send(
            Request("GET", root + "/refresh_access_token", query: [("grant_type", "ig_refresh_token")]))
        return try token(in: response, now: Date().timeIntervalSince1970, redactor: api.redactor)
    }

    /// The token an answer holds: `{"access_token", "expires_in"}` (the long-lived exchange and
    /// the refresh, pyfb-base-long_term_token.json; a code exchange as Basic Display answered it,
    /// pyfb-base-basic_display_api_user_token.json), or `{"data": [{"access_token", "user_id",
    /// "permissions"}]}` (a code exchange as Business Login documents it).
    ///
    /// A missing or empty token is a `ParseError` (its body redacted: it may hold part of one).
    static func token(in response: Response, now: Double, redactor: Redactor) throws -> IssuedToken {
        var fields = JSONValue.native(in: response.body, path: []) as? [String: Any]
        if let first = (fields?["data"] as? [Any])?.first as? [String: Any] { fields = first }
        guard let token = fields?["access_token"] as? String, !token.isEmpty,
            !token.contains(where: { $0.isWhitespace || $0.isNewline })
        else {
            let body = Redactor(secrets: redactor.secrets + tokenish(response)).redact(response.text)
            throw APIError(
                .parse, "\(response.url) answered without an access_token", status: response.status,
                url: response.url, api: Instagram.name, body: body)
        }
        // An absurd token is refused before anything stores it (issue 35).
        guard token.utf8.count <= CredentialStore.tokenLimit else {
            throw APIError(
                .parse,
                "\(response.url) answered with an access_token of \(token.utf8.count) bytes, longer than any "
                    + "token (at most \(CredentialStore.tokenLimit >> 10) KiB); it was not used or stored: check that "
                    + "\(Instagram.url.variable) and \(Instagram.businessLogin.tokenURL.variable) name Meta's servers",
                status: response.status, url: response.url, api: Instagram.name)
        }
        var expiresAt: Int?
        if let seconds = InstagramGraphEnvelope.number(fields?["expires_in"]), seconds > 0 {
            expiresAt = Int(now + min(seconds, 3e9))
        }
        let permissions = fields?["permissions"]
        let scope =
            (permissions as? String) ?? (permissions as? [Any])?.compactMap { $0 as? String }.joined(separator: ",")
        return IssuedToken(token: Secret(token), expiresAt: expiresAt, scope: scope)
    }

    /// Every string value of a small JSON body: what to redact from a token answer that failed.
    private static func tokenish(_ response: Response) -> [String] {
        guard let fields = JSONValue.native(in: response.body, path: []) as? [String: Any] else { return [] }
        return fields.values.compactMap { $0 as? String }
    }

    /// `AuthError` unless `url` is https or a loopback http URL: the client secret goes there.
    static func requireSecure(_ url: String, what: String) throws {
        guard let origin = Origin(url: url), origin.isSecureForCredentials else {
            throw APIError(
                .auth,
                "refusing to send the client secret to \(what), \(url): use https (or a loopback address)",
                api: Instagram.name)
        }
    }
}
