public import Clients
import Platform
public import WebAPI

/// A client built from a manifest, on the same pipeline as the built-in
/// ones: the manifest's endpoints are its router, checked before any request.
public final class PluginClient: Sendable {
    /// The manifest the client was built from.
    public let manifest: PluginManifest
    /// The pipeline connection (base URL, credential, rate limit).
    public let api: APIClient
    /// Where the credential came from when the client was built, for `auth status`.
    public let credentialSource: String?
    private let credentialHint: String?
    private let environment: [String: String]

    /// The base URL is `APIMACRO_<NAME>_URL`, else the manifest's; the
    /// credential comes from the environment, else `storedToken` (the stored account `account`;
    /// with `prefersStored`, chosen for this client, it wins over the environment).
    public init(
        manifest: PluginManifest, environment: [String: String], storedToken: Secret?, account: String? = nil,
        prefersStored: Bool = false, transport: any Transport, log: ExchangeLog, redactor: Redactor,
        timeout: Double = 30, maxWait: Double = 60
    ) {
        self.manifest = manifest
        self.environment = environment
        let resolved = PluginCredential(
            manifest: manifest, environment: environment, storedToken: storedToken, prefersStored: prefersStored)
        credentialSource = resolved.source
        credentialHint = resolved.hint
        let baseURL =
            environment[manifest.environmentPrefix + "_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? manifest.baseURL
        let messagePath = manifest.errorMessage
        let codePath = manifest.errorCode
        api = APIClient(
            configuration: ClientConfiguration(
                name: manifest.name, baseURL: baseURL, credential: resolved.credential,
                defaultHeaders: manifest.headers,
                timeout: timeout, maxWait: maxWait,
                errorMessage: { response in
                    JSONPath.string(in: response.body, path: messagePath ?? ["message"])
                },
                errorKind: { response in
                    codePath.flatMap { JSONPath.string(in: response.body, path: $0) }.flatMap { Int($0) }
                        .flatMap { PluginClient.kind(forCode: $0) }
                }
            ).with(limits: manifest.limits).with(account: resolved.fromStore ? account : nil),
            transport: transport, log: log, redactor: redactor)
    }

    /// The error kind an HTTP-like code in a body means, or nil for the status's own.
    static func kind(forCode code: Int) -> APIError.Kind? {
        switch code {
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 429: .rateLimited
        case 200..<300: nil
        default: .http
        }
    }

    /// Whether a credential is set.
    public var hasCredential: Bool { api.credential != nil }

    /// `AuthError` when the plugin needs a credential and has none.
    public func requireCredential() throws {
        guard api.credential == nil, api.needsCredentials, let credentialHint else { return }
        throw APIError(.auth, "\(manifest.name) needs credentials: \(credentialHint)", api: manifest.name)
    }

    /// The request for `endpoint` with `arguments`, checked against the
    /// declaration: an unknown or missing parameter, or a value of the wrong
    /// type, is an `.invalidRequest` (Python: `ValueError`) naming it.
    public func request(_ endpointName: String, _ arguments: [(String, ParameterValue)]) throws -> (
        PluginEndpoint, Request
    ) {
        guard let endpoint = manifest.endpoint(endpointName) else {
            throw invalid(
                "\(manifest.name) has no endpoint '\(endpointName)'; it has \(manifest.endpoints.map(\.name).joined(separator: ", "))"
            )
        }
        let function = "\(manifest.name).\(endpoint.name)()"
        var values: [String: ParameterValue] = [:]
        for (name, value) in arguments {
            guard let parameter = endpoint.parameters.first(where: { $0.name == name }) else {
                let known = endpoint.parameters.map(\.name)
                throw invalid(
                    "\(function) has no parameter '\(name)'; it takes \(known.isEmpty ? "none" : known.joined(separator: ", "))"
                )
            }
            guard value.fits(parameter.type) else {
                throw invalid(
                    "\(function) parameter '\(name)' must be \(Self.article(parameter.type)), not \(value.typeName) \(value.text.debugDescription)"
                )
            }
            values[name] = value
        }
        for parameter in endpoint.parameters where parameter.required && values[parameter.name] == nil {
            throw invalid("\(function) needs the parameter '\(parameter.name)' (\(parameter.type.rawValue))")
        }
        var path = endpoint.path
        for parameter in endpoint.parameters where parameter.inPath {
            path = path.replacing(
                "{\(parameter.name)}", with: FormEncoding.pathSegment(values[parameter.name]?.text ?? ""))
        }
        let rest = endpoint.parameters.filter { !$0.inPath }.compactMap { parameter in
            values[parameter.name].map { (parameter.name, $0) }
        }
        var request = Request(endpoint.method, path, query: manifest.query)
        if endpoint.sendsBody {
            var object: [String: Any] = [:]
            for (name, value) in rest { object[name] = value.json }
            let body = JSONValue.encoded(native: object, [.sortedKeys, .withoutEscapingSlashes]) ?? Data("{}".utf8)
            request.body = .json(Array(body))
        } else {
            request.query += rest.map { ($0.0, $0.1.text) }
        }
        return (endpoint, request)
    }

    /// A GET of any path relative to the base URL (`.get` and `.paginate`), with the manifest's query.
    public func request(path: String, parameters: [(String, String)]) -> Request {
        Request(
            "GET", path,
            query: manifest.query.filter { constant in !parameters.contains { $0.0 == constant.0 } } + parameters)
    }

    /// Sends a request; `AuthError` first when the manifest declares a
    /// credential and none is set.
    public func send(_ request: Request) async throws -> Response {
        try requireCredential()
        return try await api.send(request)
    }

    /// The request for the page after `response`, or nil at the end.
    public func nextPage(after response: Response, request: Request, itemCount: Int, bodyValue: String?? = nil)
        -> Request?
    {
        manifest.pagination.next(after: response, request: request, itemCount: itemCount, bodyValue: bodyValue)
    }

    /// Uses `token` from now on (after `apimacro login`): sent as the manifest says.
    public func setToken(_ token: Secret?) {
        guard case .oauth2Implicit(let settings) = manifest.auth else { return }
        api.setCredential(
            token.map { token in settings.param.map { .query(name: $0, value: token) } ?? .bearer(token) })
    }

    /// The OAuth implicit-grant flow of an `oauth2_implicit` plugin: client id
    /// from `APIMACRO_<NAME>_CLIENT_ID`, redirect URI from
    /// `APIMACRO_<NAME>_REDIRECT_URI` (default `http://127.0.0.1:8765/callback`),
    /// authorize URL from `APIMACRO_<NAME>_AUTHORIZE_URL`, else the manifest's
    /// (the plugin's `descriptor`'s login).
    public static func loginFlow(_ manifest: PluginManifest, environment: [String: String]) throws -> OAuthImplicitFlow
    {
        guard case .oauthImplicit(let login) = manifest.descriptor.login else {
            throw APIError(
                .auth, "\(manifest.name) does not log in with OAuth (its auth is \(manifest.auth.kind))",
                api: manifest.name)
        }
        return try login.flow(in: SettingsView(environment: environment))
    }

    /// This client's login flow (see the static `loginFlow`).
    public func loginFlow() throws -> OAuthImplicitFlow { try Self.loginFlow(manifest, environment: environment) }

    private func invalid(_ message: String) -> APIError { APIError(.invalidRequest, message, api: manifest.name) }

    private static func article(_ type: PluginParameter.ParameterType) -> String {
        switch type {
        case .string: "a str"
        case .int: "an int"
        case .float: "a float (or int)"
        case .bool: "a bool"
        }
    }
}
