/// Instagram's OAuth 2 implicit grant, `GET /instagram/oauth/authorize` (with or without the
/// trailing slash), answered at once as if the user had clicked.
///
/// - `client_id=test-client&response_type=token&redirect_uri=…`: 302 to
///   `<redirect_uri>#access_token=ig-token-1&state=<state>`
/// - `client_id=deny-client&redirect_uri=…`: 302 to `<redirect_uri>?error=access_denied&…&state=<state>`
/// - any other client: 400 `OAuthException` "Invalid Client ID"
struct OAuthRoutes: RouteHandler {
    static let allowClient = "test-client"
    static let denyClient = "deny-client"

    func respond(to request: RouteRequest) -> Response? {
        guard request.match("GET", "/instagram/oauth/authorize") != nil else { return nil }
        let query = request.query
        let clientID = query["client_id"] ?? ""
        guard clientID == OAuthRoutes.allowClient || clientID == OAuthRoutes.denyClient else {
            return OAuthRoutes.failure("Invalid Client ID")
        }
        guard let redirect = query["redirect_uri"], !redirect.isEmpty,
            clientID == OAuthRoutes.denyClient || query["response_type"] == "token"
        else {
            return OAuthRoutes.failure("You must include a valid client_id, response_type, and redirect_uri parameters")
        }
        let state = query["state"].map { "&state=" + URLCoding.percentEncode($0) } ?? ""
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
