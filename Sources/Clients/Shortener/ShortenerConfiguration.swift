import Platform
public import WebAPI

/// Settings of the shortener client (SPEC §2): the backend, where its API is, the credential,
/// Bitly's group and the cap on requests in flight.
public struct ShortenerConfiguration: Sendable {
    /// `APIMACRO_SHORTENER`, else the one the URL alone names (Google's `/urlshortener/v1`), else Bitly.
    public var backend: ShortenerBackend
    /// `APIMACRO_SHORTENER_URL`, else the backend's default (`ShortenerBackend.defaultBaseURL`);
    /// empty for Shlink without one (every call then says to set it).
    public var baseURL: String
    /// Bitly's `APIMACRO_SHORTENER_TOKEN`, Shlink's or Google's `APIMACRO_SHORTENER_KEY`, else a
    /// stored login.
    public var credential: Secret?
    /// `APIMACRO_SHORTENER_GROUP`: the Bitly group to shorten in and list; nil for the
    /// account's default.
    public var group: String?
    /// `APIMACRO_SHORTENER_MAX_CONCURRENCY`, else the backend's default (Bitly: 5; nil: none).
    public var maxConcurrency: Int?
    /// Why no call can be made (an unknown backend name; Shlink without a URL), or nil.
    public var problem: APIError?
    /// Each request's timeout in seconds (`APIMACRO_REQUEST_TIMEOUT`; default 30).
    public var timeout: Double
    /// The longest rate-limit wait in seconds (`APIMACRO_MAX_WAIT`; default 60).
    public var maxWait: Double
    /// The label of the stored account whose credential is used, when it is one.
    public var account: String?

    /// A configuration for `backend`; an unset `baseURL` is the backend's default.
    public init(
        backend: ShortenerBackend = .standard, baseURL: String? = nil, credential: Secret? = nil, group: String? = nil,
        maxConcurrency: Int? = nil, timeout: Double = 30, maxWait: Double = 60
    ) {
        self.backend = backend
        self.baseURL = baseURL ?? backend.defaultBaseURL ?? ""
        self.credential = credential
        self.group = group
        self.maxConcurrency = maxConcurrency ?? backend.defaultMaxConcurrency
        self.timeout = timeout
        self.maxWait = maxWait
        if self.baseURL.isEmpty {
            problem = APIError(
                .invalidRequest,
                "shortener: \(backend.title) has no default server: set \(Shortener.url.variable) "
                    + "(or [shortener] url in config.toml) to your server's REST API, such as \(backend.service.exampleBaseURL)",
                api: Shortener.name)
        }
    }

    /// Reads `Shortener`'s settings (SPEC §2) from `view`; the stored login is the fallback credential.
    public init(_ view: SettingsView) {
        let backend = ShortenerBackend.selected(in: view)
        let found = Shortener.descriptor.credential(in: view)
        self.init(
            backend: backend ?? .standard, baseURL: view.value(Shortener.url),
            credential: found?.secret, group: view.value(Shortener.group),
            maxConcurrency: view.value(Shortener.maxConcurrency).flatMap {
                Int($0.trimmingWhitespace())
            },
            timeout: view.requestTimeout, maxWait: view.maxWait)
        account = found?.source.isStoredLogin == true ? view.account : nil
        if backend == nil, let name = view.value(Shortener.backend) {
            problem = APIError(
                .invalidRequest, "\(Shortener.backend.variable): \(ShortenerBackend.problem(name))", api: Shortener.name
            )
        }
    }

    /// The client's pipeline configuration: the backend's credential and error readers, and
    /// the cap on requests in flight.
    public var client: ClientConfiguration {
        let backend = self.backend
        var configuration = ClientConfiguration(
            name: Shortener.name, baseURL: baseURL, credential: credential.map { backend.credential($0) },
            defaultHeaders: backend.service.defaultHeaders, timeout: timeout, maxWait: maxWait,
            errorMessage: { backend.service.errorMessage($0) }, errorKind: { backend.service.errorKind($0) })
        configuration.maxConcurrentRequests = maxConcurrency
        configuration.account = account
        return configuration
    }
}
