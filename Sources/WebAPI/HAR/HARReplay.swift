public import Platform
import Synchronization

/// The answers of a HAR file (`--replay FILE.har`), found by method, URL and
/// body with credentials left out on both sides: query parameters that carry
/// credentials (or read `REDACTED`) are dropped, and bodies are compared
/// redacted.
///
/// Repeated identical requests get the recorded answers in order; once those
/// are used up, the last one again.
public final class HARReplay: Sendable {
    /// The file's path, for messages.
    public let name: String
    private let answers: [String: [HAR.Entry]]
    private let used = Mutex<[String: Int]>([:])
    /// Leaves credentials out of the keys: the credential rule's parameters, and `sensitiveParameters`.
    private let redactor: Redactor
    /// The origins (`scheme://host[:port]`) the file holds requests to, sorted: a miss names them.
    public let hosts: [String]

    /// Reads `file` (see `HAR.read` for its errors).
    public convenience init(file: URL) throws {
        self.init(har: try HAR.read(file), name: file.path)
    }

    /// The answers of `har`, matched with credentials left out.
    ///
    /// - Parameters:
    ///   - har: the recording.
    ///   - name: its path, for messages.
    ///   - sensitiveParameters: query parameters left out of the keys besides those the
    ///     credential rule names (`CredentialNames.isCredentialParameter`).
    public init(har: HAR, name: String, sensitiveParameters: Set<String> = []) {
        self.name = name
        var answers: [String: [HAR.Entry]] = [:]
        let redactor = Redactor(secrets: [], sensitiveParameters: sensitiveParameters)
        self.redactor = redactor
        for entry in har.log.entries {
            let body = HAR.bytes(text: entry.request.postData?.text, encoding: entry.request.postData?.encoding)
            let key = HARReplay.key(
                method: entry.request.method, url: entry.request.url, body: body, redactor: redactor,
                parameters: redactor)
            answers[key, default: []].append(entry)
        }
        self.answers = answers
        hosts = Set(
            har.log.entries.compactMap { entry -> String? in
                guard let components = URLComponents(string: entry.request.url), let scheme = components.scheme,
                    let host = components.host, !host.isEmpty
                else { return nil }
                return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
            }
        ).sorted()
    }

    /// The number of recorded exchanges.
    public var count: Int { answers.values.reduce(0) { $0 + $1.count } }

    /// The next recorded answer to this request, or nil when the file has none.
    public func answer(to exchange: Exchange, redactor: Redactor) -> Response? {
        let key = HARReplay.key(
            method: exchange.method, url: exchange.url, body: exchange.body, redactor: redactor,
            parameters: self.redactor)
        guard let entries = answers[key], !entries.isEmpty else { return nil }
        let index = used.withLock { used -> Int in
            let index = used[key, default: 0]
            used[key] = index + 1
            return min(index, entries.count - 1)
        }
        let recorded = entries[index].response
        // The body is stored decoded, so the headers that describe the wire encoding no longer apply;
        // HTTP/2 pseudo-headers from a browser's export are not headers at all.
        let skipped: Set<String> = ["content-encoding", "content-length", "transfer-encoding"]
        let headers = (recorded.headers ?? []).filter {
            !$0.name.hasPrefix(":") && !skipped.contains($0.name.lowercased())
        }
        return Response(
            status: recorded.status, headers: Headers(headers.map { ($0.name, $0.value) }),
            body: HAR.bytes(text: recorded.content?.text, encoding: recorded.content?.encoding), url: exchange.url,
            source: .replay)
    }

    /// Method, normalized URL without credentials, and the redacted body.
    static func key(method: String, url: String, body: [UInt8], redactor: Redactor, parameters: Redactor) -> String {
        var text = method.uppercased() + " " + normalized(url, parameters: parameters)
        if !body.isEmpty {
            text += "\n" + (HARRecorder.utf8Text(body).map { redactor.redact($0) } ?? Data(body).base64EncodedString())
        }
        return text
    }

    /// Lower-cased scheme and host, no default port, no fragment, query items
    /// sorted and without credentials.
    static func normalized(_ url: String, parameters: Redactor) -> String {
        guard var components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return url
        }
        components.scheme = scheme
        components.host = components.host?.lowercased()
        if components.port == (scheme == "https" ? 443 : 80) { components.port = nil }
        components.fragment = nil
        components.user = nil
        components.password = nil
        if components.path.isEmpty { components.path = "/" }
        let items = (components.percentEncodedQueryItems ?? []).filter { item in
            !parameters.isSensitiveParameter(item.name.percentDecoded ?? item.name) && item.value != "REDACTED"
        }
        components.percentEncodedQueryItems =
            items.isEmpty ? nil : items.sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
        return components.string ?? url
    }
}
