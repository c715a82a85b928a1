import Clients
import Platform
import PluginHost
import Spawning
public import WebAPI

/// `apimacro api [CLIENT] PATH_OR_URL`: one request (or, with `--paginate`, every page of a
/// list) through a client's own pipeline — its base URL, credentials, cache, retries and rate
/// limits — printed as the server sent it, or pretty-printed and coloured on a terminal, or
/// through a jq filter (`--jq`, run by libjq in a bounded child process: `JQProcess`).
///
/// Like `gh api`: `-X` sets the method (GET, or POST when fields are given), `-f`/`-F` add
/// fields (`ApiFields`), `-H` headers, `-i` prints each answer's status line and headers. A
/// non-2xx answer is printed, then the command fails (exit 1) with the client's error line.
public struct ApiCall: Sendable {
    /// The client named before the path, if any (`github`, a plugin's name).
    public var client: String?
    /// A path relative to the client's base URL, or an absolute http(s) URL.
    public var target: String
    /// `-X`; nil for GET, or POST when fields are given.
    public var method: String?
    /// `-f key=value`: strings.
    public var rawFields: [String] = []
    /// `-F key=value`: typed values (`true`, `null`, integers, `@FILE`).
    public var typedFields: [String] = []
    /// `-H 'Name: value'`.
    public var headers: [String] = []
    /// `--paginate`: every page, merged into one JSON array.
    public var paginate = false
    /// `--jq EXPR`.
    public var jq: String?
    /// `-i`: each answer's status line and headers before the body.
    public var include = false
    /// `--input FILE`: the request body, the file's bytes as they are (`-`: stdin); fields then
    /// go to the query string, as in gh.
    public var input: String?
    /// `--silent`: no body printed (the headers still are with `-i`; the exit code is the same).
    public var silent = false
    /// `--template TEXT`: each item as a line, Python-format-style placeholders (`ApiTemplate`).
    public var template: String?
    /// `--dry-run`: print the request (redacted) and send nothing.
    public var dryRun = false
    /// `--curl`: print an equivalent `curl` command line (secrets as `$VARIABLE`s) and send nothing.
    public var curl = false
    /// `--cache 1h` (also `refresh`, `only-if-cached`): the HTTP cache's rule for every request
    /// (`CacheChoice`), as `cache=` in a macro.
    public var cache: CacheChoice?

    /// The most bytes `--paginate` keeps (every page's body together): 1 GiB.
    static let pagesLimit = 1 << 30

    /// A call of `target`, through `client` when one is named.
    public init(client: String?, target: String) {
        self.client = client
        self.target = target
    }

    /// Runs the call with `settings` (their `timeout` bounds the whole command).
    ///
    /// - Throws: `ExitReport` (usage errors, a failed answer, a filter that failed), `APIError`.
    public func run(settings: Settings) async throws {
        // A reader of stdout that goes away (| head) is an error of a write, not a signal.
        signal(SIGPIPE, SIG_IGN)
        let fields = try ApiFields(raw: rawFields, typed: typedFields)
        let extraHeaders = try headers.map(Self.header)
        if jq != nil, template != nil { throw ExitReport.usage("--jq and --template cannot be used together") }
        if dryRun, curl { throw ExitReport.usage("--dry-run and --curl cannot be used together: pick one") }
        let template = try self.template.map(ApiTemplate.init)
        let body = try input.map(Self.readInput)
        let palette = settings.color.palette(for: STDERR_FILENO)
        // A client no one provides is a usage error before the runtime (plugins, credentials) is built;
        // so is a client's name given alone (`apimacro api github`), which would be sent as a path.
        if let client {
            let known =
                ClientRegistry.all.filter { $0.api != nil }.map(\.name)
                + PluginRegistry.load(settings: settings).plugins.map(\.name)
            if !known.contains(client) { throw Self.unknownClient(client, among: known) }
            if known.contains(target) {
                throw ExitReport.usage(
                    "'\(target)' is a client: give the path after it (apimacro api \(target) /PATH), or an absolute URL"
                )
            }
        }
        let runtime = try Runtime(settings: settings) { MacroHost.standardError(palette.warning($0)) }
        let target = try resolve(runtime)
        var first = try self.request(fields: fields, headers: extraHeaders, body: body)
        first.validatesStatus = false
        first.cache = cache
        if paginate, method == nil, first.method == "POST" {
            // Once, not per page: gh makes the same POST, which a user reading for pages may not expect.
            MacroHost.standardError(
                palette.warning(
                    "apimacro: warning: --paginate with fields sent a POST (fields make the method POST, as in gh); "
                        + "add -X GET to page through a GET with the fields in its query"))
        }
        if paginate, first.method == "GET", let size = target.pageSize, !Self.names(size.name, first) {
            first.query.append(size)
        }
        let request = first
        if dryRun || curl {
            let preview = try ApiPreview(request, target: target, runtime: runtime)
            let text = curl ? preview.curl(input: input) : preview.text
            let shown = TerminalText.shown(text, on: STDOUT_FILENO)
            try Output(settings: settings, redactor: { preview.redactor }).write(Array(shown.utf8))
            return
        }
        let redactor = Self.redactor(of: target.client, secrets: runtime.secrets, request: request)
        // A filter that does not compile is a usage error before anything is sent.
        let memoryLimit = JQChild.memoryLimit(mebibytes: settings.jqMemory)
        let filter = jq.map { JQProcess(program: $0, redactor: redactor, memoryLimit: memoryLimit) }
        // The child is waited for on a thread of its own, never on the cooperative pool.
        if let filter { try await Blocking.run { try filter.check() } }
        let started = ContinuousClock.now
        var shown = Output(settings: settings, redactor: redactor)
        shown.silent = silent
        shown.template = template
        let output = shown
        let pages: [Response]
        do {
            pages = try await Self.limited(settings.timeout) {
                try await fetch(request, through: target, runtime: runtime, output: output)
            }
        } catch {
            runtime.writeRecording()
            throw error
        }
        let recorded = runtime.writeRecording()
        let merge = paginate ? (target.items(self.target) ?? []) : nil
        let deadline =
            settings.timeout.map { max(0.001, $0 - Self.seconds(since: started)) } ?? JQProcess.defaultDeadline
        // A GraphQL answer that holds `errors` fails as gh's does: the body printed, then the first message.
        let graphQLError = Self.isGraphQL(self.target) ? Self.graphQLError(pages) : nil
        try await Blocking.run { [timeout = settings.timeout, terminated = graphQLError != nil] in
            try output.body(
                pages, filter: filter, merge: merge, deadline: deadline, timeout: timeout, terminated: terminated)
        }
        if let graphQLError { throw ExitReport.failure(redactor().redact(graphQLError)) }
        if !recorded { throw ExitReport.failure() }
    }

    /// What the call's output is redacted with, asked each time something is printed: the
    /// client's secrets and credential as they are then (an App's installation token, a token
    /// from gh's `hosts.yml` or `gh auth token`, all resolved on the first request), every
    /// secret the process learned meanwhile, and the credentials `request` carries by name
    /// (`-H 'X-Api-Key: …'`), which an answer may echo.
    static func redactor(of client: APIClient, secrets: SecretRegistry, request: Request) -> @Sendable () -> Redactor {
        let sent = try? client.prepare(request)
        return {
            let known = client.redactor.adding(secrets.redactor.secrets)
            return sent.map { known.adding(credentialsOf: $0) } ?? known
        }
    }

    /// The client the call goes through: the one named, else the one whose base URL the absolute
    /// URL is under, else the plain client (no credentials).
    func resolve(_ runtime: Runtime) throws -> ApiTarget {
        let plugins = runtime.pluginClients.map(ApiTarget.plugin)
        let builtIn = ClientRegistry.all.compactMap { $0.api?(runtime) }
        let all = builtIn + plugins
        if let client {
            if let found = all.first(where: { $0.name == client }) { return found }
            throw Self.unknownClient(client, among: all.map(\.name))
        }
        guard ["http://", "https://"].contains(where: { target.lowercased().hasPrefix($0) }) else {
            throw ExitReport.usage(
                "\(target.debugDescription) is not an http(s) URL: name the client of a path "
                    + "(apimacro api github /users/octocat); the clients are \(all.map(\.name).joined(separator: ", "))"
            )
        }
        return all.first { Self.isUnder($0.client.configuration.baseURL, target) } ?? ApiTarget.plain(runtime)
    }

    /// "no client named 'X'; did you mean …; the clients are …".
    static func unknownClient(_ client: String, among names: [String]) -> ExitReport {
        .usage(
            "no client named '\(client)'\(SettingCheck.didYouMean(client, names)); "
                + "the clients are \(names.joined(separator: ", "))")
    }

    /// Whether `url` is at or below `base` (same scheme, host and port; a path under base's).
    static func isUnder(_ base: String, _ url: String) -> Bool {
        guard !base.isEmpty, let origin = Origin(url: base), Origin(url: url) == origin else { return false }
        let prefix = path(of: base)
        let given = path(of: url)
        return prefix.isEmpty || prefix == "/" || given == prefix || given.hasPrefix(prefix + "/")
    }

    /// The path of an absolute URL, without its query or fragment.
    static func path(of url: String) -> Substring {
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? url[...]
        return afterScheme.drop { $0 != "/" }.prefix { $0 != "?" && $0 != "#" }
    }

    /// `target` with what may never stand in a URL as it is percent-encoded, as gh api's Go URL
    /// does: spaces and other controls, non-ASCII letters (as UTF-8), the double quote, angle
    /// brackets, backslash, caret, backtick and curly braces and the bar.
    ///
    /// `repos/a b/x` is `repos/a%20b/x` rather than libcurl's "URL using bad/illegal format";
    /// what is already encoded (`%2F`), reserved characters and the query are left as typed.
    static func typable(_ target: String) -> String {
        func allowed(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x21, 0x23...0x3B, 0x3D, 0x3F...0x5B, 0x5D, 0x5F, 0x61...0x7A, 0x7E: true
            default: false
            }
        }
        return target.utf8.allSatisfy(allowed) ? target : target.percentEncoded(allowing: allowed)
    }

    /// The first request: the method, fields (query or JSON body), headers, `--input`'s body.
    func request(fields: ApiFields, headers: [(String, String)], body: [UInt8]? = nil) throws -> Request {
        let method = (method ?? (fields.isEmpty && body == nil ? "GET" : "POST")).uppercased()
        var request = Request(method, Self.typable(target), headers: headers)
        if let body {
            // As gh: the file is the body, the fields go to the query string; JSON unless -H says.
            request.query = fields.query
            let typed = headers.contains { $0.0.lowercased() == "content-type" }
            request.body = .raw(body, contentType: typed ? nil : "application/json")
        } else if ["GET", "HEAD"].contains(method) {
            request.query = fields.query
        } else if !fields.isEmpty {
            request.body = .json(Array(try fields.body().json.utf8))
        }
        return request
    }

    /// Whether `target` is an absolute http(s) URL (which needs no client).
    public static func isURL(_ target: String) -> Bool {
        ["http://", "https://"].contains { target.lowercased().hasPrefix($0) }
    }

    /// `--hostname HOST`'s base URL for GitHub, as gh picks it: github.com's API at
    /// `https://api.github.com`, any other host GitHub Enterprise Server's `https://HOST/api/v3`
    /// (http for a loopback host, which gets no TLS: a test server, a tunnel).
    ///
    /// - Throws: `ExitReport.usage` for a host with a scheme, a path or spaces.
    public static func gitHubBaseURL(hostname: String) throws -> String {
        let host = hostname.lowercased()
        guard !host.isEmpty, !host.contains("/"), !host.contains(where: \.isWhitespace), !host.contains("@") else {
            throw ExitReport.usage(
                "--hostname \(hostname.debugDescription): give a host name such as github.com or ghe.example.com, "
                    + "with no scheme or path")
        }
        if host == "github.com" || host == "api.github.com" { return "https://api.github.com" }
        let name =
            host.hasPrefix("[") ? String(host.prefix { $0 != "]" }.dropFirst()) : String(host.prefix { $0 != ":" })
        let loopback = name == "localhost" || name.hasSuffix(".localhost") || name.hasPrefix("127.") || name == "::1"
        return "\(loopback ? "http" : "https")://\(host)/api/v3"
    }

    /// `--input FILE`'s bytes (`-`: stdin).
    static func readInput(_ path: String) throws -> [UInt8] {
        if path == "-" { return StandardStreams.readInput() }
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ExitReport.usage("--input: cannot read \(path): \(SystemErrorText.reason(error))")
        }
    }

    /// Whether `target` is a GraphQL endpoint (`graphql`, GitHub Enterprise's `api/graphql`).
    static func isGraphQL(_ target: String) -> Bool {
        let path = target.contains("://") ? String(Self.path(of: target)) : target
        let plain = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = plain.trimmingScalars { $0 == "/" }
        return trimmed == "graphql" || trimmed.hasSuffix("/graphql")
    }

    /// The first of a GraphQL answer's `errors` as `github.graphql()` words it (its type, and how
    /// many more), or nil when no page holds any.
    static func graphQLError(_ pages: [Response]) -> String? {
        for page in pages {
            guard let object = JSONValue.parse(Data(page.body))?.object?.mapValues(\.native),
                let raw = object["errors"], !JSONValue.isNull(raw)
            else { continue }
            let errors = raw as? [Any] ?? [raw]
            guard let first = errors.first else { continue }
            let fields = first as? [String: Any]
            var message = (fields?["message"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? "\(first)"
            if let type = fields?["type"] as? String { message += " (\(type))" }
            if errors.count > 1 { message += " (and \(errors.count - 1) more)" }
            return "GraphQL: " + message
        }
        return nil
    }

    /// Whether `request` sets the query parameter `name`, in its fields or its target's query.
    static func names(_ name: String, _ request: Request) -> Bool {
        if request.query.contains(where: { $0.0 == name }) { return true }
        guard let mark = request.target.firstIndex(of: "?") else { return false }
        return request.target[request.target.index(after: mark)...].split(separator: "&").contains {
            $0.split(separator: "=", maxSplits: 1).first.map(String.init) == name
        }
    }

    /// `Name: value` split at its first colon.
    static func header(_ text: String) throws -> (String, String) {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw ExitReport.usage("-H \(text.debugDescription): write 'Name: value'")
        }
        let name = text[..<colon].trimmingWhitespace()
        let value = text[text.index(after: colon)...].trimmingWhitespace()
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace }) else {
            throw ExitReport.usage("-H \(text.debugDescription): write 'Name: value'")
        }
        return (name, value)
    }

    /// Sends the request, and with `--paginate` every next page; each answer's head is printed
    /// at once with `-i`; a failed answer is printed and ends the command.
    private func fetch(_ first: Request, through target: ApiTarget, runtime: Runtime, output: Output) async throws
        -> [Response]
    {
        let progress = paginate ? ProgressLine.forTerminal(runtime.settings) : nil
        progress?.begin()
        defer { progress?.erase() }
        var pages: [Response] = []
        var history = PageHistory()
        var request = first
        var kept = 0
        var items: Int? = 0
        let itemsPath = target.items(self.target) ?? []
        try await target.prepare()
        while true {
            try history.visit(request, on: target.client)
            let response = try await target.client.send(request)
            if include {
                progress?.erase()
                try output.head(response)
            }
            guard (200..<300).contains(response.status) else {
                progress?.erase()
                // The error line follows on stderr: the body ends with a newline, as gh's does
                // (as the server sent it: no --template).
                var plain = output
                plain.template = nil
                try await Blocking.run { [plain] in
                    try plain.body(
                        [response], filter: nil, merge: nil, deadline: JQProcess.defaultDeadline, terminated: true)
                }
                let client = target.client.configuration
                // The error line quotes the server's message, which may echo a credential.
                throw target.client.redacted(
                    APIError.status(
                        response, api: client.name, method: request.method, message: client.errorMessage(response)),
                    for: request)
            }
            pages.append(response)
            kept += response.body.count
            guard paginate else { break }
            try history.answered(response, pagination: target.pagination, on: target.client)
            guard kept <= Self.pagesLimit else {
                throw ExitReport.failure(
                    "--paginate: the \(pages.count) pages so far add up to more than \(Self.pagesLimit >> 20) MiB; "
                        + "ask for fewer (a narrower query), or page by hand")
            }
            let count = Self.itemCount(response.body, at: itemsPath)
            items = items.flatMap { total in count.map { total + $0 } }
            progress?.update(
                ProgressLine.pagesText(
                    client: target.name, pages: pages.count, items: items, requests: runtime.log.requests,
                    remaining: RateLimitInfo(headers: response.headers)?.remaining))
            guard var next = target.pagination.next(after: response, request: request, itemCount: count) else {
                break
            }
            next.validatesStatus = false
            next.cache = cache
            next.target = target.followLink(next.target)
            request = next
        }
        return pages
    }

    /// How many items a page holds: its length when it is an array, else that of the array at
    /// `path`; nil when neither (or when the body is too large to read here).
    static func itemCount(_ body: [UInt8], at path: [String]) -> Int? {
        guard let root = JSONValue.parse(body) else { return nil }
        if let list = root.array { return list.count }
        guard !path.isEmpty else { return nil }
        // An object of items (YOURLS's `links`: `link_1`, `link_2`, …) counts its members.
        let found = root.value(at: path)
        return found?.array?.count ?? found?.object?.count
    }

    /// Runs `work`, failing after `seconds` (nil: no limit) with the command's timeout message.
    static func limited<T: Sendable>(_ seconds: Double?, _ work: @escaping @Sendable () async throws -> T)
        async throws -> T
    {
        guard let seconds else { return try await work() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: Seconds.duration(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw ExitReport.failure("api ran longer than its --timeout of \(SecondsText.format(seconds)) s")
            }
            return value
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Seconds.seconds(elapsed)
    }
}

extension ApiCall {
    /// Where the answers go: stdout, redacted; on a terminal pretty, coloured (as the settings
    /// say) and with control characters escaped.
    struct Output: Sendable {
        /// Asked at each write: it knows the credentials learned by then.
        let currentRedactor: @Sendable () -> Redactor
        let terminal: Bool
        let color: Bool
        /// The `--jq` child's memory limit in bytes (`APIMACRO_JQ_MEMORY`).
        let memoryLimit: UInt64
        /// `--silent`: no body printed.
        var silent = false
        /// `--template`: each item as a line.
        var template: ApiTemplate?

        /// The redactor now.
        var redactor: Redactor { currentRedactor() }

        init(settings: Settings, redactor: @escaping @Sendable () -> Redactor) {
            currentRedactor = redactor
            memoryLimit = JQChild.memoryLimit(mebibytes: settings.jqMemory)
            terminal = isatty(STDOUT_FILENO) == 1
            color = settings.color.colors(STDOUT_FILENO)
        }

        /// `-i`: "HTTP 200 OK" and the headers, then a blank line.
        func head(_ response: Response) throws {
            let palette = Palette(enabled: color)
            let redactor = self.redactor
            var text = palette.paint("HTTP \(response.status) \(HTTPStatus.reason(response.status))", "1") + "\n"
            for field in response.headers.fields {
                var value = redactor.redactHeader(name: field.name, value: field.value)
                if terminal {
                    value = String(decoding: TerminalText.escapingControls(Array(value.utf8)), as: UTF8.self)
                }
                text += palette.paint(field.name, "34") + ": " + value + "\n"
            }
            try write(Array((text + "\n").utf8))
        }

        /// The bodies: through the filter, merged (`merge`: the items path of an object page),
        /// pretty-printed on a terminal when they are JSON, else as they came.
        func body(
            _ pages: [Response], filter: JQProcess?, merge: [String]?, deadline: Double, timeout: Double? = nil,
            terminated: Bool = false
        ) throws {
            guard !silent else { return }
            let redactor = self.redactor
            if let template {
                try write(Array(try render(pages, template: template, merge: merge).utf8))
                return
            }
            let bodies = pages.map { redactor.redact(bytes: $0.body) }
            let json = pages.allSatisfy(ApiCall.isJSON)
            if filter != nil || merge != nil || (terminal && json && !bodies.allSatisfy(\.isEmpty)) {
                let options = JQChild.Options(
                    merge: merge, pretty: terminal, color: color, rawStrings: filter != nil, sanitize: terminal)
                let process: JQProcess =
                    filter ?? JQProcess(program: ".", redactor: currentRedactor, memoryLimit: memoryLimit)
                try process.filter(bodies, options: options, deadline: deadline, timeout: timeout)
                return
            }
            for body in bodies where !body.isEmpty {
                var shown = terminal ? TerminalText.escapingControls(body) : body
                if terminal || terminated, shown.last != 0x0A { shown.append(0x0A) }
                try write(shown)
            }
        }

        /// `--template`'s lines: every item of every page (`merge`: where an object page keeps them).
        func render(_ pages: [Response], template: ApiTemplate, merge: [String]?) throws -> String {
            var text = ""
            for page in pages {
                let body = redactor.redact(bytes: page.body)
                guard !body.isEmpty else { continue }
                guard var value = JSONValue.parse(Data(body))?.native
                else {
                    throw ExitReport.failure("--template: the answer is not JSON; leave --template out to see it")
                }
                if let merge, !merge.isEmpty, !(value is [Any]), let items = JSONPath.value(in: value, path: merge) {
                    value = items
                }
                text += template.render(items: value)
            }
            return terminal ? String(decoding: TerminalText.escapingControls(Array(text.utf8)), as: UTF8.self) : text
        }

        /// Writes `bytes` to stdout; a reader that has gone ends the command quietly (141).
        func write(_ bytes: [UInt8]) throws {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                if written < 0 && errno == EPIPE { throw ExitReport.closedOutput }
                guard written > 0 else {
                    throw ExitReport.failure("cannot write the answer: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// Whether an answer is JSON: its `Content-Type` says so (`application/json`, `…+json`), or
    /// it has none and starts with `{` or `[`.
    static func isJSON(_ response: Response) -> Bool {
        if let type = response.headers["content-type"]?.lowercased() {
            let media = type.split(separator: ";").first.map { $0.trimmingWhitespace() } ?? ""
            return media == "application/json" || media.hasSuffix("+json") || media == "text/json"
        }
        let first = response.body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }
}
