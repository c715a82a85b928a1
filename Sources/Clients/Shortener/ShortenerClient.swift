import Foundation
import WebAPI

/// The Google URL Shortener v1 endpoints, one case each.
public enum ShortenerRouter: Sendable {
    /// `POST url` with `{"longUrl": …}`.
    case shorten(longURL: String)
    /// `GET url?shortUrl=…`.
    case expand(shortURL: String)

    public var request: Request {
        switch self {
        case .shorten(let longURL):
            let body =
                (try? JSONSerialization.data(withJSONObject: ["longUrl": longURL], options: [.withoutEscapingSlashes]))
                ?? Data()
            return Request("POST", "/url", body: .json(Array(body)))
        case .expand(let shortURL):
            return Request("GET", "/url", query: [("shortUrl", shortURL)])
        }
    }
}

/// Settings of the shortener client (SPEC §2).
public struct ShortenerConfiguration: Sendable {
    /// `APIMACRO_SHORTENER_URL`, default `https://www.googleapis.com/urlshortener/v1`.
    public var baseURL: String
    /// `APIMACRO_SHORTENER_KEY` (required for shorten), else a stored key.
    public var key: Secret?
    public var timeout: Double
    public var maxWait: Double

    public static let defaultBaseURL = "https://www.googleapis.com/urlshortener/v1"

    public init(
        baseURL: String = ShortenerConfiguration.defaultBaseURL, key: Secret? = nil, timeout: Double = 30,
        maxWait: Double = 60
    ) {
        self.baseURL = baseURL
        self.key = key
        self.timeout = timeout
        self.maxWait = maxWait
    }

    /// Reads `Shortener`'s settings (SPEC §2) from `view`; the stored key is the fallback key.
    public init(_ view: SettingsView) {
        self.init(
            baseURL: view.value(Shortener.url) ?? Self.defaultBaseURL,
            key: Shortener.descriptor.credential(in: view)?.secret, timeout: view.requestTimeout,
            maxWait: view.maxWait)
    }

    /// Google's error body: `{"error": {"code", "message", "errors": [...]}}`.
    public var client: ClientConfiguration {
        ClientConfiguration(
            name: Shortener.name, baseURL: baseURL, credential: key.map { .query(name: "key", value: $0) },
            timeout: timeout,
            maxWait: maxWait,
            errorMessage: { response in
                let message = JSONPath.string(in: response.body, path: ["error", "message"])
                let reason = JSONPath.string(in: response.body, path: ["error", "errors", "0", "reason"])
                switch (message, reason) {
                case (let message?, let reason?): return "\(message) (\(reason))"
                default: return message ?? reason
                }
            },
            errorKind: { response in
                let reason = JSONPath.string(in: response.body, path: ["error", "errors", "0", "reason"])
                return ["keyInvalid", "keyExpired"].contains(reason ?? "") ? .unauthorized : nil
            })
    }
}

/// The URL shortener client.
public final class ShortenerClient: Sendable {
    public let api: APIClient
    public let configuration: ShortenerConfiguration

    public init(configuration: ShortenerConfiguration, transport: any Transport, log: ExchangeLog, redactor: Redactor) {
        self.configuration = configuration
        api = APIClient(configuration: configuration.client, transport: transport, log: log, redactor: redactor)
    }

    /// `ValueError` (an invalid request) unless `text` is an absolute http(s) URL; checked before any request.
    public static func validate(_ text: String, argument: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty
        else {
            throw APIError(
                .invalidRequest, "\(argument) must be an absolute http(s) URL, not \(text.debugDescription)",
                api: "shortener")
        }
    }

    /// Shortens `longURL` (needs a key).
    public func shorten(_ longURL: String) async throws -> Response {
        try ShortenerClient.validate(longURL, argument: "shorten() long_url")
        guard api.credential != nil || !api.needsCredentials else {
            throw APIError(.auth, "shortener.shorten needs an API key: set APIMACRO_SHORTENER_KEY", api: "shortener")
        }
        return try await api.send(ShortenerRouter.shorten(longURL: longURL).request)
    }

    /// Expands `shortURL` (the key is sent when there is one).
    public func expand(_ shortURL: String) async throws -> Response {
        try ShortenerClient.validate(shortURL, argument: "expand() short_url")
        return try await api.send(ShortenerRouter.expand(shortURL: shortURL).request)
    }
}
