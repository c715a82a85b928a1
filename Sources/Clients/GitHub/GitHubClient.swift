public import Platform
/// Settings of the GitHub client (SPEC §2).
public import WebAPI

public struct GitHubConfiguration: Sendable {
    /// `APIMACRO_GITHUB_URL`, default `https://api.github.com`.
    public var baseURL: String
    /// `APIMACRO_GITHUB_TOKEN`, else `GITHUB_TOKEN`, else `gh`'s variables; optional.
    public var token: Secret?
    /// Where `token` came from (`env GITHUB_TOKEN`), nil without one.
    public var tokenSource: String?
    /// The label of the stored account whose token is used, when it is one.
    public var account: String?
    /// When no source read at once holds a token: the settings that `gh`'s `hosts.yml` and
    /// `gh auth token` are read from when the first request needs a token
    /// (`GitHubDeferredCredential`); nil to look no further.
    public var deferredLookup: SettingsView?
    /// The GitHub App to act as (`APIMACRO_GITHUB_APP_ID` and `_APP_KEY`); when set, no token
    /// variable or `gh` source is used.
    public var app: GitHubAppConfiguration?
    /// `X-GitHub-Api-Version`: `APIMACRO_GITHUB_API_VERSION`, default 2022-11-28.
    public var apiVersion: String
    /// Per-request timeout, seconds.
    ///
    /// Default 30.
    public var timeout: Double
    /// `APIMACRO_MAX_WAIT`: the longest rate-limit wait, seconds.
    ///
    /// Default 60.
    public var maxWait: Double
    /// `APIMACRO_GITHUB_GRAPHQL_URL`: the GraphQL endpoint, when it is not where
    /// `baseURL` implies (see `graphQLEndpoint`); nil to derive it.
    public var graphQLURL: String?
    /// `APIMACRO_GITHUB_PACE`: whether requests are paced to GitHub's secondary limits.
    ///
    /// Default true.
    public var paced = true

    public static let defaultBaseURL = "https://api.github.com"
    public static let defaultAPIVersion = "2022-11-28"

    public init(
        baseURL: String = GitHubConfiguration.defaultBaseURL, token: Secret? = nil,
        apiVersion: String = GitHubConfiguration.defaultAPIVersion, timeout: Double = 30, maxWait: Double = 60,
        graphQLURL: String? = nil
    ) {
        self.baseURL = baseURL
        self.token = token
        self.apiVersion = apiVersion
        self.timeout = timeout
        self.maxWait = maxWait
        self.graphQLURL = graphQLURL
    }

    /// Reads `GitHub`'s settings (SPEC §2) from `view` over these defaults; the sources read
    /// on first use are not read now (`deferredLookup`).
    public init(_ view: SettingsView) {
        let app = GitHubAppConfiguration(view)
        let found = app == nil ? GitHub.descriptor.lookUp(in: view, deferred: false).found : nil
        self.init(
            baseURL: view.value(GitHub.url) ?? Self.defaultBaseURL, token: found?.secret,
            apiVersion: view.value(GitHub.apiVersion) ?? Self.defaultAPIVersion,
            timeout: view.requestTimeout, maxWait: view.maxWait, graphQLURL: view.value(GitHub.graphQLURL))
        self.app = app
        paced = view.value(GitHub.pace) != "off"
        tokenSource = found?.source.name
        account = found?.source.isStoredLogin == true ? view.account : nil
        if app == nil, found == nil, GitHubCLI.sources.contains(where: \.isDeferred) { deferredLookup = view }
    }

    /// The client configuration for the pipeline.
    public var client: ClientConfiguration {
        var configuration = ClientConfiguration(
            name: GitHub.name, baseURL: baseURL, credential: token.map { .bearer($0) },
            defaultHeaders: [("Accept", "application/vnd.github+json"), ("X-GitHub-Api-Version", apiVersion)],
            timeout: timeout, maxWait: maxWait, errorMessage: GitHubErrors.message)
        configuration.errorList = GitHubErrors.details
        configuration.account = account
        return configuration
    }
}

/// The GitHub client: the router's requests through the pipeline.
public final class GitHubClient: BuiltClient {
    /// The pipeline connection (base URL, credential, rate limit).
    public let api: APIClient
    public let configuration: GitHubConfiguration

    /// The GraphQL endpoint's connection: the same token, sent only to that endpoint's host
    /// (over https or to loopback), and the same rate-limit memory as `api`.
    public let graphQLAPI: APIClient

    /// When the token expires, as GitHub's answers say (`github.token_expires_at`).
    public let tokenExpiry: GitHubTokenExpiry

    /// The token read on first use from `gh`'s files or `gh` itself, when no variable held one.
    public let deferred: GitHubDeferredCredential?
    /// The GitHub App's installation tokens, when the configuration names an App.
    public let appAuth: GitHubAppAuth?

    /// A client on `transport`.
    ///
    /// - Parameters:
    ///   - configuration: its settings.
    ///   - transport: what sends its requests (the cache, recording and replay in front of the network).
    ///   - log: the exchange log (`-v`).
    ///   - redactor: what to redact besides its own credentials.
    ///   - warn: prints a warning line on stderr (the token's expiry, a `gh` that did not answer).
    ///   - learned: told every credential found or made later, so what apimacro prints redacts it.
    ///   - appNetwork: what a GitHub App's own requests go through: the network itself, never a
    ///     cache or a recording (their answers hold the token); nil when nothing may be sent.
    ///   - now: the clock, epoch seconds (when an App's token is due).
    ///   - pacer: what paces the requests to GitHub's secondary limits (default: GitHub's rules
    ///     on the real clock; tests give one with their own clock).
    ///   - storedLogin: renews the token `apimacro login github` stored, when that is due.
    public init(
        configuration: GitHubConfiguration, transport: any Transport, log: ExchangeLog, redactor: Redactor,
        warn: @escaping @Sendable (String) -> Void = { _ in }, learned: @escaping @Sendable (String) -> Void = { _ in },
        appNetwork: (any Transport)? = nil, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        pacer: SecondaryPacer? = nil, storedLogin: GitHubLoginRefresh? = nil
    ) {
        self.configuration = configuration
        let rateLimits = RateLimitMemory()
        let expiry = GitHubTokenExpiry(warn: warn)
        tokenExpiry = expiry
        deferred = configuration.deferredLookup.map { view in
            GitHubDeferredCredential(
                view: view, sources: GitHubCLI.sources.filter(\.isDeferred), warn: warn, learned: learned)
        }
        appAuth = configuration.app.map { app in
            GitHubAppAuth(
                app: app, configuration: configuration, network: appNetwork, log: log, redactor: redactor, now: now,
                learned: learned)
        }
        let provider: (any CredentialProvider)? = appAuth ?? storedLogin ?? deferred
        var rest = configuration.client
        var graphQL = configuration.graphQLClient
        // One pace for both endpoints: GitHub counts them together.
        if configuration.paced {
            let pacer = pacer ?? SecondaryPacer(limits: GitHubSecondaryLimits.limits)
            rest.pacer = pacer
            graphQL.pacer = pacer
        }
        // An App's installation token is renewed before it expires: its end is never news.
        if appAuth == nil {
            rest.watch = expiry.watch
            graphQL.watch = expiry.watch
        }
        api = APIClient(
            configuration: rest, transport: transport, log: log, redactor: redactor, rateLimits: rateLimits,
            provider: provider)
        graphQLAPI = APIClient(
            configuration: graphQL, transport: transport, log: log, redactor: redactor, rateLimits: rateLimits,
            provider: provider)
    }

    /// When the token in use expires (epoch seconds): the App's installation token's, else what
    /// GitHub's last answer said; nil when unknown.
    public var tokenExpiresAt: Double? { appAuth.map { $0.known.expiresAt } ?? tokenExpiry.expiresAt }

    /// Whether requests carry a token: one from the settings, one `gh` gave, or an App's.
    public var hasToken: Bool { configuration.token != nil || deferred?.source != nil || appAuth != nil }

    /// GitHub lists link their pages with `Link` headers.
    public static let pagination = Pagination.linkHeader

    /// GitHub's pages: `Link` headers, each page the list, 100 items a page asked for.
    public static let paging = Paging(pagination, pageSize: ("per_page", String(GitHubRouter.pageSize)))

    /// GitHub's pages (`GitHubClient.paging`).
    public var paging: Paging { Self.paging }

    /// Sends one endpoint's request.
    public func send(_ route: GitHubRouter) async throws -> Response {
        try await api.send(route.request)
    }

    /// The rate limit as last seen (REST or GraphQL, whichever answered last).
    public var rateLimit: RateLimitInfo? { api.rateLimit }
}
