import Clients
import Platform
import PluginHost
import PythonBridge
import WebAPI

/// The plugins in Python: `apimacro.plugins` (name → client), `apimacro.client(name)`,
/// and one client per loaded manifest with `.call`, `.get`, `.paginate` and one
/// method per endpoint (built in Python, with the manifest's help as docstrings).
final class PluginBinding {
    let client: PluginClient
    let decoder: JSONDecoding
    let iterators: NativeClass<PageState>
    /// Why the stored logins could not be read, when this plugin needs a credential and has none
    /// from the environment: its calls raise it rather than go out without one.
    let storeProblem: APIError?

    init(client: PluginClient, decoder: JSONDecoding, iterators: NativeClass<PageState>, storeProblem: APIError? = nil)
    {
        self.client = client
        self.decoder = decoder
        self.iterators = iterators
        self.storeProblem = client.manifest.auth != .none && !client.hasCredential ? storeProblem : nil
    }

    var name: String { client.manifest.name }

    /// `call(endpoint, **params)`: `limit` is the iteration limit unless the endpoint declares a `limit`.
    func call(_ arguments: PyArguments) throws -> PyRef {
        if let storeProblem { throw storeProblem }
        guard arguments.positional.count == 1 else {
            throw ArgumentError("call() takes the endpoint's name, then its parameters as keywords")
        }
        let endpointName = try Arguments.string(arguments.positional[0], "endpoint", in: "call")
        let declared = client.manifest.endpoint(endpointName)
        let takesLimit = declared?.parameters.contains { $0.name == "limit" } ?? false
        var limit: Int?
        var values: [(String, ParameterValue)] = []
        for (key, value) in arguments.keywords {
            if key == "limit", !takesLimit {
                limit = try Arguments.limit(value, in: "\(name).\(endpointName)")
            } else if !value.isNone {
                values.append((key, try parameterValue(value, key, endpoint: endpointName)))
            }
        }
        let (endpoint, request) = try client.request(endpointName, values)
        return try fetch(
            request, format: endpoint.response, result: endpoint.result, limit: limit, answerError: endpoint.answerError
        )
    }

    /// An `APIError` when `payload` (the answer to `request`) is an error by `rule`.
    func check(_ payload: PyRef, by rule: AnswerErrorRule?, _ response: Response, _ request: Request) throws {
        guard let rule else { return }
        let failure = try rule.failure { path -> AnswerErrorRule.Found? in
            guard let value = payload.value(at: path) else { return nil }
            if value.isNone { return .null }
            switch try PythonValue(python: value) {
            case .bool(let flag): return .bool(flag)
            case .int(let number): return .number(Double(number))
            case .float(let number): return .number(number)
            case .string(let text): return .string(text)
            default: return .other(try value.str())
            }
        }
        guard let failure else { return }
        throw APIError(
            .http,
            "\(request.method) \(response.url) → \(response.status) \(HTTPStatus.reason(response.status)), "
                + "but the answer is an error: \(failure)",
            status: response.status, url: response.url, api: name, body: response.text)
    }

    private func parameterValue(_ value: PyRef, _ key: String, endpoint: String) throws -> ParameterValue {
        switch try PythonValue(python: value) {
        case .string(let text): return .string(text)
        case .int(let number): return .int(number)
        case .float(let number): return .double(number)
        case .bool(let flag): return .bool(flag)
        default:
            throw APIError(
                .invalidRequest,
                "\(name).\(endpoint)() parameter '\(key)' must be a str, int, float or bool, not \(value.typeName)",
                api: name)
        }
    }

    /// One request; the payload at `result` as Python, a lazy iterator over every page when it is a list.
    func fetch(
        _ request: Request, format: PluginEndpoint.ResponseFormat, result: [String], limit: Int?,
        answerError: AnswerErrorRule? = nil
    ) throws -> PyRef {
        let client = self.client
        // A GET for JSON may be a list's first page: it carries what that page needs (an offset
        // pagination's page size, when the call names none).
        let request = format == .json && request.method == "GET" ? client.manifest.pagination.first(request) : request
        try client.requireCredential()
        let response = try client.api.sendFromPython(request)
        switch format {
        case .text:
            return try PyRef(string: response.text)
        case .xml:
            do {
                return try Interpreter.import("xml.etree.ElementTree").callMethod(
                    "fromstring", [PythonValue.bytes(response.body).toPython()])
            } catch is PythonErrorSet {
                let reason = PythonException.fetch()?.message ?? "invalid XML"
                throw APIError(
                    .parse, "\(response.url) did not answer with XML (\(reason))", status: response.status,
                    url: response.url, api: name, body: response.text)
            }
        case .json:
            let payload = try decoder.decode(response, api: name)
            try check(payload, by: answerError, response, request)
            guard let value = payload.value(at: result) else {
                throw APIError(
                    .parse, "\(response.url) answered without \(result.joined(separator: "."))",
                    status: response.status, url: response.url,
                    api: name, body: response.text)
            }
            guard PySequence.isList(value) else { return value }
            // Every page, this one first, through the page iterator every client uses.
            let state = PageState(
                client: client.api, first: request, pagination: client.manifest.pagination, limit: limit,
                decoder: decoder,
                items: { [name] payload in
                    guard let items = payload.value(at: result) else {
                        throw APIError(.parse, "a page without \(result.joined(separator: "."))", api: name)
                    }
                    return items
                },
                bodyValue: PageState.bodyValue(of: client.manifest.pagination),
                validate: { [self] payload, response, request in try check(payload, by: answerError, response, request)
                })
            try state.start(after: payload, response: response, request: request)
            return try iterators.instance(state)
        }
    }

    /// `get(path, params=None, headers=None)`: the whole decoded body.
    func get(path: String, parameters: [(String, String)], headers: [(String, String)]) throws -> PyRef {
        if let storeProblem { throw storeProblem }
        var built = client.request(path: path, parameters: parameters)
        built.headers = headers
        let request = built
        let client = self.client
        try client.requireCredential()
        let response = try client.api.sendFromPython(request)
        return try decoder.decode(response, api: name)
    }

    /// `paginate(path, params=None, limit=None, result=None)`: every item of every page.
    func paginate(path: String, parameters: [(String, String)], limit: Int?, result: [String]) throws -> PyRef {
        if let storeProblem { throw storeProblem }
        try client.requireCredential()
        return try fetch(
            client.request(path: path, parameters: parameters), format: .json, result: result, limit: limit)
    }

    /// The public names `install` sets on the module (`_native_plugins.py`'s).
    static let names = ["PluginClient", "client", "plugins"]

    /// Builds the native class, one client per loaded plugin, and the Python side (`plugins`, `client`).
    static func install(
        in module: NativeModule, runtime: Runtime, decoder: JSONDecoding, iterators: NativeClass<PageState>
    ) throws {
        try module.exec(PythonPackage.source("_native_plugins.py"))
        let builder = NativeClass<PluginBinding>(
            name: "PluginNative", module: "apimacro",
            doc: "The native half of a plugin client (use apimacro.client(name)).")
        CacheKeyword.install(on: builder, keyword: "_cache")
        try builder.method("call") { binding, arguments in try binding.call(arguments) }
        try builder.method("get") { binding, arguments in
            let slots = try arguments.bind("get", ["path", "params", "headers"], required: 1)
            return try binding.get(
                path: Arguments.string(slots[0], "path", in: "get"),
                parameters: Arguments.pairs(slots[1], "params", in: "get"),
                headers: Arguments.pairs(slots[2], "headers", in: "get"))
        }
        try builder.method("paginate") { binding, arguments in
            let slots = try arguments.bind("paginate", ["path", "params", "limit", "result"], required: 1)
            let result = try Arguments.optionalString(slots[3], "result", in: "paginate") ?? ""
            return try binding.paginate(
                path: Arguments.string(slots[0], "path", in: "paginate"),
                parameters: Arguments.pairs(slots[1], "params", in: "paginate"),
                limit: Arguments.limit(slots[2], in: "paginate"), result: JSONPath.split(result))
        }
        try builder.method("as_account") { binding, arguments in
            let manifest = binding.client.manifest
            let label = try AccountBinding.label(arguments)
            guard manifest.auth != .none else {
                throw APIError(
                    .invalidRequest, "as_account: plugin \(manifest.name) takes no credentials, so has no accounts")
            }
            let (entry, _) = try runtime.account(label, of: manifest.name)
            let settings = runtime.settings
            let client = PluginClient(
                manifest: manifest, environment: settings.environment, storedToken: entry.token, account: entry.account,
                prefersStored: true, transport: runtime.transport, log: runtime.log, redactor: runtime.redactor,
                timeout: settings.requestTimeout, maxWait: settings.maxWait)
            return try builder.instance(
                PluginBinding(client: client, decoder: decoder, iterators: iterators, storeProblem: nil))
        }
        try builder.method("__repr__") { binding, _ in
            let manifest = binding.client.manifest
            let credentials =
                manifest.auth == .none ? "" : binding.client.hasCredential ? " (credentials set)" : " (no credentials)"
            return try PyRef(
                string:
                    "<apimacro plugin \(manifest.name) \(binding.client.api.redactor.redactURL(binding.client.api.configuration.baseURL))\(credentials)>"
            )
        }
        try builder.build()
        var natives: [PyRef] = []
        var specs: [PythonValue] = []
        for client in runtime.pluginClients {
            let manifest = client.manifest
            natives.append(
                try builder.instance(
                    PluginBinding(
                        client: client, decoder: decoder, iterators: iterators, storeProblem: runtime.credentialProblem)
                ))
            let endpoints: [PythonValue] = manifest.endpoints.map { endpoint in
                .tuple([
                    .string(endpoint.name), .list(endpoint.parameters.map { .string($0.name) }),
                    .list(endpoint.parameters.map { .bool($0.required) }),
                    .bool(!endpoint.parameters.contains { $0.name == "limit" }),
                    .string(endpoint.help(plugin: manifest.name)),
                ])
            }
            specs.append(
                .tuple([
                    .string(manifest.name),
                    .string(
                        classDoc(manifest, baseURL: client.api.redactor.redactURL(client.api.configuration.baseURL))),
                    .list(endpoints),
                    manifest.pythonFile.map { .string($0.path) } ?? .none,
                ]))
        }
        let failures = PythonValue.object(runtime.plugins.failures.map { ($0.name, .string($0.error.description)) })
        try module.object.attribute("_install_plugins").call([
            PySequence.list(natives), PythonValue.list(specs).toPython(), failures.toPython(),
        ])
    }

    static func classDoc(_ manifest: PluginManifest, baseURL: String) -> String {
        """
        \(manifest.description)

        Plugin \(manifest.name) (\(manifest.file.path)); base URL \(baseURL) (APIMACRO_\(manifest.name.uppercased())_URL); auth \(manifest.auth.kind).
        Endpoints: \(manifest.endpoints.map(\.signature).joined(separator: ", ")).
        Also: call(endpoint, **params), get(path, params=None, headers=None), paginate(path, params=None, limit=None, result=None).
        """
    }
}
