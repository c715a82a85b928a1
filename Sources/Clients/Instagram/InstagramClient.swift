import Platform
public import WebAPI

/// Settings of the legacy Instagram v1 client (SPEC §3: a base URL ending in `/v1`).
public struct InstagramConfiguration: Sendable {
    /// `APIMACRO_INSTAGRAM_URL`, default `https://api.instagram.com/v1`.
    public var baseURL: String
    /// `APIMACRO_INSTAGRAM_TOKEN`, else the stored login.
    public var token: Secret?
    /// `APIMACRO_INSTAGRAM_CLIENT_ID`: the registered app's client id (needed to log in).
    public var clientID: String?
    /// `APIMACRO_INSTAGRAM_REDIRECT_URI`: the registered redirect URI.
    ///
    /// Default `http://127.0.0.1:8765/callback`.
    public var redirectURI: String
    /// `APIMACRO_INSTAGRAM_AUTHORIZE_URL`; default: the base URL without `/v1`, plus `/oauth/authorize/`.
    public var authorizeURL: String
    public var timeout: Double
    public var maxWait: Double

    public static let defaultBaseURL = "https://api.instagram.com/v1"

    public init(
        baseURL: String = InstagramConfiguration.defaultBaseURL, token: Secret? = nil, clientID: String? = nil,
        redirectURI: String = OAuthImplicitFlow.defaultRedirectURI, authorizeURL: String? = nil,
        timeout: Double = 30, maxWait: Double = 60
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.authorizeURL = authorizeURL ?? Self.authorizeURL(forBase: baseURL)
        self.timeout = timeout
        self.maxWait = maxWait
    }

    /// Reads `Instagram`'s settings (SPEC §2) from `view`; the stored login is the fallback token.
    public init(_ view: SettingsView) {
        self.init(
            baseURL: view.value(Instagram.url) ?? Self.defaultBaseURL,
            token: Instagram.descriptor.credential(in: view)?.secret,
            clientID: view.value(Instagram.login.clientID),
            redirectURI: view.value(Instagram.login.redirectURI) ?? OAuthImplicitFlow.defaultRedirectURI,
            authorizeURL: view.value(Instagram.login.authorizeURL), timeout: view.requestTimeout,
            maxWait: view.maxWait)
    }

    /// The authorize URL of the API at `baseURL`: its root (without `/v1`), plus `/oauth/authorize/`.
    public static func authorizeURL(forBase baseURL: String) -> String {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        let root = base.hasSuffix("/v1") ? String(base.dropLast(3)) : base
        return root + "/oauth/authorize/"
    }

    /// The OAuth implicit-grant flow for this app, or `AuthError` when no client id is configured.
    public func loginFlow() throws -> OAuthImplicitFlow {
        try Instagram.login.flow(clientID: clientID, redirectURI: redirectURI, authorizeURL: authorizeURL)
    }

    /// The pipeline configuration: the token travels as `access_token`, as v1 requires.
    public var client: ClientConfiguration {
        ClientConfiguration(
            name: Instagram.name, baseURL: baseURL, credential: token.map { .query(name: "access_token", value: $0) },
            defaultHeaders: [("Accept", "application/json")], timeout: timeout, maxWait: maxWait,
            errorMessage: InstagramEnvelope.message,
            errorKind: { response in
                InstagramEnvelope.kind(
                    errorType: JSONPath.string(in: response.body, path: InstagramEnvelope.errorTypePath),
                    code: JSONPath.string(in: response.body, path: InstagramEnvelope.codePath).flatMap { Int($0) })
            })
    }
}

/// The Instagram v1 client.
public final class InstagramClient: BuiltClient {
    public let api: APIClient
    public let configuration: InstagramConfiguration

    public init(configuration: InstagramConfiguration, transport: any Transport, log: ExchangeLog, redactor: Redactor) {
        self.configuration = configuration
        api = APIClient(configuration: configuration.client, transport: transport, log: log, redactor: redactor)
    }

    /// v1 lists link pages with `pagination.next_url` in the body.
    public static let pagination = Pagination.nextURL(path: InstagramEnvelope.nextURLPath)

    /// v1's pages: `pagination.next_url`, the items in the envelope's `data`.
    public static let paging = Paging(pagination, items: InstagramEnvelope.dataPath)

    /// v1's pages (`InstagramClient.paging`).
    public var paging: Paging { Self.paging }

    /// Whether a token is set (from the environment or a login).
    public var loggedIn: Bool { api.credential != nil }

    /// Uses `token` from now on (after a login).
    public func setToken(_ token: Secret?) {
        api.setCredential(token.map { .query(name: "access_token", value: $0) })
    }

    /// `AuthError` unless a token is set.
    public func requireToken() throws {
        guard loggedIn || !api.needsCredentials else {
            throw APIError(
                .auth, "instagram needs a login: run `apimacro login instagram`, or set APIMACRO_INSTAGRAM_TOKEN",
                api: "instagram")
        }
    }

    /// Sends one endpoint's request (a token is required).
    public func send(_ request: Request) async throws -> Response {
        try requireToken()
        return try await api.send(request)
    }

    /// The OAuth flow for this app, or `AuthError` when no client id is configured.
    public func loginFlow() throws -> OAuthImplicitFlow {
        try configuration.loginFlow()
    }
}
