import Clients
import Platform
import PluginHost
import WebAPI

/// `apimacro login`, `logout` and `auth status`: getting, storing and
/// describing credentials without ever printing one.
public struct Logins: Sendable {
    let settings: Settings
    let store: CredentialStore
    /// The label a login stores its token under (`login --account`); nil: the account's own
    /// login name, as the service answers it (else `default`).
    let account: String?

    /// - Throws: `APIError` for an `account` that is not a label.
    public init(settings: Settings, account: String? = nil) throws {
        if let account, !CredentialStore.isLabel(account) {
            throw APIError(
                .invalidRequest,
                "--account '\(account)' is not an account label: use 1 to 64 letters, digits, '.', '_', '-', '@' "
                    + "or '+', starting with a letter or digit (such as work)")
        }
        self.settings = settings
        self.account = account
        store = settings.credentialStore()
    }

    /// The logins of `settings`, with no account label chosen.
    public init(settings: Settings) {
        self.settings = settings
        self.account = nil
        store = settings.credentialStore()
    }

    /// The built-in clients `login` knows (plugins with credentials come on top).
    public static var loginNames: [String] { BuiltInClients.loginNames }

    /// What `login` and `logout` take, in words: `instagram, shortener or a plugin`.
    public static var namesInWords: String {
        let names = loginNames
        return names.isEmpty ? "a plugin" : names.joined(separator: ", ") + " or a plugin"
    }

    /// `login`'s help: one line on how each built-in client with a login logs in (read from
    /// its descriptor), then one on the plugins.
    public static var help: String {
        var lines: [String] = []
        var oauthName: String?
        for client in BuiltInClients.descriptors {
            switch client.login {
            case .oauthImplicit(let login):
                oauthName = oauthName ?? client.name
                lines.append(
                    "\(client.name): prints the OAuth2 authorize URL (response_type=token), then either reads the "
                        + "address your browser was redirected to (pasted, or --redirect-url URL), or with --listen PORT "
                        + "serves the redirect URI on 127.0.0.1:PORT and catches the token itself. Needs "
                        + "\(login.clientID.variable) (and \(login.redirectURI.variable) for the paste flow).")
            case .oauthCode(let login):
                lines.append("\(client.name): \(login.help)")
            case .deviceFlow(let login):
                lines.append("\(client.name): \(login.help)")
            case .pastedKey:
                lines.append("\(client.name): reads an API key from standard input.")
            case nil:
                break
            }
        }
        let oauth = oauthName.map { "like \($0)" } ?? "by the OAuth2 implicit grant"
        lines.append(
            "A plugin: oauth2_implicit plugins log in \(oauth) (with APIMACRO_<NAME>_CLIENT_ID); "
                + "plugins with a key (query_key, header_key, bearer) read it from standard input.")
        return lines.joined(separator: "\n")
    }

    /// One line of `auth status`.
    public struct Status: Sendable, Equatable {
        public let name: String
        /// The stored accounts other than the one in use, each as `auth status` shows it under
        /// the client's line (`work (alice)`).
        public var otherAccounts: [String] = []
        /// Where the credential comes from (`env APIMACRO_GITHUB_TOKEN`, `stored login`), or nil for none.
        public let source: String?
        /// A problem reading it, if any.
        public let problem: String?
    }

    /// Which clients have credentials and where from: the built-in ones, then the plugins,
    /// each as its descriptor says (those with no credential of their own are left out).
    public func status() -> [Status] {
        let plugins = PluginRegistry.load(settings: settings).plugins.map(\.descriptor)
        return (BuiltInClients.descriptors + plugins).compactMap(status(of:))
    }

    /// Where `client`'s credential comes from: the first of its sources outside the store that
    /// holds one, else the stored login, with the store's problem if it cannot be read.
    private func status(of client: ClientDescriptor) -> Status? {
        guard !client.credentialSources.isEmpty || client.login != nil else { return nil }
        let lookup = client.lookUp(in: settings.view())
        let outside = lookup.found.map { found in
            settings.describe(found.source) + (found.detail.map { " (\($0))" } ?? "")
        }
        guard client.readsStoredLogin else {
            return Status(name: client.name, source: outside, problem: outside == nil ? lookup.problems.first : nil)
        }
        do {
            guard let entry = try store.entry(for: client.name) else {
                return Status(name: client.name, source: outside, problem: outside == nil ? lookup.problems.first : nil)
            }
            let accounts = try store.accounts(of: client.name)
            let others = try store.entries(for: client.name).filter { $0.account != entry.account }.map {
                Self.describe($0, active: false) + ($0.expiresAt.map { Self.life(expiresAt: $0) } ?? "")
            }
            let several = (accounts?.labels.count ?? 0) > 1
            // One account with no label of its own (a login from before accounts) is named as before.
            let named =
                several || entry.account != CredentialStore.defaultLabel
                ? ", " + Self.describe(entry, active: several) : ""
            let stored =
                "stored login (\(store.path.path))\(named)" + (entry.expiresAt.map { Self.life(expiresAt: $0) } ?? "")
            // The sources are read in their order, the stored login among them (GitHub's comes
            // before gh's): the first that holds one is the one used.
            let withStored = client.lookUp(in: settings.view(storedCredential: entry.token))
            guard let used = withStored.found, !used.source.isStoredLogin else {
                return Status(
                    name: client.name, otherAccounts: others, source: stored, problem: withStored.problems.first)
            }
            return Status(
                name: client.name,
                otherAccounts: [Self.describe(entry, active: true) + " (not used: the line above wins)"] + others,
                source: settings.describe(used.source) + (used.detail.map { " (\($0))" } ?? ""), problem: nil)
        } catch {
            return Status(name: client.name, source: outside, problem: SystemErrorText.describe(error))
        }
    }

    /// `account work (alice), active`: an account's label, whose it is when the service said and
    /// differs, and whether it is the active one.
    static func describe(_ entry: CredentialStore.Entry, active: Bool) -> String {
        let user = entry.user.flatMap { $0 == entry.account ? nil : " (\(CredentialStore.printable($0)))" } ?? ""
        return "account \(entry.account)\(user)" + (active ? ", active" : "")
    }

    /// Whole days from `now` to `expiresAt`, to the nearest (negative once it has passed).
    static func daysLeft(_ expiresAt: Int, now: Double) -> Int {
        let days = (Double(expiresAt) - now) / 86_400
        return days.isFinite ? Int(days.rounded()) : 0
    }

    /// How long a stored token has left, for `auth status`: `, 59 days left`, or when it expired
    /// and what to run.
    static func life(expiresAt: Int, now: Double = Date().timeIntervalSince1970) -> String {
        let seconds = Double(expiresAt) - now
        if seconds <= 0 {
            let ago = -daysLeft(expiresAt, now: now)
            return ", expired \(ago < 1 ? "today" : "\(ago) day\(ago == 1 ? "" : "s") ago"): log in again"
        }
        let days = daysLeft(expiresAt, now: now)
        return seconds < 86_400 ? ", expires within a day" : ", \(days) day\(days == 1 ? "" : "s") left"
    }

    /// Every token `apimacro login` stored, for redaction (reports, `--output-dir` files);
    /// empty when the store cannot be read (commands that use it report why).
    public var storedSecrets: [String] {
        ((try? store.names()) ?? []).flatMap { name -> [String] in
            ((try? store.entries(for: name)) ?? []).flatMap { entry in
                [entry.token.revealed] + (entry.refreshToken.map { [$0.revealed] } ?? [])
            }
        }
    }

    /// Removes a stored credential; false when there was none.
    ///
    /// Lines of the REPL's history that hold the token (a pasted redirect URL, a
    /// typed call) go too.
    ///
    /// With `account`, only that account goes; without, `name`'s only account (a client with
    /// several asks which).
    public func logout(_ name: String, account: String? = nil) throws -> Bool {
        if account == nil, let accounts = try? store.accounts(of: name), accounts.labels.count > 1 {
            throw APIError(
                .invalidRequest,
                "\(name) has \(accounts.labels.count) accounts (\(accounts.labels.joined(separator: ", ")); active: "
                    + "\(accounts.active)): say which to log out of, as in: apimacro logout \(name) --account "
                    + "\(accounts.active)")
        }
        // A corrupt entry has no token to look for; a corrupt file stops `remove` with its error.
        let tokens =
            account.map { label in ((try? store.entry(for: name, account: label)) ?? nil).map { [$0] } ?? [] }
            ?? ((try? store.entries(for: name)) ?? [])
        let removed = try store.remove(name, account: account)
        for entry in tokens {
            try ReplHistory(file: settings.home.appendingPathComponent("history")).scrub(entry.token.revealed)
        }
        return removed
    }

    /// Where the tokens `login` stored are (the system keyring, or the file and why), for
    /// `auth status`; nil when none is stored.
    public var storage: String? { store.storage() }

    /// The label of `name`'s active account, or nil when it has none.
    public func activeAccount(of name: String) -> String? {
        ((try? store.accounts(of: name)) ?? nil)?.active
    }

    /// `auth switch NAME [LABEL]`: makes `label` (or, with none, the other of two) the active
    /// account of `name`; returns the label now active.
    public func switchAccount(_ name: String, to label: String?) throws -> String {
        try store.activate(label, for: name)
    }

    /// Stores a new login's token under its account: the `--account` label, else the account's
    /// own login name as the service answers it (`GET /user`'s `login` for GitHub), else
    /// `default`; the account becomes the active one.
    ///
    /// Returns the line that says which it is.
    private func keep(
        _ token: Secret, for name: String, kind: String, scope: String? = nil, expiresAt: Int? = nil,
        refreshToken: Secret? = nil, refreshExpiresAt: Int? = nil
    ) async throws -> (line: String, place: String) {
        let user = await whoIs(name, token: token)
        let label = account ?? user.flatMap { CredentialStore.isLabel($0) ? $0 : nil } ?? CredentialStore.defaultLabel
        let placed = try store.save(
            token, for: name, account: label, user: user, activate: true, kind: kind, scope: scope,
            expiresAt: expiresAt, refreshToken: refreshToken, refreshExpiresAt: refreshExpiresAt)
        let labels = (try? store.accounts(of: name))?.labels ?? [label]
        let whose = user.flatMap { $0 == label ? nil : " (\(CredentialStore.printable($0)))" } ?? ""
        let others = labels.filter { $0 != label }
        let line =
            "\(name): account \(label)\(whose) is the active one"
            + (others.isEmpty
                ? "." : "; also stored: \(others.joined(separator: ", ")) (apimacro auth switch \(name) LABEL).")
        return (line, placed)
    }

    /// Whom the service says `token` belongs to (its identity check: GitHub's `GET /user`), or
    /// nil when the client has no check or the answer did not say.
    private func whoIs(_ name: String, token: Secret) async -> String? {
        guard let entry = ClientRegistry.named(name), let api = entry.api else { return nil }
        var settings = self.settings
        settings.accounts[name] = CredentialStore.defaultLabel
        settings.useCache = false
        settings.record = nil
        settings.verbose = false
        guard let runtime = try? Runtime(settings: settings, warn: { _ in }, tokens: [name: token]),
            let identity = entry.descriptor.identity(in: runtime.view(of: entry.descriptor))
        else { return nil }
        let target = api(runtime)
        do {
            try await target.prepare()
            let response = try await target.client.send(identity.request)
            let account = identity.read(response).account
            return account.isEmpty || account.count > 200 ? nil : account
        } catch {
            return nil
        }
    }

    /// How `login` gets the redirect.
    public enum Mode: Sendable {
        /// The user pastes the redirect URL (read by `prompt`; nil means "later, with --redirect-url").
        case paste
        /// The redirect URL given on the command line (completes an earlier `login`).
        case redirectURL(String)
        /// Serve the redirect URI on 127.0.0.1:port and catch the fragment.
        case listen(port: Int)
    }

    /// Logs in to `name`: a built-in client with a login, else a plugin.
    ///
    /// `say` prints a line for the user; `prompt` reads one; `hostname` is the host a device-flow
    /// login (GitHub's) asks, when not its default.
    public func login(
        _ name: String, mode: Mode, hostname: String? = nil, say: @Sendable (String) -> Void,
        prompt: @Sendable () -> String?
    ) async throws {
        if let client = BuiltInClients.named(name)?.descriptor, client.login != nil {
            return try await login(client, mode: mode, hostname: hostname, say: say, prompt: prompt)
        }
        if hostname != nil {
            throw MacroError("--hostname is for a login by the device flow (github); \(name) takes none")
        }
        let registry = PluginRegistry.load(settings: settings)
        guard let manifest = registry.plugin(named: name) else {
            if let failure = registry.failure(named: name) {
                throw MacroError("plugin '\(name)' did not load: \(failure.error)")
            }
            let names = Logins.loginNames + registry.plugins.filter { $0.auth != .none }.map(\.name)
            // Each client without a login, with every place it reads its credential from (GitHub's
            // variables, then gh's own: its hosts.yml and `gh auth token`).
            let fromEnvironment = BuiltInClients.descriptors.filter {
                $0.login == nil && !$0.credentialVariables.isEmpty
            }.map { client in
                let others = client.credentialSources.filter { $0.variable == nil && !$0.isStoredLogin }.map {
                    // "gh: hosts.yml" reads as "gh's hosts.yml", "gh: gh auth token" as "gh auth token".
                    guard $0.name.hasPrefix("gh: ") else { return $0.name }
                    let rest = $0.name.dropFirst(4)
                    return rest.hasPrefix("gh ") ? String(rest) : "gh's \(rest)"
                }
                let variables = client.credentialVariables.joined(separator: " or ")
                return "\(client.name) reads \(variables)"
                    + (others.isEmpty ? "" : ", else \(others.joined(separator: ", "))")
            }
            let elsewhere = fromEnvironment.isEmpty ? "" : "; " + fromEnvironment.joined(separator: "; ")
            throw MacroError(
                "no login for '\(name)': apimacro can log in to \(names.joined(separator: ", "))\(elsewhere)")
        }
        try await login(manifest.descriptor, mode: mode, say: say, prompt: prompt)
    }

    /// The first half of an OAuth login taken in two steps (the REPL's `:login NAME` for a
    /// plugin): the authorize URL to open, its `state` saved as `apimacro login NAME` saves it;
    /// `login(name, mode: .redirectURL(…))` with the address the browser was sent to completes it.
    ///
    /// - Throws: `MacroError` when `name` has no OAuth login; `AuthError` when its app's client id
    ///   is not set.
    public func authorizationURL(for name: String) throws -> String {
        let registry = PluginRegistry.load(settings: settings)
        let client =
            BuiltInClients.named(name)?.descriptor.login == nil
            ? registry.plugin(named: name)?.descriptor : BuiltInClients.named(name)?.descriptor
        guard let client, case .oauthImplicit(let login) = client.login else {
            throw MacroError("\(name) has no OAuth login; apimacro login \(name) says how it logs in")
        }
        let flow = try login.flow(in: settings.view())
        let state = OAuthImplicitFlow.newState()
        try flow.savePendingState(state, for: name, in: settings.home)
        return flow.authorizationURL(state: state)
    }

    /// Logs in to `client` as its descriptor says, built-in or plugin alike: the OAuth
    /// implicit grant, the authorization-code grant, or a pasted key.
    private func login(
        _ client: ClientDescriptor, mode: Mode, hostname: String? = nil, say: @Sendable (String) -> Void,
        prompt: @Sendable () -> String?
    ) async throws {
        let login = client.login(in: settings.view())
        if hostname != nil {
            guard case .deviceFlow = login else {
                throw MacroError("--hostname is for a login by the device flow (github); \(client.name) takes none")
            }
        }
        switch login {
        case .deviceFlow(let login):
            try await loginDevice(login, hostname: hostname, say: say)
        case .oauthImplicit(let login):
            try await loginImplicit(
                client.name, flow: login.flow(in: settings.view()), mode: mode, say: say, prompt: prompt)
        case .oauthCode(let login):
            let view = settings.view()
            if let implicit = login.implicit?(view) {
                return try await loginImplicit(
                    client.name, flow: implicit.flow(in: view), mode: mode, say: say, prompt: prompt)
            }
            try await loginCode(login, view: view, mode: mode, say: say, prompt: prompt)
        case .pastedKey(let label, let variable):
            let place = store.keyring.unavailable == nil ? "the system keyring" : "\(store.path.path), mode 0600"
            say("Paste \(label) (it is stored in \(place); \(variable) overrides it):")
            guard let key = prompt()?.trimmingWhitespaceAndNewlines(), !key.isEmpty else {
                throw APIError(.auth, "no key given; nothing stored")
            }
            let account = try await keep(Secret(key), for: client.name, kind: "api_key")
            say("\(client.name): key stored \(account.place).")
            say(account.line)
        case nil:
            throw MacroError(client.noLogin ?? "\(client.name) has nothing to log in to")
        }
    }

    /// The OAuth 2 implicit grant for `name` (Instagram's legacy v1, `oauth2_implicit` plugins): the token is stored under `name`.
    private func loginImplicit(
        _ name: String, flow: OAuthImplicitFlow, mode: Mode, say: @Sendable (String) -> Void,
        prompt: @Sendable () -> String?
    ) async throws {
        let (redirect, flow, state) = try await browserStep(name, flow: flow, mode: mode, say: say, prompt: prompt)
        let token = try flow.complete(redirect: redirect, expectedState: state)
        let account = try await keep(token, for: name, kind: "access_token")
        say("\(name): logged in; the token is stored \(account.place).")
        say(account.line)
    }

    /// The OAuth 2 authorization-code grant (Instagram): the browser step, then the code
    /// redeemed by the client (over the network itself: never cached nor recorded), the token
    /// stored under the client's name with its expiry.
    private func loginCode(
        _ login: OAuthCodeLogin, view: SettingsView, mode: Mode, say: @Sendable (String) -> Void,
        prompt: @Sendable () -> String?
    ) async throws {
        var app = try login.app(in: view)
        let (redirect, flow, state) = try await browserStep(
            login.name, flow: login.flow(in: view), mode: mode, say: say, prompt: prompt)
        let code = try flow.code(from: redirect, expectedState: state)
        app.redirectURI = flow.redirectURI
        let transport = CurlTransport(userAgent: "apimacro/\(ApimacroModule.version)", network: settings.network)
        let issued: IssuedToken
        do {
            issued = try await login.redeem(code, app, transport, ExchangeLog(logger: nil))
        } catch {
            try? await transport.shutdown()
            throw error
        }
        try? await transport.shutdown()
        let account = try await keep(
            issued.token, for: login.name, kind: "access_token", scope: issued.scope, expiresAt: issued.expiresAt)
        say("\(login.name): logged in; the token\(Self.validity(issued.expiresAt)) is stored \(account.place).")
        say(account.line)
    }

    /// The device flow (GitHub's): the code asked for and said, the token polled for (over the
    /// network itself: never cached nor recorded) and stored under the client's name.
    private func loginDevice(
        _ login: OAuthDeviceLogin, hostname: String?, say: @Sendable (String) -> Void
    ) async throws {
        let view = settings.view()
        let (base, clientID) = try login.base(in: view, hostname: hostname)
        let transport = CurlTransport(userAgent: "apimacro/\(ApimacroModule.version)", network: settings.network)
        let issued: IssuedToken
        do {
            issued = try await login.run(
                base: base, clientID: clientID, transport: transport, timeout: view.requestTimeout, say: say)
        } catch {
            try? await transport.shutdown()
            throw error
        }
        try? await transport.shutdown()
        let account = try await keep(
            issued.token, for: login.name, kind: "access_token", scope: issued.scope, expiresAt: issued.expiresAt,
            refreshToken: issued.refreshToken, refreshExpiresAt: issued.refreshExpiresAt)
        say("\(login.name): logged in; the token\(Self.validity(issued.expiresAt)) is stored \(account.place).")
        say(account.line)
    }

    /// ` (valid 60 days)` for a token expiring then, "" when its expiry is not known.
    static func validity(_ expiresAt: Int?, now: Double = Date().timeIntervalSince1970) -> String {
        guard let expiresAt else { return "" }
        let days = daysLeft(expiresAt, now: now)
        return days >= 1 ? " (valid \(days) day\(days == 1 ? "" : "s"))" : ""
    }

    /// The browser step any OAuth login shares: the authorize URL printed, then the redirect it
    /// ends on (from `--redirect-url`, caught on the loopback listener, or pasted); the flow as
    /// used (its redirect URI is the listener's with `--listen`) and the state the redirect must
    /// carry.
    ///
    /// - Throws: `ExitReport.failure` when the user pasted nothing (the state is kept, so the
    ///   login can be finished later with `--redirect-url`).
    private func browserStep(
        _ name: String, flow: OAuthImplicitFlow, mode: Mode, say: @Sendable (String) -> Void,
        prompt: @Sendable () -> String?
    ) async throws -> (redirect: String, flow: OAuthImplicitFlow, state: String?) {
        var flow = flow
        switch mode {
        case .redirectURL(let redirect):
            return (redirect, flow, try flow.takePendingState(for: name, in: settings.home))
        case .listen(let port):
            let listener = try LoopbackListener(port: port)
            defer { listener.close() }
            flow.redirectURI = "http://127.0.0.1:\(listener.port)/callback"
            let state = OAuthImplicitFlow.newState()
            say("Open this URL in a browser and allow access (waiting up to 5 minutes on 127.0.0.1:\(listener.port)):")
            say(flow.authorizationURL(state: state))
            // Only a redirect with this login's state ends the wait (an `error=` too).
            let redirect = try await listener.waitForRedirect(timeout: 300, callbackPath: "/callback") {
                OAuthImplicitFlow.carries(state: state, $0)
            }
            return (redirect, flow, state)
        case .paste:
            let state = OAuthImplicitFlow.newState()
            try flow.savePendingState(state, for: name, in: settings.home)
            say("Open this URL in a browser and allow access:")
            say(flow.authorizationURL(state: state))
            say("Then paste the address your browser was sent to (or run: apimacro login \(name) --redirect-url URL):")
            guard let line = prompt()?.trimmingWhitespaceAndNewlines(), !line.isEmpty else {
                // Not logged in: a failure, so `apimacro login NAME && apimacro run …` stops here.
                throw ExitReport.failure(
                    "no address given, so not logged in; finish later with: apimacro login \(name) --redirect-url URL")
            }
            _ = try flow.takePendingState(for: name, in: settings.home)
            return (line, flow, state)
        }
    }

    /// `apimacro login NAME --token -`: stores `token` (read from standard input) for a client
    /// that logs in by OAuth, with the lifetime its provider gives such tokens when known.
    public func store(token: String, for name: String, say: @Sendable (String) -> Void) async throws {
        let token = token.trimmingWhitespaceAndNewlines()
        guard !token.isEmpty else { throw APIError(.auth, "no token given on standard input; nothing stored") }
        guard !token.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw APIError(.auth, "the token read from standard input holds spaces or several lines; nothing stored")
        }
        let login =
            BuiltInClients.named(name)?.descriptor.login
            ?? PluginRegistry.load(settings: settings)
            .plugin(named: name)?.descriptor.login
        var lifetime: Double?
        switch login {
        case .oauthCode(let code)?:
            lifetime = code.implicit?(settings.view()) == nil ? code.pastedTokenLifetime : nil
        case .oauthImplicit?, .deviceFlow?:
            break
        case .pastedKey?, nil:
            throw MacroError(
                "--token is for a login by OAuth (\(Self.oauthNames(settings: settings).joined(separator: ", "))); "
                    + "\(name) takes none")
        }
        let now = Date().timeIntervalSince1970
        let expiresAt = lifetime.map { Int(now + $0) }
        let account = try await keep(Secret(token), for: name, kind: "access_token", expiresAt: expiresAt)
        say("\(name): token stored \(account.place)\(Self.assumedLife(expiresAt, now: now)).")
        say(account.line)
    }

    /// `; taken to be valid 60 days, as the provider's long-lived tokens are` when a lifetime was assumed.
    private static func assumedLife(_ expiresAt: Int?, now: Double) -> String {
        guard let expiresAt else { return "" }
        let days = daysLeft(expiresAt, now: now)
        return "; taken to be valid \(days) days, as long-lived tokens are, and refreshed before then"
    }

    /// The clients and plugins that log in by OAuth.
    static func oauthNames(settings: Settings) -> [String] {
        let builtIn = BuiltInClients.descriptors
        let plugins = PluginRegistry.load(settings: settings).plugins.map(\.descriptor)
        return (builtIn + plugins).filter { descriptor in
            switch descriptor.login {
            case .oauthCode?, .oauthImplicit?, .deviceFlow?: true
            default: false
            }
        }.map(\.name)
    }
}

extension Logins {
}
