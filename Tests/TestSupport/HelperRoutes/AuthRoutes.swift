import Foundation

/// `GET /basic-auth/{user}/{password}` and `GET /bearer`.
struct AuthRoutes: RouteHandler {
    func respond(to request: RouteRequest) -> Response? {
        if let captures = request.match("GET", "/basic-auth/{user}/{password}"),
            let user = captures["user"], let password = captures["password"]
        {
            return basic(user: user, password: password, request: request)
        }
        if request.match("GET", "/bearer") != nil {
            return bearer(request)
        }
        return nil
    }

    /// The scheme and the credentials of the `Authorization` header.
    private func authorization(_ request: RouteRequest) -> (scheme: String, credentials: String)? {
        guard let value = request.recorded.header("authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        return (parts[0].lowercased(), parts[1].trimmed(of: " "))
    }

    private func basic(user: String, password: String, request: RouteRequest) -> Response {
        if let auth = authorization(request), auth.scheme == "basic",
            let decoded = Data(base64Encoded: auth.credentials),
            String(decoding: decoded, as: UTF8.self) == user + ":" + password
        {
            return .json(.object([("authenticated", .bool(true)), ("user", .string(user))]))
        }
        return .json(
            .object([("authenticated", .bool(false))]), status: 401,
            headers: [("WWW-Authenticate", "Basic realm=\"apimacro-testserver\"")])
    }

    private func bearer(_ request: RouteRequest) -> Response {
        if let auth = authorization(request), auth.scheme == "bearer" || auth.scheme == "token",
            !auth.credentials.isEmpty
        {
            return .json(.object([("token_present", .bool(true))]))
        }
        return .message("Requires authentication", status: 401, headers: [("WWW-Authenticate", "Bearer")])
    }
}
