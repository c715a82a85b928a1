import Foundation
import Synchronization

/// GitHub's OAuth device flow ("Authorizing OAuth apps", device flow) under `/device-login`.
///
/// `POST /device-login/login/device/code` (form: `client_id`, `scope`) answers
/// `{"device_code", "user_code", "verification_uri", "expires_in", "interval": 1}`, and
/// `POST /device-login/login/oauth/access_token` (form: `client_id`, `device_code`,
/// `grant_type=urn:ietf:params:oauth:grant-type:device_code`) answers, as GitHub does with
/// status 200, `{"error": …, "error_description", "error_uri"}` or
/// `{"access_token", "token_type": "bearer", "scope"}`. JSON with `Accept: application/json`,
/// else form-encoded, as GitHub.
///
/// The client id picks the mode:
/// - `device-ok`: `authorization_pending` twice, then the token `gho_device_token_1`
/// - `device-slow`: `slow_down` (with `"interval": 2`) once, then the token
/// - `device-expired`: `expired_token`; `device-denied`: `access_denied`
/// - `device-disabled`: `device_flow_disabled` from the code request
/// - `device-never`: `expires_in: 3`, and `authorization_pending` for ever
/// - `device-app`: the token at once, with `expires_in: 28800`, `refresh_token` and
///   `refresh_token_expires_in`, as a GitHub App's user token
/// - any other: `incorrect_client_credentials`
struct DeviceFlowRoutes: RouteHandler {
    /// The device code handed out (a secret: the tests check it is never printed).
    static let deviceCode = "3584d83530557fdd1f46af8289938c8ef79f9dc5"
    /// The one-time code shown to the user.
    static let userCode = "WDJB-MJHT"
    /// The token issued.
    static let token = "gho_device_token_1"
    /// The refresh token issued to `device-app`.
    static let refreshToken = "ghr_device_refresh_1"

    /// The refresh token a test stores, which `grant_type=refresh_token` takes.
    static let storedRefreshToken = "ghr_stored_refresh_1"
    /// The token a refresh issues.
    static let refreshedToken = "ghu_refreshed_token_1"

    /// Polls per client id (one count per server: the routes are made for each).
    private let polls = PollCounts()

    /// The polls of each client id so far.
    final class PollCounts: Sendable {
        private let counts = Mutex<[String: Int]>([:])

        /// Counts one more poll of `client`; the count after it.
        func next(_ client: String) -> Int {
            counts.withLock { counts in
                counts[client, default: 0] += 1
                return counts[client] ?? 0
            }
        }
    }

    func respond(to request: RouteRequest) -> Response? {
        if request.match("POST", "/device-login/login/device/code") != nil { return code(request) }
        if request.match("POST", "/device-login/login/oauth/access_token") != nil { return poll(request) }
        return nil
    }

    private func code(_ request: RouteRequest) -> Response {
        let form = URLCoding.formDictionary(request.recorded.bodyText)
        let client = form["client_id"] ?? ""
        if client == "device-disabled" { return answer(request, error: "device_flow_disabled") }
        guard Self.clients.contains(client) else { return answer(request, error: "incorrect_client_credentials") }
        return answer(
            request,
            [
                ("device_code", .string(Self.deviceCode)), ("user_code", .string(Self.userCode)),
                ("verification_uri", .string(request.origin + "/device-login/login/device")),
                ("expires_in", .int(client == "device-never" ? 3 : 900)), ("interval", .int(1)),
            ])
    }

    static let clients = ["device-ok", "device-slow", "device-expired", "device-denied", "device-never", "device-app"]

    private func poll(_ request: RouteRequest) -> Response {
        let form = URLCoding.formDictionary(request.recorded.bodyText)
        let client = form["client_id"] ?? ""
        guard Self.clients.contains(client) else { return answer(request, error: "incorrect_client_credentials") }
        if form["grant_type"] == "refresh_token" {
            // A GitHub App's user token renewed: no client secret, as for a device-flow token.
            guard form["refresh_token"] == Self.storedRefreshToken else {
                return answer(request, error: "bad_refresh_token")
            }
            return answer(
                request,
                [
                    ("access_token", .string(Self.refreshedToken)), ("token_type", .string("bearer")),
                    ("scope", .string("")), ("expires_in", .int(28800)),
                    ("refresh_token", .string(Self.refreshToken)), ("refresh_token_expires_in", .int(15_897_600)),
                ])
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code" else {
            return answer(request, error: "unsupported_grant_type")
        }
        guard form["device_code"] == Self.deviceCode else { return answer(request, error: "incorrect_device_code") }
        let count = polls.next(client)
        let token: [(String, JSON)] = [
            ("access_token", .string(Self.token)), ("token_type", .string("bearer")), ("scope", .string("repo,gist")),
        ]
        switch client {
        case "device-ok":
            return count <= 2 ? answer(request, error: "authorization_pending") : answer(request, token)
        case "device-slow":
            return count == 1
                ? answer(request, error: "slow_down", extra: [("interval", .int(2))]) : answer(request, token)
        case "device-expired":
            return answer(request, error: "expired_token")
        case "device-denied":
            return answer(request, error: "access_denied")
        case "device-app":
            return answer(
                request,
                token + [
                    ("expires_in", .int(28800)), ("refresh_token", .string(Self.refreshToken)),
                    ("refresh_token_expires_in", .int(15_897_600)),
                ])
        default:
            return answer(request, error: "authorization_pending")
        }
    }

    /// `{"error", "error_description", "error_uri"}`, status 200 as GitHub answers.
    private func answer(_ request: RouteRequest, error: String, extra: [(String, JSON)] = []) -> Response {
        answer(
            request,
            [
                ("error", .string(error)), ("error_description", .string("The \(error) error.")),
                (
                    "error_uri",
                    .string(
                        "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"
                    )
                ),
            ] + extra)
    }

    /// `fields` as JSON when the request accepts it, else form-encoded.
    private func answer(_ request: RouteRequest, _ fields: [(String, JSON)]) -> Response {
        if request.recorded.header("Accept")?.contains("application/json") == true { return .json(.object(fields)) }
        let text = fields.map { name, value in
            let plain: String
            switch value {
            case .string(let string): plain = string
            default: plain = String(decoding: value.bytes, as: UTF8.self)
            }
            return name + "=" + URLCoding.percentEncode(plain)
        }.joined(separator: "&")
        return Response(
            status: 200, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(text.utf8))
    }
}
