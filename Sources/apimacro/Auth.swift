import ArgumentParser
import Clients
import MacroRuntime
import Platform
import PluginHost

/// The client `login`, `logout` and `auth switch` act on: one with a login, or a plugin.
struct LoginClient: ParsableArguments {
    @Argument(help: "The client: \(Logins.namesInWords).", completion: .custom(Completions.loginNames))
    var name: String
}

/// `apimacro login NAME [--account LABEL] [--redirect-url URL | --listen PORT | --token - | --with-token]
/// [--hostname HOST]`.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to an API and store its token under $APIMACRO_HOME (mode 0600).",
        discussion: Logins.help)

    @OptionGroup var client: LoginClient

    @Option(help: ArgumentHelp("The address the browser was redirected to, to finish a login.", valueName: "url"))
    var redirectURL: String?

    @Option(
        help: ArgumentHelp(
            "Serve the redirect on 127.0.0.1:PORT and wait for it (0: any free port).", valueName: "port"))
    var listen: Int?

    @Option(
        help: ArgumentHelp(
            "Store a token read from standard input (give -), such as one the provider's dashboard generated.",
            valueName: "-"))
    var token: String?

    @Flag(help: "Store a token read from standard input (as gh auth login --with-token; the same as --token -).")
    var withToken = false

    @Option(
        help: ArgumentHelp(
            "The GitHub Enterprise Server host to log in to (github only; default github.com).", valueName: "host"))
    var hostname: String?

    @Option(
        help: ArgumentHelp(
            "Store the token as the account LABEL, which becomes the active one (default: the account's own login "
                + "name, as the service answers it).", valueName: "label"))
    var account: String?

    func validate() throws {
        if [redirectURL != nil, listen != nil, token != nil, withToken].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --redirect-url, --listen, --token and --with-token")
        }
        if let listen, !(0...65535).contains(listen) { throw ValidationError("--listen needs a port from 0 to 65535") }
        if let token, token != "-" {
            throw ValidationError(
                "--token takes - and reads the token from standard input (a token on the command line would "
                    + "show in ps and the shell's history)")
        }
    }

    func run() async throws {
        // Unbuffered, so a test or a script reading our output sees the URL at once.
        let say: @Sendable (String) -> Void = { line in StandardStreams.output(line + "\n") }
        let logins = try Logins(settings: try Settings.load(), account: account)
        if token != nil || withToken {
            return try await logins.store(token: readLine(strippingNewline: true) ?? "", for: client.name, say: say)
        }
        let mode: Logins.Mode = redirectURL.map { .redirectURL($0) } ?? listen.map { .listen(port: $0) } ?? .paste
        try await logins.login(client.name, mode: mode, hostname: hostname, say: say, prompt: { readLine() })
    }
}

/// `apimacro logout NAME [--account LABEL]`.
struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Remove a stored token (of \(Logins.namesInWords)).")

    @OptionGroup var client: LoginClient

    @Option(
        help: ArgumentHelp(
            "The account to log out of (needed when NAME has several; apimacro auth status lists them).",
            valueName: "label"))
    var account: String?

    func run() throws {
        let logins = Logins(settings: try Settings.load())
        let removed = try logins.logout(client.name, account: account)
        let which = account.map { " account \($0)" } ?? ""
        print(
            removed ? "\(client.name):\(which) logged out (stored token removed)." : "\(client.name): no stored token.")
        if removed, account != nil, let active = logins.activeAccount(of: client.name) {
            print("\(client.name): account \(active) is the active one.")
        }
    }
}

/// `apimacro auth status` (`apimacro auth` alone is `auth status`, as `plugins` is `plugins list`).
struct Auth: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Credentials: which clients have them and where from (never the secrets).",
        subcommands: [Status.self, Switch.self],
        defaultSubcommand: Status.self)

    /// `apimacro auth switch NAME [LABEL]`.
    struct Switch: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "switch",
            abstract: "Make another stored account of a client the active one.",
            discussion: """
                The active account is the one macros, apimacro api and batch use unless --account NAME=LABEL \
                or APIMACRO_<NAME>_ACCOUNT chooses another (a macro may also use github.as_account("work")). \
                With no LABEL, a client with exactly two accounts switches to the other.
                """)

        @OptionGroup var client: LoginClient

        @Argument(
            help: ArgumentHelp("The account to make active (apimacro auth status lists them).", valueName: "label"))
        var label: String?

        func run() throws {
            let active = try Logins(settings: try Settings.load()).switchAccount(client.name, to: label)
            print("\(client.name): account \(active) is the active one.")
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Which clients have credentials, and where from.",
            discussion: """
                With --check, each client with a credential asks its service who it belongs to, as \
                `gh auth status` does (GitHub: GET /user, the token's scopes and expiry; Instagram: GET me; \
                Bitly: GET /user; Shlink: whether the key is accepted), and prints the account, never the \
                credential; exit 1 when a service refused a credential or could not be reached.
                """)

        @Flag(help: "Ask each service whose credential it is (one request each).")
        var check = false

        @Option(help: "Colour: auto (on a terminal, unless NO_COLOR is set), always or never.")
        var color: String?

        func run() async throws {
            let settings = try Settings.load(color: color)
            let palette = settings.color.palette(for: STDOUT_FILENO)
            let stderrPalette = settings.color.palette(for: STDERR_FILENO)
            let plugins = PluginCatalog(settings: settings).registry.plugins
            for line in ShortSecrets.warnings(settings: settings, plugins: plugins) {
                MacroHost.standardError(stderrPalette.warning(line))
            }
            guard check else {
                let lines = Logins(settings: settings).status()
                let width = lines.map(\.name.count).max() ?? 0
                for line in lines {
                    print(Self.row(line, width: width))
                    for other in line.otherAccounts {
                        print(String(repeating: " ", count: width + 2) + "also stored: " + other)
                    }
                }
                if let storage = Logins(settings: settings).storage {
                    print("Tokens stored by apimacro login: \(storage).")
                }
                return
            }
            let warnings = settings.color.palette(for: STDERR_FILENO)
            let lines = try await IdentityChecks(settings: settings) { MacroHost.standardError(warnings.warning($0)) }
                .run()
            // One width for the name column, so the second column lines up however long a plugin's name is.
            let width = lines.map(\.status.name.count).max() ?? 0
            var failed = false
            for line in lines {
                print(Self.row(line.status, width: width))
                let indent = String(repeating: " ", count: width + 2)
                switch line.outcome {
                case .identity(let identity):
                    let facts = identity.facts.isEmpty ? "" : " (\(identity.facts.joined(separator: "; ")))"
                    print(indent + palette.good("✓") + " \(identity.account)\(facts)")
                case .failed(let reason):
                    failed = true
                    print(indent + palette.bad("✗ check failed:") + " \(reason)")
                case .notSupported:
                    print(indent + "check not supported for \(line.status.name)")
                case .noCredential:
                    break
                }
            }
            if failed { throw ExitCode.failure }
        }

        /// One line of `auth status`: the name, padded to `width`, and where its credential comes from.
        static func row(_ line: Logins.Status, width: Int) -> String {
            let state = line.source.map { "credentials from \($0)" } ?? "no credentials"
            return "\(line.name.padded(toLength: width))  \(state)"
                + (line.problem.map { " — \($0)" } ?? "")
        }
    }
}
