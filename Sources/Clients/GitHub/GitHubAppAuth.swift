import Platform
import Synchronization
public import WebAPI

/// Which GitHub App apimacro acts as: `APIMACRO_GITHUB_APP_ID`, `APIMACRO_GITHUB_APP_KEY` (the
/// path of its private key) and, optionally, `APIMACRO_GITHUB_INSTALLATION_ID`.
public struct GitHubAppConfiguration: Sendable, Equatable {
    /// The App's client ID (`Iv23…`) or numeric ID: the JWT's `iss`; nil when only the key is set.
    public var appID: String?
    /// The path of the App's private key (PEM); nil when only the ID is set.
    public var keyPath: String?
    /// The installation to act as; nil to find it (`GitHubAppAuth`).
    public var installationID: Int?

    /// An App configuration.
    public init(appID: String?, keyPath: String?, installationID: Int? = nil) {
        self.appID = appID
        self.keyPath = keyPath
        self.installationID = installationID
    }

    /// The App the view names, or nil when neither its ID nor its key is set.
    public init?(_ view: SettingsView) {
        let appID = view.value(GitHub.appID)
        let keyPath = view.value(GitHub.appKey)
        guard appID != nil || keyPath != nil else { return nil }
        self.init(appID: appID, keyPath: keyPath, installationID: view.value(GitHub.installationID).flatMap { Int($0) })
    }

    /// Why it cannot be used (one of the two is missing), or nil.
    public var problem: String? {
        switch (appID, keyPath) {
        case (nil, _):
            "\(GitHub.appKey.variable) is set but not \(GitHub.appID.variable): a GitHub App needs both"
        case (_, nil):
            "\(GitHub.appID.variable) is set but not \(GitHub.appKey.variable): a GitHub App needs both"
        default: nil
        }
    }

    /// How `auth status` names it: `12345, installation 678; key /path/app.pem`.
    public var details: String {
        var text = appID ?? "?"
        text += installationID.map { ", installation \($0)" } ?? ", installation found on first use"
        if let keyPath { text += "; key \(keyPath)" }
        return text
    }

    /// The key file's text, read under apimacro's one owner rule with `isPrivate` (like
    /// `credentials.json`: a key another user may read is refused).
    ///
    /// - Throws: `APIError` (`.auth`) naming the file and what to run.
    public func keyText() throws -> String {
        if let problem { throw APIError(.auth, problem) }
        guard let keyPath else { throw APIError(.auth, "no GitHub App key") }
        let url = URL(fileURLWithPath: keyPath)
        guard
            let loaded = try SecureFile.load(
                url, followingLinks: true, refuse: { SecureFile.exposure($0, path: keyPath, isPrivate: true) })
        else {
            throw APIError(.auth, "\(GitHub.appKey.variable) names \(keyPath), which does not exist")
        }
        return String(decoding: loaded.bytes, as: UTF8.self)
    }
}

/// A GitHub App's installation token, made and renewed without the macro noticing: apimacro
/// signs the App's JWT itself (RS256, `iat` 60 s in the past, `exp` 9 minutes ahead:
/// GitHub allows at most 10), exchanges it for an installation token
/// (`POST /app/installations/{id}/access_tokens`) and sends that token to REST and GraphQL
/// alike, making a new one `refreshMargin` seconds before `expires_at` (GitHub's are good for
/// an hour), in `map` and across a long macro.
///
/// The installation is `APIMACRO_GITHUB_INSTALLATION_ID`, else the one GitHub names for the
/// repository, organisation or user of the first request (`GET /repos/{o}/{r}/installation`,
/// `/orgs/{org}/installation`, `/users/{u}/installation`), else the App's only one
/// (`GET /app/installations`); then it stays for the run. Shapes as PyGithub's recordings of
/// GitHub (tests/ReplayData/GithubIntegration.*.txt) and GitHub's REST docs
/// (https://docs.github.com/rest/apps/apps).
///
/// The App's requests go straight to the network (never the cache, a recording or a replay:
/// their answers hold the token); the JWT is this client's credential for them only, and
/// every JWT and token made is handed to `learned` for redaction.
public final class GitHubAppAuth: CredentialProvider {
    /// What the installation token is made from.
    public let app: GitHubAppConfiguration
    /// The App's own requests (JWT-authenticated), straight to the network; nil when nothing may
    /// be sent (`--offline`).
    let api: APIClient?
    let baseURL: String
    let now: @Sendable () -> Double
    let learned: @Sendable (String) -> Void
    private let flight = SingleFlight<Credential>()
    private let state = Mutex(State())

    /// Renew this many seconds before `expires_at`.
    public static let refreshMargin: Double = 300
    /// `iat` is this far in the past (clocks drift; GitHub's advice).
    static let issuedAtSkew: Double = 60
    /// `exp` is this far ahead of now (GitHub refuses more than 600 s).
    static let lifetime: Double = 540

    /// What is known so far.
    public struct State: Sendable {
        /// The installation in use, once known.
        public var installationID: Int?
        /// Its account's login, when GitHub named it.
        public var account: String?
        /// The token and when it expires (epoch seconds).
        var token: (secret: Secret, expiresAt: Double)?
        /// Tokens made so far.
        public var minted = 0
        /// When the token in use expires (epoch seconds).
        public var expiresAt: Double? { token?.expiresAt }
    }

    /// - Parameters:
    ///   - app: the App.
    ///   - configuration: the GitHub client's settings (base URL, headers, timeout).
    ///   - network: what the App's requests go through (never a cache or a recording); nil when
    ///     nothing may be sent.
    ///   - log: the exchange log (`-v`).
    ///   - redactor: what to redact besides the JWT.
    ///   - now: the clock, epoch seconds.
    ///   - learned: told every JWT and token made.
    public init(
        app: GitHubAppConfiguration, configuration: GitHubConfiguration, network: (any Transport)?, log: ExchangeLog,
        redactor: Redactor, now: @escaping @Sendable () -> Double, learned: @escaping @Sendable (String) -> Void
    ) {
        self.app = app
        baseURL =
            configuration.baseURL.hasSuffix("/") ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        var rest = configuration.client
        rest.credential = nil
        api = network.map { APIClient(configuration: rest, transport: $0, log: log, redactor: redactor) }
        self.now = now
        self.learned = learned
    }

    /// What is known so far (the installation, the token's expiry, how many were made).
    public var known: State { state.withLock { $0 } }

    public func credential(for url: String) async throws -> Credential? {
        if let token = usable() { return .bearer(token) }
        return try await flight.run { [self] in
            if let token = usable() { return .bearer(token) }
            return .bearer(try await mint(for: url))
        }
    }

    /// The token, if there is one that is not due for renewal.
    private func usable() -> Secret? {
        let moment = now()
        return state.withLock { state in
            guard let token = state.token, moment < token.expiresAt - Self.refreshMargin else { return nil }
            return token.secret
        }
    }

    /// Makes a new installation token (finding the installation first if need be).
    private func mint(for url: String) async throws -> Secret {
        guard let api else {
            throw APIError(
                .offline, "cannot make a GitHub App installation token offline (nothing may be sent)", api: GitHub.name)
        }
        let key = try JSONWebToken.RSAKey(
            pem: try app.keyText(), source: "\(GitHub.appKey.variable) (\(app.keyPath ?? ""))")
        let jwt = try signedJWT(key)
        learned(jwt)
        api.setCredential(.bearer(Secret(jwt)))
        let installation = try await installation(for: url, api: api)
        let answer = try await send(
            Request("POST", "/app/installations/\(installation.id)/access_tokens"), api: api,
            doing: "make an installation token for installation \(installation.id)")
        guard let token = JSONPath.string(in: answer.body, path: ["token"]), !token.isEmpty,
            let expiresText = JSONPath.string(in: answer.body, path: ["expires_at"]),
            let expiresAt = Self.epoch(iso8601: expiresText)
        else {
            throw APIError(
                .auth, "GitHub's answer to the installation token request holds no token and expires_at",
                status: answer.status, url: answer.url, api: GitHub.name)
        }
        // A token the server chose becomes a secret to redact everywhere: one as short as
        // `http`, or holding URL syntax, would rewrite every URL and line apimacro prints.
        guard Self.looksLikeToken(token) else {
            throw APIError(
                .auth,
                "GitHub's answer to the installation token request holds no usable token (\(token.utf8.count) "
                    + "characters; a token is \(Self.tokenLength.lowerBound) to \(Self.tokenLength.upperBound) letters, "
                    + "digits and _ - .): check \(GitHub.url.variable) names GitHub's API",
                status: answer.status, url: answer.url, api: GitHub.name)
        }
        learned(token)
        let secret = Secret(token)
        state.withLock { state in
            state.installationID = installation.id
            state.account = installation.account ?? state.account
            state.token = (secret, expiresAt)
            state.minted += 1
        }
        return secret
    }

    /// How long an installation token may be: GitHub's are 40 characters (`ghs_` and 36), and
    /// GitHub announced longer ones.
    static let tokenLength = 20...4096

    /// Whether `token` looks like a token GitHub issues: `tokenLength` characters, each an ASCII
    /// letter or digit, `_`, `-` or `.` (no URL syntax: `/`, `:`, `?`, `&`, `=`, `%`, `@`, `#`).
    static func looksLikeToken(_ token: String) -> Bool {
        tokenLength.contains(token.utf8.count)
            && token.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
    }

    /// The App's JWT, as GitHub asks for it.
    func signedJWT(_ key: JSONWebToken.RSAKey) throws -> String {
        let moment = Int(now())
        let appID = app.appID ?? ""
        // A numeric ID is a JSON number; a client ID a string (GitHub takes either as `iss`).
        let issuer = Int(appID).map(String.init) ?? "\"\(appID)\""
        let claims =
            #"{"iat":\#(moment - Int(Self.issuedAtSkew)),"exp":\#(moment + Int(Self.lifetime)),"iss":\#(issuer)}"#
        return try JSONWebToken.rs256(claims: claims, key: key)
    }

    /// The installation to act as: the configured one, the one GitHub names for the owner `url`
    /// names, or the App's only one.
    private func installation(for url: String, api: APIClient) async throws -> (id: Int, account: String?) {
        if let known = state.withLock({ $0.installationID }) { return (known, nil) }
        if let configured = app.installationID { return (configured, nil) }
        if let path = Self.installationPath(for: url, baseURL: baseURL) {
            do {
                let answer = try await send(Request("GET", path), api: api, doing: "find the App's installation")
                if let id = JSONValue.native(in: answer.body, path: ["id"]) as? Int {
                    return (id, JSONPath.string(in: answer.body, path: ["account", "login"]))
                }
            } catch let error as APIError where error.kind == .notFound {
                // Not installed there: the App's only installation may still be the one.
            }
        }
        let answer = try await send(
            Request("GET", "/app/installations", query: [("per_page", "100")]), api: api,
            doing: "list the App's installations")
        let listed = (JSONValue.native(in: answer.body, path: []) as? [[String: Any]]) ?? []
        let installations = listed.compactMap { entry -> (id: Int, account: String?)? in
            guard let id = entry["id"] as? Int else { return nil }
            return (id, (entry["account"] as? [String: Any])?["login"] as? String)
        }
        guard installations.count == 1, let only = installations.first else {
            let names = installations.map { "\($0.id) (\($0.account ?? "?"))" }.joined(separator: ", ")
            throw APIError(
                .auth,
                installations.isEmpty
                    ? "the GitHub App \(app.appID ?? "") has no installation: install it on an account first"
                    : "the GitHub App \(app.appID ?? "") has \(installations.count) installations (\(names)): set "
                        + "\(GitHub.installationID.variable), or call first an endpoint under /repos/OWNER/REPO, "
                        + "/orgs/ORG or /users/USER", api: GitHub.name)
        }
        return only
    }

    /// One of the App's requests; a JWT GitHub refuses (401) is an `AuthError` saying what to check.
    private func send(_ request: Request, api: APIClient, doing what: String) async throws -> Response {
        var request = request
        // Never stored or answered by a cache, whatever is in front of the network.
        request.headers.append(("Cache-Control", "no-store"))
        do {
            return try await api.send(request)
        } catch let error as APIError where error.kind == .unauthorized {
            let said = error.message.firstRange(of: "Unauthorized: ").map { String(error.message[$0.upperBound...]) }
            throw APIError(
                .auth,
                "GitHub refused the JWT of GitHub App \(app.appID ?? "") to \(what)"
                    + (said.map { " (\($0))" } ?? "") + ": check that \(GitHub.appID.variable) is the App's ID and "
                    + "\(GitHub.appKey.variable) (\(app.keyPath ?? "")) its private key",
                status: error.status, url: error.url, api: GitHub.name, body: error.body)
        }
    }

    /// `/repos/{o}/{r}/installation`, `/orgs/{org}/installation` or `/users/{u}/installation`
    /// for a request to `url` under `baseURL`, or nil when its path names no owner.
    public static func installationPath(for url: String, baseURL: String) -> String? {
        guard url.hasPrefix(baseURL + "/") else { return nil }
        let path = url.dropFirst(baseURL.count).prefix { $0 != "?" && $0 != "#" }
        let segments = path.split(separator: "/").map(String.init)
        guard segments.count >= 2, !segments[1].isEmpty else { return nil }
        switch segments[0] {
        case "repos" where segments.count >= 3: return "/repos/\(segments[1])/\(segments[2])/installation"
        case "orgs": return "/orgs/\(segments[1])/installation"
        case "users": return "/users/\(segments[1])/installation"
        default: return nil
        }
    }

    /// `2024-11-25T01:00:02Z` (or with fractional seconds) as epoch seconds.
    static func epoch(iso8601 text: String) -> Double? {
        UTCDates.epoch(iso8601: text)
    }

    /// The App for `auth status`: named with its installation and key, when the key can be read
    /// and is an RSA key; otherwise the reason.
    ///
    /// Read only when asked (`isDeferred`), never as a token by the configuration.
    static let source = CredentialSource(
        name: "GitHub App", isDeferred: true,
        lookUp: { view in
            guard let app = GitHubAppConfiguration(view) else { return CredentialLookup() }
            do {
                let text = try app.keyText()
                _ = try JSONWebToken.RSAKey(pem: text, source: "\(GitHub.appKey.variable) (\(app.keyPath ?? ""))")
                return CredentialLookup(secret: Secret(text), detail: app.details)
            } catch {
                // The App is what the client uses, so no later source is in use either.
                return CredentialLookup(
                    problem: "GitHub App \(app.details): \(SystemErrorText.describe(error))", isFinal: true)
            }
        })
}
