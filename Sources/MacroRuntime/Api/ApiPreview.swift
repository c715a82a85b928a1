import Clients
import Platform
import PluginHost
import WebAPI

/// The request `apimacro api --dry-run` and `--curl` write out instead of sending.
///
/// `--dry-run` prints it as `-vv` does (redacted: a credential header keeps only its
/// scheme); `--curl` prints a `curl` command line that sends the same request, with every secret
/// written as a shell variable (`"Authorization: Bearer $APIMACRO_GITHUB_TOKEN"`) and a comment
/// line saying where a secret with no variable of its own is kept (a stored login).
struct ApiPreview {
    /// The request as the client prepares it (absolute URL, headers, body), credential not yet attached.
    let exchange: Exchange
    /// The client's credential, when it goes with this URL (its base URL's origin, over https or to loopback).
    let credential: Credential?
    /// What everything else is redacted with: every secret the process knows.
    let redactor: Redactor
    /// Where the credential comes from: the variables that hold it (none for a stored login),
    /// and a comment about it when a variable alone does not say.
    let origin: CredentialOrigin
    /// Whether the client reads its credential only when a request is sent (gh's token, a
    /// GitHub App's), so that it is not known here.
    let deferred: Bool

    /// Where a client's credential comes from, for `--curl`.
    struct CredentialOrigin {
        /// The variables that hold it: one, or a basic login's user and password.
        var variables: [String]
        /// Lines (without `# `) telling where the value is when no exported variable holds it.
        var comments: [String] = []
    }

    /// The preview of `request` through `target`; nothing is sent and nothing is read over the network.
    init(_ request: Request, target: ApiTarget, runtime: Runtime) throws {
        let client = target.client
        var prepared = try client.prepare(request)
        // The transport's own, sent with every request that names none.
        if prepared.headers["User-Agent"] == nil {
            prepared.headers.set("User-Agent", "apimacro/\(ApimacroModule.version)")
        }
        exchange = prepared
        let allows = CredentialStage(credential: nil, baseURL: client.configuration.baseURL).allows(exchange.url)
        credential = allows ? client.credential : nil
        redactor = client.redactor.adding(runtime.secrets.redactor.secrets).adding(credentialsOf: exchange)
        let descriptor = (BuiltInClients.descriptors + runtime.plugins.plugins.map(\.descriptor))
            .first { $0.name == target.name }
        deferred =
            allows && client.credential == nil
            && (descriptor?.credentialSources.contains { $0.isDeferred } ?? false)
        origin = Self.origin(of: credential, client: target.name, descriptor: descriptor, runtime: runtime)
    }

    /// Which source holds `credential`: the first of the client's sources outside the store that
    /// holds the same value, else the stored login.
    static func origin(
        of credential: Credential?, client: String, descriptor: ClientDescriptor?, runtime: Runtime
    ) -> CredentialOrigin {
        guard let credential else { return CredentialOrigin(variables: []) }
        let settings = runtime.settings
        if let found = descriptor?.lookUp(in: settings.view(), deferred: false).found,
            found.secret.revealed == credential.secret.revealed, !found.source.variables.isEmpty
        {
            let file = ConfigFile(home: settings.home).path.path
            let comments = found.source.variables.compactMap { variable in
                settings.configFileKeys[variable].map {
                    "\(variable) is set by \(ConfigFile.spelled($0)) in \(file): export it before running this line"
                }
            }
            return CredentialOrigin(variables: found.source.variables, comments: comments)
        }
        let place =
            descriptor?.readsStoredLogin == true
            ? "the token `apimacro login \(client)` stored in \(runtime.credentials.path.path)"
            : "\(client)'s credential"
        return CredentialOrigin(variables: ["TOKEN"], comments: ["TOKEN: set it to \(place) (not shown here)"])
    }

    /// `--dry-run`'s text: the request line, headers and body (up to 4 KiB), redacted.
    var text: String {
        var wired = exchange
        if let credential { wired = CredentialStage(credential: credential, baseURL: exchange.url).wire(exchange) }
        var lines = ExchangeText.request(
            method: wired.method, url: wired.url, headers: wired.headers, body: wired.body,
            redactor: credential.map { redactor.adding($0.wireForms) } ?? redactor, marked: false)
        if deferred {
            lines.insert(
                "# the client's credential is read when a request is sent (gh, a GitHub App): not shown", at: 0)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `--curl`'s text: comment lines, then one `curl` command line.
    ///
    /// - Parameter input: `--input FILE`, sent as `--data-binary @FILE` (the body is the file's).
    /// - Returns: the lines, each ending in a newline.
    func curl(input: String?) -> String {
        var comments = origin.comments
        var words: [ShellWord] = [.plain("curl"), .plain("--silent"), .plain("--show-error")]
        if exchange.method != "GET" || !exchange.body.isEmpty { words += [.plain("-X"), .text(exchange.method)] }
        var url: ShellWord = .text(redactor.redactURL(exchange.url))
        var headers = exchange.headers
        if let credential {
            let variables = origin.variables
            switch credential {
            case .bearer:
                headers.remove("Authorization")
                words += [.plain("-H"), .parts([.text("Authorization: Bearer "), .variable(variables[0])])]
            case .header(let name, _):
                headers.remove(name)
                words += [.plain("-H"), .parts([.text("\(name): "), .variable(variables[0])])]
            case .basic(let user, _):
                headers.remove("Authorization")
                let userPart: ShellWord = variables.count == 2 ? .variable(variables[0]) : .text(user)
                words += [.plain("-u"), .parts([userPart, .text(":"), .variable(variables[variables.count - 1])])]
            case .query(let name, _):
                let separator = exchange.url.contains("?") ? "&" : "?"
                url = .parts([
                    .text(redactor.redactURL(exchange.url) + "\(separator)\(name)="), .variable(variables[0]),
                ])
            }
        }
        if deferred {
            comments.append(
                "the client's credential is read when a request is sent (gh, a GitHub App): add it yourself")
        }
        for field in headers.fields {
            if CredentialNames.isCredentialHeader(field.name) {
                // A credential given with -H: its own variable, never its value.
                let variable = Self.variableName(field.name)
                comments.append("\(variable): set it to the \(field.name) value given with -H (not shown here)")
                let scheme = field.value.split(separator: " ", maxSplits: 1)
                let prefix =
                    scheme.count == 2 && ["basic", "bearer", "token", "digest"].contains(scheme[0].lowercased())
                    ? "\(scheme[0]) " : ""
                words += [.plain("-H"), .parts([.text("\(field.name): \(prefix)"), .variable(variable)])]
            } else {
                words += [.plain("-H"), .text("\(field.name): \(redactor.redact(field.value))")]
            }
        }
        if !exchange.body.isEmpty {
            if let input, input != "-" {
                words += [.plain("--data-binary"), .text("@" + input)]
            } else if let body = String(validating: redactor.redact(bytes: exchange.body), as: UTF8.self),
                !body.contains("\0")
            {
                words += [.plain("--data-binary"), .text(body)]
            } else {
                comments.append("the body is not text: pipe it in (it is read from standard input here)")
                words += [.plain("--data-binary"), .text("@-")]
            }
        }
        words.append(url)
        return comments.map { "# \($0)\n" }.joined() + words.map(\.quoted).joined(separator: " ") + "\n"
    }

    /// `X-Api-Key` → `X_API_KEY`.
    static func variableName(_ header: String) -> String {
        String(header.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}

/// One word of a POSIX shell command line.
indirect enum ShellWord {
    /// Written as it is (a word with nothing the shell reads specially).
    case plain(String)
    /// Any text, quoted as it needs.
    case text(String)
    /// `$NAME`, expanded by the shell.
    case variable(String)
    /// Text and variables in one word: `"Authorization: Bearer $TOKEN"`.
    case parts([ShellWord])

    /// The word as the shell reads it back.
    var quoted: String {
        switch self {
        case .plain(let word): word
        case .text(let text): Self.singleQuoted(text)
        case .variable(let name): "\"$\(name)\""
        case .parts(let parts):
            "\""
                + parts.enumerated().map { index, part in
                    switch part {
                    case .variable(let name):
                        // `${NAME}` when a letter, digit or _ follows, which `$NAME` would take in.
                        let next = parts.dropFirst(index + 1).first.flatMap(\.leading)
                        return next.map { $0.isLetter || $0.isNumber || $0 == "_" } == true ? "${\(name)}" : "$\(name)"
                    case .text(let text), .plain(let text): return Self.doubleQuotedInside(text)
                    case .parts: return ""
                    }
                }.joined() + "\""
        }
    }

    /// The first character the word puts on the line.
    var leading: Character? {
        switch self {
        case .plain(let text), .text(let text): text.first
        case .variable: "$"
        case .parts(let parts): parts.first?.leading
        }
    }

    /// `text` between single quotes (a `'` as `'\''`); bare when it has only safe characters.
    ///
    /// Every `'` byte is replaced, also one a combining mark follows (one character for Swift,
    /// and for Foundation's search, which left it there to end the quoted word).
    static func singleQuoted(_ text: String) -> String {
        let safe =
            !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "@%+=:,./_-".contains($0)) }
        return safe ? text : "'" + text.replacingLiteral("'", with: "'\\''") + "'"
    }

    /// `text` escaped for the inside of double quotes: `\`, `$`, `` ` `` and `"`.
    static func doubleQuotedInside(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\$`\"".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
