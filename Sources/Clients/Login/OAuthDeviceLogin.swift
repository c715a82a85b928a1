import Platform
public import WebAPI

/// An OAuth 2 device authorization grant (RFC 8628) as GitHub speaks it ("Authorizing OAuth
/// apps", device flow): `POST {host}/login/device/code` with the app's client id and scope
/// gives a `device_code` (a secret: never printed nor logged), a one-time `user_code` and the
/// `verification_uri` the user opens; `POST {host}/login/oauth/access_token` with
/// `grant_type=urn:ietf:params:oauth:grant-type:device_code` is then polled at the `interval`
/// named, until the user has entered the code (`access_token`), or the server says to stop.
///
/// Its app is described by `APIMACRO_<NAME>_CLIENT_ID`; `APIMACRO_<NAME>_LOGIN_URL` (the base of
/// `/login/...`, https or loopback http) overrides the host.
public struct OAuthDeviceLogin: Sendable {
    /// The client's name, the login's (`apimacro login NAME`).
    public let name: String
    /// The scopes asked for (space-separated), if any.
    public let scope: String?
    /// `login --help`'s line for this client, after its name.
    public let help: String
    /// The host logged in to when neither `--hostname` nor the login URL is given.
    public let defaultHost: String
    /// What to do when the app has the device flow turned off (`device_flow_disabled`).
    public let enableHint: String

    /// Where the client sends the token (its API's URL) and the login host that API belongs to;
    /// nil when a login may be made anywhere.
    public var tokenDestination: (@Sendable (SettingsView) -> (apiURL: String, loginHost: String))? = nil

    /// The login of the client called `name`.
    public init(name: String, scope: String?, help: String, defaultHost: String, enableHint: String) {
        self.name = name
        self.scope = scope
        self.help = help
        self.defaultHost = defaultHost
        self.enableHint = enableHint
    }

    /// `APIMACRO_<NAME>_CLIENT_ID`: the app's client id.
    public var clientID: ClientSetting {
        ClientSetting(client: name, key: "client_id", holdsNoSecret: true).described(
            "your OAuth App's client ID, for apimacro login \(name) (the device flow)")
    }
    /// `APIMACRO_<NAME>_LOGIN_URL`: the base of the device flow's `/login/...` endpoints.
    public var loginURL: ClientSetting {
        ClientSetting.url(client: name, key: "login_url").described(
            "where apimacro login \(name) asks (the base of /login/device/code)",
            default: "https://\(defaultHost), or https://HOST with --hostname HOST")
    }
    /// The two settings above, for the client's descriptor.
    public var settings: [ClientSetting] { [clientID, loginURL] }

    /// The base URL asked, from the settings, else `hostname`, else the default host.
    ///
    /// - Throws: `APIError(.auth)` when the client id is unset, the hostname is not a host
    ///   name, or the URL is neither https nor loopback http.
    public func base(in view: SettingsView, hostname: String?) throws -> (base: String, clientID: String) {
        guard let id = view.value(clientID), !id.isEmpty else {
            throw APIError(
                .auth,
                "set \(clientID.variable) (or [\(name)] client_id in config.toml) to your OAuth App's client ID "
                    + "to log in: make one at https://\(defaultHost)/settings/applications/new (any homepage and "
                    + "callback URL), then tick \"Enable Device Flow\" on its page",
                api: name)
        }
        var base: String
        if let url = view.value(loginURL) {
            base = url
        } else if let hostname {
            guard !hostname.isEmpty,
                hostname.utf8.allSatisfy({ $0 < 0x80 && (URLBytes.alphanumeric($0) || ".-:[]".utf8.contains($0)) })
            else {
                throw APIError(
                    .auth, "--hostname \(hostname.debugDescription) is not a host name (such as github.example.com)")
            }
            base = "https://" + hostname
        } else {
            base = "https://" + defaultHost
        }
        while base.hasSuffix("/") { base.removeLast() }
        guard let origin = Origin(url: base), origin.isSecureForCredentials else {
            throw APIError(
                .auth, "refusing to log in through \(base): use https (or a loopback address)", api: name)
        }
        // A token is stored under the client's name and sent to its API: one made on another host
        // (GitHub Enterprise Server's for github.com's API, or the reverse) would be sent there.
        let host = origin.port == (origin.scheme == "https" ? 443 : 80) ? origin.host : "\(origin.host):\(origin.port)"
        if view.value(loginURL) == nil, let destination = tokenDestination?(view), host != destination.loginHost {
            throw APIError(
                .auth,
                "a token made on \(host) would be sent to \(destination.apiURL), another server; set "
                    + "APIMACRO_\(name.uppercased())_URL to \(host)'s API first (GitHub Enterprise Server: "
                    + "https://\(host)/api/v3), or log in on \(destination.loginHost)",
                api: name)
        }
        return (base, id)
    }

    /// The whole flow against `base`: the code asked for, its user code said through `say`,
    /// then the token endpoint polled (waiting with `sleep`) until a token comes or the server
    /// says to stop.
    public func run(
        base: String, clientID: String, transport: any Transport, timeout: Double,
        say: @Sendable (String) -> Void,
        sleep: @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }
    ) async throws -> IssuedToken {
        var secrets: [String] = []
        func client() -> APIClient {
            APIClient(
                configuration: ClientConfiguration(
                    name: name, baseURL: base, defaultHeaders: [("Accept", "application/json")],
                    timeout: timeout, maxWait: 60, maxRetries: 1),
                transport: transport, log: ExchangeLog(logger: nil), redactor: Redactor(secrets: secrets))
        }
        var form = [("client_id", clientID)]
        if let scope { form.append(("scope", scope)) }
        let codeAnswer = try await fields(
            of: client(), Request("POST", base + "/login/device/code", body: .form(form)))
        if let error = codeAnswer["error"] as? String {
            throw failure(error, description: codeAnswer["error_description"] as? String)
        }
        guard let deviceCode = codeAnswer["device_code"] as? String, !deviceCode.isEmpty,
            let userCode = codeAnswer["user_code"] as? String, !userCode.isEmpty,
            let verification = codeAnswer["verification_uri"] as? String, !verification.isEmpty
        else {
            throw APIError(
                .parse, "\(base)/login/device/code answered without a device_code, user_code and verification_uri",
                api: name)
        }
        secrets.append(deviceCode)
        var interval = max(Self.number(codeAnswer["interval"]) ?? 5, 1)
        let lifetime = min(max(Self.number(codeAnswer["expires_in"]) ?? 900, 1), 3600)
        let deadline = Date().timeIntervalSince1970 + lifetime
        say("First copy your one-time code: \(Self.printable(userCode))")
        say(
            "Then open \(Self.printable(verification)) in a browser and enter it "
                + "(waiting up to \(Self.duration(lifetime)); Ctrl-C stops).")
        while true {
            guard Date().timeIntervalSince1970 + interval <= deadline else {
                throw APIError(
                    .auth,
                    "the one-time code expired after \(Self.duration(lifetime)) before it was entered; "
                        + "nothing stored: run apimacro login \(name) again", api: name)
            }
            try await sleep(interval)
            let answer = try await fields(
                of: client(),
                Request(
                    "POST", base + "/login/oauth/access_token",
                    body: .form([
                        ("client_id", clientID), ("device_code", deviceCode),
                        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    ])))
            if answer["access_token"] != nil { return try issued(answer, base: base) }
            let error = answer["error"] as? String ?? ""
            switch error {
            case "authorization_pending":
                continue
            case "slow_down":
                interval = max(Self.number(answer["interval"]) ?? (interval + 5), interval)
            default:
                throw failure(error, description: answer["error_description"] as? String)
            }
        }
    }

    /// A token renewed with `refreshToken` (a GitHub App's user token): `POST
    /// {base}/login/oauth/access_token` with `grant_type=refresh_token` (no client secret: GitHub
    /// takes none for a token the device flow made).
    public func refresh(
        base: String, clientID: String, refreshToken: Secret, transport: any Transport, timeout: Double
    ) async throws -> IssuedToken {
        let api = APIClient(
            configuration: ClientConfiguration(
                name: name, baseURL: base, defaultHeaders: [("Accept", "application/json")], timeout: timeout,
                maxWait: 60, maxRetries: 1),
            transport: transport, log: ExchangeLog(logger: nil), redactor: Redactor(secrets: [refreshToken.revealed]))
        let answer = try await fields(
            of: api,
            Request(
                "POST", base + "/login/oauth/access_token",
                body: .form([
                    ("client_id", clientID), ("grant_type", "refresh_token"), ("refresh_token", refreshToken.revealed),
                ])))
        guard answer["access_token"] != nil else {
            throw failure(answer["error"] as? String ?? "", description: answer["error_description"] as? String)
        }
        return try issued(answer, base: base)
    }

    /// The token an answer holds, with its expiry and refresh token when given.
    private func issued(_ answer: [String: Any], base: String) throws -> IssuedToken {
        guard let token = answer["access_token"] as? String, !token.isEmpty,
            !token.contains(where: { $0.isWhitespace || $0.isNewline }),
            token.utf8.count <= CredentialStore.tokenLimit
        else {
            throw APIError(.parse, "\(base) answered with a malformed access_token; nothing stored", api: name)
        }
        let now = Date().timeIntervalSince1970
        let expiresAt = Self.number(answer["expires_in"]).map { Int(now + min($0, 3e9)) }
        // A GitHub App's user token (8 hours) comes with the token that renews it.
        var refresh = answer["refresh_token"] as? String
        if let given = refresh,
            given.isEmpty || given.contains(where: { $0.isWhitespace || $0.isNewline })
                || given.utf8.count > CredentialStore.tokenLimit
        {
            refresh = nil
        }
        return IssuedToken(
            token: Secret(token), expiresAt: expiresAt, scope: answer["scope"] as? String,
            refreshToken: refresh.map(Secret.init),
            refreshExpiresAt: refresh == nil
                ? nil : Self.number(answer["refresh_token_expires_in"]).map { Int(now + min($0, 3e9)) })
    }

    /// The error GitHub named, said as what to do.
    func failure(_ error: String, description: String?) -> APIError {
        let message: String
        switch error {
        case "expired_token":
            message =
                "the one-time code expired before it was entered; nothing stored: run apimacro login \(name) again"
        case "access_denied":
            message = "access was denied in the browser; nothing stored (run apimacro login \(name) again to retry)"
        case "device_flow_disabled":
            message = "the app's device flow is disabled: \(enableHint), then run apimacro login \(name) again"
        case "incorrect_client_credentials":
            message =
                "the server knows no app with this client ID: check \(clientID.variable) (the client ID on the "
                + "app's settings page, not its numeric ID nor a secret)"
        case "":
            message = "the server answered with neither an access_token nor an error; nothing stored"
        default:
            let said = description.map { ": \(Self.printable($0))" } ?? ""
            message =
                "the login failed with \(Self.printable(error))\(said); nothing stored: run apimacro login \(name) again"
        }
        return APIError(.auth, message, api: name)
    }

    /// The JSON object an answer holds; a form-encoded one is read too.
    private func fields(of api: APIClient, _ request: Request) async throws -> [String: Any] {
        var request = request
        // GitHub answers its errors with 200, RFC 8628 with 400: both are read for `error`.
        request.validatesStatus = false
        let response = try await api.send(request)
        let what = request.target.replacing(api.configuration.baseURL, with: "")
        if let object = JSONValue.native(in: response.body, path: []) as? [String: Any],
            object["error"] != nil || (200..<300).contains(response.status)
        {
            return object
        }
        guard (200..<300).contains(response.status) else {
            throw APIError(
                .http, "\(what) answered HTTP \(response.status); nothing stored: try again later",
                status: response.status,
                api: name)
        }
        var object: [String: Any] = [:]
        for pair in response.text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacing("+", with: " ").percentDecoded ?? String($0)
            }
            if parts.count == 2 { object[parts[0]] = parts[1] }
        }
        guard !object.isEmpty else {
            throw APIError(.parse, "\(what) answered with neither JSON nor a form", api: name)
        }
        return object
    }

    /// A number in an answer (`5` or `"5"`), finite and positive, else nil.
    static func number(_ value: Any?) -> Double? {
        let number = JSONValue.number(value) ?? (value as? String).flatMap(Double.init)
        guard let number, number.isFinite, number > 0 else { return nil }
        return number
    }

    /// `text` without control characters, so a server cannot drive the terminal.
    static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter { $0.value >= 0x20 && !(0x7f...0x9f).contains($0.value) }))
    }

    /// `15 minutes`, `30 seconds`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 120 { return "\(whole / 60) minutes" }
        return "\(whole) second\(whole == 1 ? "" : "s")"
    }
}
