import Clients
import Foundation
import PluginHost
import WebAPI

/// `apimacro login`, `logout` and `auth status`: getting, storing and
/// describing credentials without ever printing one.
public struct Logins: Sendable {
    let settings: Settings
    let store: CredentialStore

    public init(settings: Settings) {
        self.settings = settings
        store = CredentialStore(home: settings.home)
    }

    /// The built-in clients `login` knows (plugins with credentials come on top).
    public static var loginNames: [String] { ClientRegistry.loginNames }

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
        for client in ClientRegistry.all.map(\.descriptor) {
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
        /// Where the credential comes from (`env APIMACRO_GITHUB_TOKEN`, `stored login`), or nil for none.
        public let source: String?
        /// A problem reading it, if any.
        public let problem: String?
    }

    /// Which clients have credentials and where from: the built-in ones, then the plugins,
    /// each as its descriptor says (those with no credential of their own are left out).
    public func status() -> [Status] {
        let plugins = PluginRegistry.load(settings: settings).plugins.map(\.descriptor)
        return (ClientRegistry.all.map(\.descriptor) + plugins).compactMap(status(of:))
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
            let stored = "stored login (\(store.path.path))" + (entry.expiresAt.map { Self.life(expiresAt: $0) } ?? "")
            // The sources are read in their order, the stored login among them (GitHub's comes
            // before gh's): the first that holds one is the one used.
            let withStored = client.lookUp(in: settings.view(storedCredential: entry.token))
            guard let used = withStored.found, !used.source.isStoredLogin else {
                return Status(name: client.name, source: stored, problem: withStored.problems.first)
            }
            return Status(
                name: client.name,
                source: settings.describe(used.source) + (used.detail.map { " (\($0))" } ?? ""), problem: nil)
        } catch {
            return Status(name: client.name, source: outside, problem: SystemErrorText.describe(error))
        }
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
            guard let entry = try? store.entry(for: name) else { return [] }
            return [entry.token.revealed] + (entry.refreshToken.map { [$0.revealed] } ?? [])
        }
    }

    /// Removes a stored credential; false when there was none.
    ///
    /// Lines of the REPL's history that hold the token (a pasted redirect URL, a
    /// typed call) go too.
    public func logout(_ name: String) throws -> Bool {
        // A corrupt entry has no token to look for; a corrupt file stops `remove` with its error.
        let token = (try? store.entry(for: name)) ?? nil
        let removed = try store.remove(name)
        if let token = token?.token {
            try ReplHistory(file: settings.home.appendingPathComponent("history")).scrub(token.revealed)
        }
        return removed
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
        if let client = ClientRegistry.named(name)?.descriptor, client.login != nil {
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
            let fromEnvironment = ClientRegistry.all.map(\.descriptor).filter {
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
            ClientRegistry.named(name)?.descriptor.login == nil
            ? registry.plugin(named: name)?.descriptor : ClientRegistry.named(name)?.descriptor
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
            say("Paste \(label) (it is stored in \(store.path.path), mode 0600; \(variable) overrides it):")
            guard let key = prompt()?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty else {
                throw APIError(.auth, "no key given; nothing stored")
            }
            try store.save(Secret(key), for: client.name, kind: "api_key")
            say("\(client.name): key stored.")
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
        try store.save(token, for: name, kind: "access_token")
        say("\(name): logged in; the token is stored in \(store.path.path) (mode 0600).")
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
        try store.save(
            issued.token, for: login.name, kind: "access_token", scope: issued.scope, expiresAt: issued.expiresAt)
        say(
            "\(login.name): logged in; the token\(Self.validity(issued.expiresAt)) is stored in \(store.path.path) (mode 0600)."
        )
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
        try store.save(
            issued.token, for: login.name, kind: "access_token", scope: issued.scope, expiresAt: issued.expiresAt,
            refreshToken: issued.refreshToken, refreshExpiresAt: issued.refreshExpiresAt)
        say(
            "\(login.name): logged in; the token\(Self.validity(issued.expiresAt)) is stored in \(store.path.path) (mode 0600)."
        )
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
            guard let line = prompt()?.trimmingCharacters(in: .whitespacesAndNewlines), !line.isEmpty else {
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
    public func store(token: String, for name: String, say: @Sendable (String) -> Void) throws {
        let token = token.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw APIError(.auth, "no token given on standard input; nothing stored") }
        guard !token.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw APIError(.auth, "the token read from standard input holds spaces or several lines; nothing stored")
        }
        let login =
            ClientRegistry.named(name)?.descriptor.login
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
        try store.save(Secret(token), for: name, kind: "access_token", expiresAt: expiresAt)
        say("\(name): token stored in \(store.path.path) (mode 0600)\(Self.assumedLife(expiresAt, now: now)).")
    }

    /// `; taken to be valid 60 days, as the provider's long-lived tokens are` when a lifetime was assumed.
    private static func assumedLife(_ expiresAt: Int?, now: Double) -> String {
        guard let expiresAt else { return "" }
        let days = daysLeft(expiresAt, now: now)
        return "; taken to be valid \(days) days, as long-lived tokens are, and refreshed before then"
    }

    /// The clients and plugins that log in by OAuth.
    static func oauthNames(settings: Settings) -> [String] {
        let builtIn = ClientRegistry.all.map(\.descriptor)
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
