/// Instagram's OAuth 2 logins: `GET /instagram/oauth/authorize` (with or without the trailing
/// slash), answered at once as if the user had clicked, and the code exchange
/// `POST /instagram/oauth/access_token`.
///
/// - `client_id=test-client&response_type=token&redirect_uri=…` (the legacy implicit grant):
///   302 to `<redirect_uri>#access_token=ig-token-1&state=<state>`
/// - `client_id=test-client` or `flat-client`, `response_type=code` (Business Login): 302 to
///   `<redirect_uri>?code=ig-code-1&state=<state>#_` (Meta appends `#_`)
/// - `client_id=deny-client&redirect_uri=…`: 302 to `<redirect_uri>?error=access_denied&…&state=<state>`
/// - any other client: 400 `OAuthException` "Invalid Client ID"
/// - `POST access_token` (form: `client_id`, `client_secret=test-secret`,
///   `grant_type=authorization_code`, `redirect_uri`, `code=ig-code-*`): a short-lived token,
///   `IGAA-short-1`, as Business Login documents the answer
///   (`{"data": [{"access_token", "user_id", "permissions"}]}`; not recorded), or for
///   `flat-client` as pyfb-base-basic_display_api_user_token.json records it
///   (`{"access_token", "user_id"}`); `ig-code-used` is refused, as any wrong secret.
struct OAuthRoutes: RouteHandler {
    static let allowClient = "test-client"
    static let denyClient = "deny-client"
    /// A client whose code exchange answers in the recorded (flat) shape.
    static let flatClient = "flat-client"
    /// The code the authorize page hands out.
    static let issuedCode = "ig-code-1"

    func respond(to request: RouteRequest) -> Response? {
        if request.match("POST", "/instagram/oauth/access_token") != nil { return exchange(request) }
        guard request.match("GET", "/instagram/oauth/authorize") != nil else { return nil }
        let query = request.query
        let clientID = query["client_id"] ?? ""
        guard [OAuthRoutes.allowClient, OAuthRoutes.denyClient, OAuthRoutes.flatClient].contains(clientID) else {
            return OAuthRoutes.failure("Invalid Client ID")
        }
        guard let redirect = query["redirect_uri"], !redirect.isEmpty,
            clientID == OAuthRoutes.denyClient || ["token", "code"].contains(query["response_type"] ?? "")
        else {
            return OAuthRoutes.failure("You must include a valid client_id, response_type, and redirect_uri parameters")
        }
        let state = query["state"].map { "&state=" + URLCoding.percentEncode($0) } ?? ""
        if query["response_type"] == "code", clientID != OAuthRoutes.denyClient {
            let separator = redirect.contains("?") ? "&" : "?"
            return OAuthRoutes.redirect(to: redirect + separator + "code=" + OAuthRoutes.issuedCode + state + "#_")
        }
        if clientID == OAuthRoutes.denyClient {
            let separator = redirect.contains("?") ? "&" : "?"
            return OAuthRoutes.redirect(
                to: redirect + separator
                    + "error=access_denied&error_reason=user_denied&error_description=The+user+denied+your+request."
                    + state)
        }
        return OAuthRoutes.redirect(
            to: redirect + "#access_token=" + URLCoding.percentEncode(InstagramEnvelope.issuedToken) + state)
    }

    /// The code exchange: a short-lived token for a good code, client and secret.
    private func exchange(_ request: RouteRequest) -> Response {
        let form = URLCoding.formDictionary(request.recorded.bodyText)
        let clientID = form["client_id"] ?? ""
        guard [OAuthRoutes.allowClient, OAuthRoutes.flatClient].contains(clientID) else {
            return OAuthRoutes.failure("Invalid Client ID")
        }
        guard form["client_secret"] == InstagramGraphRoutes.clientSecret else {
            return OAuthRoutes.failure("Error validating client secret.")
        }
        guard form["grant_type"] == "authorization_code", !(form["redirect_uri"] ?? "").isEmpty else {
            return OAuthRoutes.failure("Invalid grant_type or redirect_uri")
        }
        guard let code = form["code"], code.hasPrefix("ig-code-"), code != "ig-code-used" else {
            return OAuthRoutes.failure("Matching code was not found or was already used")
        }
        let token = JSON.object([
            ("access_token", .string("IGAA-short-1")), ("user_id", .string(InstagramGraphWorld.accountID)),
        ])
        if clientID == OAuthRoutes.flatClient { return .json(token) }
        return .json(
            .object([
                (
                    "data",
                    .array([
                        token.setting(
                            "permissions", .string("instagram_business_basic,instagram_business_manage_insights"))
                    ])
                )
            ]))
    }

    /// Instagram's authorize error body `{"code": 400, "error_type": "OAuthException", "error_message": …}`.
    private static func failure(_ message: String) -> Response {
        .json(
            .object([
                ("code", .int(400)), ("error_type", .string("OAuthException")), ("error_message", .string(message)),
            ]), status: 400)
    }

    private static func redirect(to location: String) -> Response {
        Response(status: 302, headers: [("Location", location)])
    }
}
