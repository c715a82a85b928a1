/// Settings of the GitHub client (SPEC §2).
import WebAPI

public struct GitHubConfiguration: Sendable {
    /// `APIMACRO_GITHUB_URL`, default `https://api.github.com`.
    public var baseURL: String
    /// `APIMACRO_GITHUB_TOKEN`, else `GITHUB_TOKEN`; optional.
    public var token: Secret?
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

    /// Reads `GitHub`'s settings (SPEC §2) from `view` over these defaults.
    public init(_ view: SettingsView) {
        self.init(
            baseURL: view.value(GitHub.url) ?? Self.defaultBaseURL,
            token: GitHub.descriptor.credential(in: view)?.secret,
            apiVersion: view.value(GitHub.apiVersion) ?? Self.defaultAPIVersion,
            timeout: view.requestTimeout, maxWait: view.maxWait, graphQLURL: view.value(GitHub.graphQLURL))
    }

    /// The client configuration for the pipeline.
    public var client: ClientConfiguration {
        var configuration = ClientConfiguration(
            name: GitHub.name, baseURL: baseURL, credential: token.map { .bearer($0) },
            defaultHeaders: [("Accept", "application/vnd.github+json"), ("X-GitHub-Api-Version", apiVersion)],
            timeout: timeout, maxWait: maxWait, errorMessage: GitHubErrors.message)
        configuration.errorDetails = GitHubErrors.details
        return configuration
    }
}

/// The GitHub client: the router's requests through the pipeline.
public final class GitHubClient: Sendable {
    /// The pipeline connection (base URL, credential, rate limit).
    public let api: APIClient
    public let configuration: GitHubConfiguration

    /// The GraphQL endpoint's connection: the same token, sent only to that endpoint's host
    /// (over https or to loopback), and the same rate-limit memory as `api`.
    public let graphQLAPI: APIClient

    /// When the token expires, as GitHub's answers say (`github.token_expires_at`).
    public let tokenExpiry: GitHubTokenExpiry

    /// A client on `transport`.
    ///
    /// - Parameters:
    ///   - configuration: its settings.
    ///   - transport: what sends its requests (the cache, recording and replay in front of the network).
    ///   - log: the exchange log (`-v`).
    ///   - redactor: what to redact besides its own credentials.
    ///   - warn: prints a warning line on stderr (the token's expiry).
    public init(
        configuration: GitHubConfiguration, transport: any Transport, log: ExchangeLog, redactor: Redactor,
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.configuration = configuration
        let rateLimits = RateLimitMemory()
        let expiry = GitHubTokenExpiry(warn: warn)
        tokenExpiry = expiry
        var rest = configuration.client
        rest.watch = expiry.watch
        var graphQL = configuration.graphQLClient
        graphQL.watch = expiry.watch
        api = APIClient(
            configuration: rest, transport: transport, log: log, redactor: redactor, rateLimits: rateLimits)
        graphQLAPI = APIClient(
            configuration: graphQL, transport: transport, log: log, redactor: redactor, rateLimits: rateLimits)
    }

    /// GitHub lists link their pages with `Link` headers.
    public static let pagination = Pagination.linkHeader

    /// Sends one endpoint's request.
    public func send(_ route: GitHubRouter) async throws -> Response {
        try await api.send(route.request)
    }

    /// The rate limit as last seen (REST or GraphQL, whichever answered last).
    public var rateLimit: RateLimitInfo? { api.rateLimit }
}
