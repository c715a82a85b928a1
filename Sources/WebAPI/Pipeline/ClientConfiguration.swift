/// What one API client needs: its name, base URL, credential, defaults and
/// limits.
///
/// Resolved once from settings and passed down.
public struct ClientConfiguration: Sendable {
    /// The client's name in errors and logs (`github`).
    public var name: String
    /// The base URL requests are relative to, without a trailing slash.
    public var baseURL: String
    /// The credential, sent only to the base URL's host over https or loopback.
    public var credential: Credential?
    /// Headers sent with every request (a request's own headers win).
    public var defaultHeaders: [(String, String)]
    /// Per-request timeout in seconds.
    ///
    /// Default 30.
    public var timeout: Double
    /// The longest rate-limit wait before `RateLimited` is raised instead.
    ///
    /// Default 60.
    public var maxWait: Double
    /// At most this many retries of an idempotent request.
    ///
    /// Default 3.
    public var maxRetries: Int
    /// Finds the human message in an error body (GitHub: `message`).
    public var errorMessage: @Sendable (Response) -> String?
    /// Decides the error kind from the body when the status alone does not
    /// (Instagram names `OAuthAccessTokenException` in its envelope); nil
    /// means "by status".
    public var errorKind: @Sendable (Response) -> APIError.Kind?
    /// Finds the API's list of what was wrong in an error body, as JSON text (GitHub: the
    /// `errors` array of a 422); nil means none.
    ///
    /// It becomes `APIError.errorList`.
    public var errorList: @Sendable (Response) -> String? = { _ in nil }
    /// Sees every response the client gets, errors included (`ResponseWatchStage`); nil for
    /// none (GitHub reads its token's expiry from a header).
    public var watch: (@Sendable (Response) -> Void)?
    /// Whether the client keeps the rate-limit headers of its last response (`rateLimit`,
    /// `github.rate_limit`); a client nobody asks (`apimacro.request`) leaves the stage out.
    ///
    /// Default true.
    public var remembersRateLimit = true
    /// At most this many of the client's requests in flight at once (`ConcurrencyLimitStage`);
    /// nil for no cap.
    ///
    /// Default nil.
    public var maxConcurrentRequests: Int?
    /// The client's own limits held in this process (`LocalLimitStage`: a plugin's `[limits]`).
    ///
    /// Nil for none. Without shared state, `APIMACRO_MAX_RATE` and `APIMACRO_MAX_CONCURRENCY`
    /// fill in what these leave unset.
    ///
    /// Default nil.
    public var limits: LocalLimits?
    /// The facts of an error body besides its message, as attributes of the exception
    /// (Instagram's Graph API: `code`, `subcode`, `fbtrace_id`).
    ///
    /// Default: none.
    public var errorDetails: @Sendable (Response) -> [APIError.Detail] = { _ in [] }
    /// Whether an error answer says it is worth sending again (the Graph API's `is_transient`):
    /// an idempotent request is then retried as after a 503.
    ///
    /// Default: never (only the statuses of `RetryPolicy` are retried).
    public var isTransient: @Sendable (Response) -> Bool = { _ in false }
    /// For an API that reports how much of its quota is used (Meta's `X-App-Usage`) and names its
    /// rate limits by an error code: the rule `UsageStage` reads answers with; nil for others.
    public var usage: UsageRule?
    /// Whether the API writes the client's credential into its answers (Meta's `paging` links
    /// carry `access_token`): the body a caller gets has it replaced by `REDACTED`.
    ///
    /// Default false.
    public var redactsEchoedCredential = false
    /// How the pipeline waits (rate limits, usage, retries' backoff); tests pass one that
    /// records the wait and returns at once.
    ///
    /// Default: `Task.sleep`.
    public var sleep: @Sendable (Double) async throws -> Void = RetryPolicy.taskSleep
    /// Paces the client's sends to its API's secondary limits and recognises the answers that
    /// say one was exceeded (`PaceStage`, `RateLimitPolicy`); nil for an API that declares none.
    ///
    /// One pacer is shared by the clients of one API (GitHub's REST and GraphQL).
    public var pacer: SecondaryPacer?
    /// The label of the stored account whose credential the client sends (`work`), named by
    /// `-v` and the HAR file (never the credential); nil when the credential is no stored account.
    public var account: String?
    /// The client's own check before each call is sent (`GateStage`: Bitly's plan limits); nil
    /// for none.
    ///
    /// Default nil.
    public var gate: (any RequestGate)?

    public init(
        name: String, baseURL: String, credential: Credential? = nil, defaultHeaders: [(String, String)] = [],
        timeout: Double = 30, maxWait: Double = 60, maxRetries: Int = 3,
        errorMessage: @escaping @Sendable (Response) -> String? = ClientConfiguration.jsonMessage,
        errorKind: @escaping @Sendable (Response) -> APIError.Kind? = { _ in nil }
    ) {
        self.name = name
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.credential = credential
        self.defaultHeaders = defaultHeaders
        self.timeout = timeout
        self.maxWait = maxWait
        self.maxRetries = maxRetries
        self.errorMessage = errorMessage
        self.errorKind = errorKind
    }

    /// The `message` member of a JSON error body, as GitHub and many APIs send.
    public static let jsonMessage: @Sendable (Response) -> String? = { response in
        JSONPath.string(in: response.body, path: ["message"])
    }
}

extension ClientConfiguration {
    /// This configuration with `limits` (`LocalLimitStage`).
    public func with(limits: LocalLimits?) -> ClientConfiguration {
        var configuration = self
        configuration.limits = limits
        return configuration
    }

    /// This configuration naming the stored account `account` (`-v`, HAR).
    public func with(account: String?) -> ClientConfiguration {
        var configuration = self
        configuration.account = account
        return configuration
    }
}
