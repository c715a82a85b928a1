import Clients
import Platform
import PythonBridge
import WebAPI

/// The state of a Python `Response` object.
final class ResponseState {
    let response: Response
    let method: String
    /// Redacts an error about this answer as the pipeline redacts its own: also the values the
    /// request carried under credential names (`X-Api-Key`, `?token=`), which a body may echo.
    let redacted: (APIError) -> APIError
    private var headersObject: PyRef?

    init(response: Response, method: String, redacted: @escaping (APIError) -> APIError = { $0 }) {
        self.response = response
        self.method = method
        self.redacted = redacted
    }

    /// Runs `work`, an error it throws about this answer redacted (`redacted`).
    func redacting<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let error as APIError {
            throw redacted(error)
        }
    }

    /// A case-insensitive mapping, built once (GIL held).
    func headers(using type: PyRef) throws -> PyRef {
        if let headersObject { return headersObject }
        let pairs = PythonValue.list(response.headers.fields.map { .tuple([.string($0.name), .string($0.value)]) })
        let made = try type.call([try pairs.toPython()])
        headersObject = made
        return made
    }

    /// The charset of `Content-Type`, default UTF-8.
    var charset: String {
        let type = response.headers["content-type"]?.lowercased() ?? ""
        guard let range = type.firstRange(of: "charset=") else { return "utf-8" }
        return String(type[range.upperBound...].prefix { $0 != ";" && $0 != " " }).trimmingScalars {
            $0 == "\""
        }
    }
}

/// `apimacro.request`, `get`, `post` and the `Response` class (SPEC §3, "any HTTP API").
enum HTTPBinding {
    static let parameters = [
        "method", "url", "params", "headers", "json", "data", "files", "auth", "timeout", "cache", "check",
    ]

    static func install(_ context: BuiltInClient.Context) throws {
        let (module, runtime, decoder) = (context.module, context.runtime, context.decoder)
        let responses = try responseClass(module: module, decoder: decoder)
        // No base URL, no credential, and no rate limit to show (no `apimacro.rate_limit`).
        var configuration = ClientConfiguration(
            name: "http", baseURL: "", timeout: runtime.settings.requestTimeout, maxWait: runtime.settings.maxWait)
        configuration.remembersRateLimit = false
        let client = APIClient(
            configuration: configuration, transport: runtime.transport, log: runtime.log, redactor: runtime.redactor)
        try module.addFunction(
            "request",
            doc: """
                request(method, url, params=None, headers=None, json=None, data=None, files=None, auth=None,
                        timeout=None, cache=True, check=True) -> Response

                One HTTP request through apimacro's pipeline (retries, rate limits, redaction, -v).
                data: a dict (form-encoded) or bytes/str (sent raw). files: name -> bytes, a path, or
                (filename, bytes, content_type) (multipart). auth: (user, password), sent only over https or
                to loopback. cache: "1h" (also "30m", "2d", seconds as an int) keeps and serves the answer
                that long whatever its headers say (this process's cache only); "refresh" serves no stored
                answer and stores the new one; "only-if-cached" answers from the cache (a stale copy too) or
                raises OfflineError, sending nothing; False neither reads nor stores (sent with
                Cache-Control: no-store). A non-2xx status raises HTTPError (or a subclass)
                unless check=False.
                """
        ) { arguments in
            let slots = try arguments.bind("request", parameters, required: 2)
            let request = try makeRequest(slots, secrets: runtime.secrets)
            let response = try client.sendFromPython(request)
            return try responses.instance(
                ResponseState(response: response, method: request.method) { client.redacted($0, for: request) })
        }
    }

    /// Builds the request from the bound arguments (GIL held).
    static func makeRequest(_ slots: [PyRef?], secrets: SecretRegistry) throws -> Request {
        let method = try Arguments.string(slots[0], "method", in: "request")
        let url = try Arguments.string(slots[1], "url", in: "request")
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), Origin(url: url) != nil else {
            throw APIError(.invalidRequest, "request() needs an absolute http(s) URL, not \(url.debugDescription)")
        }
        var request = Request(method, url)
        request.query = try Arguments.pairs(slots[2], "params", in: "request")
        request.headers = try Arguments.pairs(slots[3], "headers", in: "request")
        request.timeout = try Arguments.seconds(slots[8], "timeout", in: "request")
        if let check = slots[10], !check.isNone, case .bool(let flag) = try PythonValue(python: check) {
            request.validatesStatus = flag
        }
        request.cache = try CacheKeyword.choice(slots[9], in: "request")
        // cache=False is also sent as `no-store`, which any cache on the way honours.
        if request.cache == .off, !request.headers.contains(where: { $0.0.lowercased() == "cache-control" }) {
            request.headers.append(("Cache-Control", "no-store"))
        }
        if let auth = slots[7], !auth.isNone {
            guard case .tuple(let pair) = try PythonValue(python: auth), pair.count == 2,
                case .string(let user) = pair[0], case .string(let password) = pair[1]
            else { throw ArgumentError("request() argument 'auth' must be a (user, password) tuple of str") }
            request.basicAuth = Request.BasicAuth(user: user, password: Secret(password))
            for form in BasicAuthorization.wireForms(user: user, password: password) { secrets.add(form) }
        }
        request.body = try body(json: slots[4], data: slots[5], files: slots[6])
        return request
    }

    static func body(json: PyRef?, data: PyRef?, files: PyRef?) throws -> Request.Body {
        if let json, !json.isNone {
            let dumps = try Interpreter.import("json").attribute("dumps")
            let text = try dumps.call([json], kwargs: [("ensure_ascii", .bool(false))])
            return .json(Array(try String(pythonString: text).utf8))
        }
        var fields: [(String, String)] = []
        var hasData = false
        if let data, !data.isNone {
            hasData = true
            switch try? PythonValue(python: data) {
            case .bytes(let bytes): return .raw(bytes, contentType: nil)
            case .string(let text): return .raw(Array(text.utf8), contentType: "text/plain; charset=utf-8")
            default: fields = try Arguments.pairs(data, "data", in: "request")
            }
        }
        guard let files, !files.isNone else { return hasData ? .form(fields) : .none }
        let fieldParts = fields.map { MultipartPart(name: $0.0, data: Array($0.1.utf8)) }
        return .multipart(fieldParts + (try parts(files)))
    }

    /// Multipart parts from `files`: name → bytes, a path, or (filename, bytes, content_type).
    static func parts(_ files: PyRef) throws -> [MultipartPart] {
        guard let items = files.attributeIfPresent("items"), items.isCallable else {
            throw ArgumentError(
                "request() argument 'files' must be a dict of name -> bytes, path or (filename, bytes, content_type)")
        }
        return try elements(of: items.call()).map { entry in
            let pair = try elements(of: entry)
            guard pair.count == 2 else { throw ArgumentError("request() argument 'files' must be a dict") }
            return try part(name: Arguments.string(pair[0], "files", in: "request"), value: pair[1])
        }
    }

    static func part(name: String, value: PyRef) throws -> MultipartPart {
        switch try? PythonValue(python: value) {
        case .bytes(let bytes):
            return MultipartPart(name: name, filename: name, data: bytes)
        case .tuple(let items) where (2...3).contains(items.count):
            guard case .string(let filename) = items[0] else {
                throw ArgumentError("request() files[\(name.debugDescription)]: the tuple's filename must be str")
            }
            let data: [UInt8]
            switch items[1] {
            case .bytes(let bytes): data = bytes
            case .string(let text): data = Array(text.utf8)
            default:
                throw ArgumentError(
                    "request() files[\(name.debugDescription)]: the tuple's content must be bytes or str")
            }
            var contentType: String?
            if items.count == 3, case .string(let type) = items[2] { contentType = type }
            return MultipartPart(name: name, filename: filename, contentType: contentType, data: data)
        default:
            // A path: str or os.PathLike.
            let path = try String(pythonString: Interpreter.import("os").attribute("fspath").call([value]))
            let url = URL(fileURLWithPath: path)
            guard let data = try? Data(contentsOf: url) else {
                throw APIError(.invalidRequest, "request() files[\(name.debugDescription)]: cannot read \(path)")
            }
            return MultipartPart(name: name, filename: url.lastPathComponent, data: Array(data))
        }
    }

    /// The elements of any iterable, as a Swift array (GIL held).
    static func elements(of iterable: PyRef) throws -> [PyRef] {
        let list = try Interpreter.import("builtins").attribute("list").call([iterable])
        return try (0..<PySequence.count(list)).map { try PyRef.checked(PySequence.item(list, $0)) }
    }

    /// The `Response` class.
    static func responseClass(module: NativeModule, decoder: JSONDecoding) throws -> NativeClass<ResponseState> {
        let builder = NativeClass<ResponseState>(
            name: "Response", module: "apimacro",
            doc: "An HTTP response: status, url, headers (case-insensitive), content, text, json(), xml().")
        let headersType = try module.object.attribute("Headers")
        try builder.property("status", doc: "The status code.") { try PythonValue.int($0.response.status).toPython() }
        try builder.property("ok", doc: "Whether the status is 2xx.") { .bool($0.response.isSuccess) }
        try builder.property("url", doc: "The URL that answered (credentials redacted).") {
            try PyRef(string: $0.response.url)
        }
        try builder.property("headers", doc: "The headers, looked up without regard to case.") {
            try $0.headers(using: headersType)
        }
        try builder.property("content", doc: "The body as bytes.") {
            try PythonValue.bytes($0.response.body).toPython()
        }
        try builder.property("text", doc: "The body decoded with the charset of Content-Type (default UTF-8).") {
            state in
            let bytes = try PythonValue.bytes(state.response.body).toPython()
            do {
                return try bytes.callMethod("decode", [PyRef(string: state.charset), PyRef(string: "replace")])
            } catch is PythonErrorSet {
                PythonRaise.clear()
                return try bytes.callMethod("decode", [PyRef(string: "utf-8"), PyRef(string: "replace")])
            }
        }
        try builder.method("json", doc: "json() -> the body decoded as JSON (ParseError if it is not JSON).") {
            state, _ in
            try state.redacting { try decoder.decode(state.response, api: "http") }
        }
        try builder.method(
            "xml", doc: "xml() -> xml.etree.ElementTree.Element of the body (RSS and Atom feeds included)."
        ) { state, _ in
            let bytes = try PythonValue.bytes(state.response.body).toPython()
            do {
                return try Interpreter.import("xml.etree.ElementTree").callMethod("fromstring", [bytes])
            } catch is PythonErrorSet {
                let reason = PythonException.fetch()?.message ?? "not XML"
                throw state.redacted(
                    APIError(
                        .parse,
                        "\(state.response.url) answered \(state.response.status) with a body that is not XML (\(reason))",
                        status: state.response.status, url: state.response.url, api: "http", body: state.response.text))
            }
        }
        try builder.method(
            "raise_for_status",
            doc: "raise_for_status() -> None\n\nRaises the matching HTTPError if the status is not 2xx."
        ) {
            state, _ in
            guard state.response.isSuccess else {
                throw state.redacted(
                    APIError.status(
                        state.response, api: "http", method: state.method,
                        message: ClientConfiguration.jsonMessage(state.response)))
            }
            return .none
        }
        try builder.method("__repr__") { state, _ in
            try PyRef(string: "<Response [\(state.response.status)] \(state.method) \(state.response.url)>")
        }
        try module.set("Response", try builder.build())
        return builder
    }
}
