import Platform
public import WebAPI

/// Settings of the Instagram API with Instagram Login (graph.instagram.com), the Instagram
/// client's default backend (SPEC §2; a base URL ending in `/v1` selects the legacy v1 API,
/// `InstagramConfiguration`).
public struct InstagramGraphConfiguration: Sendable {
    /// `APIMACRO_INSTAGRAM_URL`, default `https://graph.instagram.com`: the API's root, where the
    /// token endpoints (`access_token`, `refresh_access_token`) are, without a version.
    public var baseURL: String
    /// `APIMACRO_INSTAGRAM_API_VERSION`, default `defaultAPIVersion`.
    public var apiVersion: String
    /// `APIMACRO_INSTAGRAM_TOKEN`, else the stored login.
    public var token: Secret?
    /// Whether `token` is the one `apimacro login instagram` stored (which the client refreshes).
    public var tokenIsStored: Bool
    /// Per-request timeout, seconds (default 30).
    public var timeout: Double
    /// `APIMACRO_MAX_WAIT`: the longest rate-limit wait, seconds (default 60).
    public var maxWait: Double
    /// The label of the stored account whose token is used, when it is one.
    public var account: String?
    /// How the pipeline waits (tests record the waits).
    public var sleep: @Sendable (Double) async throws -> Void = RetryPolicy.taskSleep

    /// `https://graph.instagram.com`, the host of the Instagram API with Instagram Login.
    public static let defaultBaseURL = "https://graph.instagram.com"
    /// The newest Graph API version Meta documents: v27.0, introduced November 4, 2026 (the
    /// "Available Graph API Versions" table of developers.facebook.com/docs/graph-api/changelog,
    /// and "Introducing Graph API v27.0", developers.facebook.com/blog, 2026-11-04).
    public static let defaultAPIVersion = "v27.0"
    /// The oldest version still available on that table (v20.0 was available until
    /// September 24, 2026): v21.0.
    public static let oldestAPIVersion = 21

    public init(
        baseURL: String = InstagramGraphConfiguration.defaultBaseURL,
        apiVersion: String = InstagramGraphConfiguration.defaultAPIVersion, token: Secret? = nil,
        tokenIsStored: Bool = false, timeout: Double = 30, maxWait: Double = 60
    ) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        // A base URL naming a version (`…/v23.0`) keeps it; the root is what precedes it.
        if let slash = base.lastIndex(of: "/"), Self.versionNumber(String(base[base.index(after: slash)...])) != nil {
            self.apiVersion = String(base[base.index(after: slash)...])
            base = String(base[..<slash])
        } else {
            self.apiVersion = apiVersion
        }
        self.baseURL = base
        self.token = token
        self.tokenIsStored = tokenIsStored
        self.timeout = timeout
        self.maxWait = maxWait
    }

    /// Reads `Instagram`'s settings (SPEC §2) from `view` over these defaults.
    public init(_ view: SettingsView) {
        let credential = Instagram.descriptor.credential(in: view)
        self.init(
            baseURL: view.value(Instagram.url) ?? Self.defaultBaseURL,
            apiVersion: view.value(Instagram.apiVersion) ?? Self.defaultAPIVersion, token: credential?.secret,
            tokenIsStored: credential?.source.isStoredLogin ?? false, timeout: view.requestTimeout,
            maxWait: view.maxWait)
        account = credential?.source.isStoredLogin == true ? view.account : nil
    }

    /// The base URL the endpoints are relative to: the root and the version (`…/v27.0`).
    public var versionedBaseURL: String { baseURL + "/" + apiVersion }

    /// The number of a version written `vN.0`, or nil for anything else.
    static func versionNumber(_ text: String) -> Int? {
        guard text.hasPrefix("v"), text.hasSuffix(".0"), text.count <= 6 else { return nil }
        return Int(text.dropFirst().dropLast(2))
    }

    /// Why `text` is not a Graph API version apimacro accepts, or nil when it is one: `vN.0`
    /// from the oldest available (v21.0) on, newer ones included, but for one past the end
    /// Meta's schedule gives it (`GraphVersionSchedule`).
    @Sendable public static func versionProblem(_ text: String) -> String? {
        if let number = versionNumber(text), let ended = GraphVersionSchedule.ended(number) { return ended }
        if let number = versionNumber(text), number >= oldestAPIVersion { return nil }
        return "'\(text)' is not a Graph API version apimacro can use; accepted: v\(oldestAPIVersion).0 to "
            + "\(defaultAPIVersion) (the versions Meta lists as available), or a newer vN.0"
    }

    /// The pipeline configuration: the token travels as the `access_token` query parameter,
    /// as Meta documents for graph.instagram.com (and is `REDACTED` in the answers that echo it,
    /// `paging` links at any depth); errors are read from the Graph envelope, and the usage
    /// headers decide the rate limits.
    public var client: ClientConfiguration {
        var configuration = ClientConfiguration(
            name: Instagram.name, baseURL: versionedBaseURL,
            credential: token.map { .query(name: "access_token", value: $0) },
            defaultHeaders: [("Accept", "application/json")], timeout: timeout, maxWait: maxWait,
            errorMessage: InstagramGraphEnvelope.message, errorKind: InstagramGraphEnvelope.kind)
        configuration.errorDetails = InstagramGraphEnvelope.details
        configuration.isTransient = InstagramGraphEnvelope.isTransient
        configuration.usage = InstagramGraphUsage.rule
        configuration.sleep = sleep
        configuration.remembersRateLimit = false
        configuration.redactsEchoedCredential = true
        configuration.account = account
        return configuration
    }
}
