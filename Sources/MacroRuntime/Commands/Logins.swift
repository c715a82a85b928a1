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
            case .pastedKey:
                lines.append("\(client.name): reads an API key from standard input.")
            case nil:
                break
            }
        }
        let oauth = oauthName.map { "like \($0)" } ?? "through the OAuth2 flow"
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
        let outside = lookup.found.map { found in found.source.name + (found.detail.map { " (\($0))" } ?? "") }
        guard client.readsStoredLogin else {
            return Status(name: client.name, source: outside, problem: outside == nil ? lookup.problems.first : nil)
        }
        do {
            let stored = try store.token(for: client.name) != nil ? "stored login (\(store.path.path))" : nil
            return Status(name: client.name, source: outside ?? stored, problem: nil)
        } catch {
            return Status(name: client.name, source: outside, problem: String(describing: error))
        }
    }

    /// Every token `apimacro login` stored, for redaction (reports, `--output-dir` files);
    /// empty when the store cannot be read (commands that use it report why).
    public var storedSecrets: [String] {
        ((try? store.names()) ?? []).compactMap { try? store.token(for: $0)?.revealed }
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
    /// `say` prints a line for the user; `prompt` reads one.
    public func login(
        _ name: String, mode: Mode, say: @Sendable (String) -> Void, prompt: @Sendable () -> String?
    ) async throws {
        if let client = ClientRegistry.named(name)?.descriptor, client.login != nil {
            return try await login(client, mode: mode, say: say, prompt: prompt)
        }
        let registry = PluginRegistry.load(settings: settings)
        guard let manifest = registry.plugin(named: name) else {
            if let failure = registry.failure(named: name) {
                throw MacroError("plugin '\(name)' did not load: \(failure.error)")
            }
            let names = Logins.loginNames + registry.plugins.filter { $0.auth != .none }.map(\.name)
            let fromEnvironment = ClientRegistry.all.map(\.descriptor).filter {
                $0.login == nil && !$0.credentialVariables.isEmpty
            }.map { "\($0.name) reads \($0.credentialVariables.joined(separator: " or "))" }
            throw MacroError(
                "no login for '\(name)': apimacro can log in to \(names.joined(separator: ", ")); \(fromEnvironment.joined(separator: "; "))"
            )
        }
        try await login(manifest.descriptor, mode: mode, say: say, prompt: prompt)
    }

    /// Logs in to `client` as its descriptor says, built-in or plugin alike: the OAuth
    /// implicit grant, or a pasted key.
    private func login(
        _ client: ClientDescriptor, mode: Mode, say: @Sendable (String) -> Void, prompt: @Sendable () -> String?
    ) async throws {
        switch client.login {
        case .oauthImplicit(let login):
            try await loginImplicit(
                client.name, flow: login.flow(in: settings.view()), mode: mode, say: say, prompt: prompt)
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

    /// The OAuth 2 implicit grant for `name` (Instagram, `oauth2_implicit` plugins): the token is stored under `name`.
    private func loginImplicit(
        _ name: String, flow: OAuthImplicitFlow, mode: Mode, say: @Sendable (String) -> Void,
        prompt: @Sendable () -> String?
    ) async throws {
        var flow = flow
        let token: Secret
        switch mode {
        case .redirectURL(let redirect):
            let expected = try flow.takePendingState(for: name, in: settings.home)
            token = try flow.complete(redirect: redirect, expectedState: expected)
        case .listen(let port):
            let listener = try LoopbackListener(port: port)
            defer { listener.close() }
            flow.redirectURI = "http://127.0.0.1:\(listener.port)/callback"
            let state = OAuthImplicitFlow.newState()
            say("Open this URL in a browser and allow access (waiting up to 5 minutes on 127.0.0.1:\(listener.port)):")
            say(flow.authorizationURL(state: state))
            let redirect = try await listener.waitForRedirect(timeout: 300, callbackPath: "/callback")
            token = try flow.complete(redirect: redirect, expectedState: state)
        case .paste:
            let state = OAuthImplicitFlow.newState()
            try flow.savePendingState(state, for: name, in: settings.home)
            say("Open this URL in a browser and allow access:")
            say(flow.authorizationURL(state: state))
            say("Then paste the address your browser was sent to (or run: apimacro login \(name) --redirect-url URL):")
            guard let line = prompt()?.trimmingCharacters(in: .whitespacesAndNewlines), !line.isEmpty else {
                say("No address given; finish later with: apimacro login \(name) --redirect-url URL")
                return
            }
            _ = try flow.takePendingState(for: name, in: settings.home)
            token = try flow.complete(redirect: line, expectedState: state)
        }
        try store.save(token, for: name, kind: "access_token")
        say("\(name): logged in; the token is stored in \(store.path.path) (mode 0600).")
    }
}

extension Logins {
    /// `auth status --check`: for each client of `statuses` that has a credential, what its
    /// service says of it (`IdentityCheck`: who, scopes, expiry), or "check not supported" for a
    /// client that declares no check, or why the check failed; by client name.
    ///
    /// Never the credential: answers and errors pass through the redactor.
    public func check(_ statuses: [Status]) async -> [String: String] {
        let plugins = PluginRegistry.load(settings: settings).plugins.map(\.descriptor)
        let descriptors = ClientRegistry.all.map(\.descriptor) + plugins
        let redactor = Redactor(secrets: settings.secrets + storedSecrets)
        let transport = CurlTransport(userAgent: "apimacro/\(ApimacroModule.version)", network: settings.network)
        let context = IdentityCheck.Context(
            transport: transport, log: ExchangeLog(logger: nil), redactor: redactor,
            warn: { line in FileHandle.standardError.write(Data((redactor.redact(line) + "\n").utf8)) })
        var results: [String: String] = [:]
        for status in statuses where status.source != nil {
            guard let descriptor = descriptors.first(where: { $0.name == status.name }) else { continue }
            guard let check = descriptor.identityCheck else {
                results[status.name] = "check not supported"
                continue
            }
            let view = settings.view(storedCredential: (try? store.token(for: status.name)) ?? nil)
            do {
                results[status.name] = redactor.redact(try await check.ask(view, context))
            } catch let error as APIError {
                results[status.name] = "check failed: " + redactor.redact(error.description)
            } catch {
                results[status.name] = "check failed: " + redactor.redact(String(describing: error))
            }
        }
        try? await transport.shutdown()
        return results
    }
}
