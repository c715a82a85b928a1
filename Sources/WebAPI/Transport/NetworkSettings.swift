import Platform

/// How the transport reaches the network: forward proxies and the certificate
/// authorities it trusts.
///
/// Resolved once (from the standard environment variables and config.toml, by
/// `Settings`) and handed to the transport, which applies it to every client
/// and plugin alike.
public struct NetworkSettings: Sendable, Equatable {
    /// Proxy for `http://` URLs (`HTTP_PROXY` / `http_proxy`), e.g., `http://user:pass@proxy:3128`.
    public var httpProxy: String?
    /// Proxy for `https://` URLs (`HTTPS_PROXY` / `https_proxy`); reached with CONNECT.
    public var httpsProxy: String?
    /// Hosts reached directly (`NO_PROXY` / `no_proxy`): host names (a name also
    /// matches its subdomains), `.suffix`, IP addresses, CIDR ranges, `host:port`, or `*` for all.
    public var noProxy: [String] {
        didSet { noProxyEntries = noProxy.compactMap(NoProxyEntry.init) }
    }
    /// `noProxy` read once (not on every proxied request); kept in step by `noProxy`'s `didSet`.
    private var noProxyEntries: [NoProxyEntry]
    /// A PEM file of certificate authorities trusted instead of the system's
    /// (`APIMACRO_CA_BUNDLE`, else `SSL_CERT_FILE`); nil means the system's.
    public var caBundle: String?

    public init(httpProxy: String? = nil, httpsProxy: String? = nil, noProxy: [String] = [], caBundle: String? = nil) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.noProxy = noProxy
        noProxyEntries = noProxy.compactMap(NoProxyEntry.init)
        self.caBundle = caBundle
    }

    /// No proxy, the system's certificate authorities.
    public static let direct = NetworkSettings()

    /// The proxy URL to use for `origin`, or nil to connect directly.
    public func proxy(for origin: Origin) -> String? {
        let chosen = origin.scheme == "https" ? httpsProxy : httpProxy
        guard let chosen, !chosen.isEmpty else { return nil }
        return bypassesProxy(origin) ? nil : chosen
    }

    /// Whether `NO_PROXY` names this origin (see `NoProxyEntry` for the forms an entry takes).
    public func bypassesProxy(_ origin: Origin) -> Bool {
        guard !noProxyEntries.isEmpty else { return false }
        let host = NoProxyEntry.Host(origin.host)
        return noProxyEntries.contains { $0.matches(host, port: origin.port) }
    }
}
