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

    /// One line of `auth status`.
    public struct Status: Sendable, Equatable {
        public let name: String
        /// Where the credential comes from (`env APIMACRO_GITHUB_TOKEN`, `stored login`), or nil for none.
        public let source: String?
        /// A problem reading it, if any.
        public let problem: String?
    }

    /// Which clients have credentials and where from.
    public func status() -> [Status] {
        let environment = settings.environment
        func env(_ names: [String]) -> String? {
            names.first { !(environment[$0] ?? "").isEmpty }.map { "env \($0)" }
        }
        func stored(_ name: String) -> (String?, String?) {
            do {
                return (try store.token(for: name) != nil ? "stored login (\(store.path.path))" : nil, nil)
            } catch {
                return (nil, String(describing: error))
            }
        }
        let builtIn = ClientRegistry.all.filter { !$0.credentialVariables.isEmpty || $0.login != nil }.map { client in
            let token = client.login == nil ? (nil, nil) : stored(client.name)
            return Status(name: client.name, source: env(client.credentialVariables) ?? token.0, problem: token.1)
        }
        let plugins = PluginRegistry.load(settings: settings).plugins.filter { $0.auth != .none }.map { manifest in
            let token = stored(manifest.name)
            let fromEnvironment = PluginCredential(manifest: manifest, environment: environment, storedToken: nil)
                .source
            return Status(name: manifest.name, source: fromEnvironment ?? token.0, problem: token.1)
        }
        return builtIn + plugins
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

    /// Logs in to `name`.
    ///
    /// `say` prints a line for the user; `prompt` reads one.
    public func login(
        _ name: String, mode: Mode, say: @Sendable (String) -> Void, prompt: @Sendable () -> String?
    ) async throws {
        switch ClientRegistry.named(name)?.login {
        case .oauthImplicit(let flow):
            try await loginImplicit(name, flow: flow(settings), mode: mode, say: say, prompt: prompt)
        case .pastedKey(let label):
            say("Paste \(label) (it is stored in \(store.path.path), mode 0600):")
            guard let key = prompt()?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty else {
                throw APIError(.auth, "no key given; nothing stored")
            }
            try store.save(Secret(key), for: name, kind: "api_key")
            say("\(name): key stored.")
        case nil:
            try await loginPlugin(name, mode: mode, say: say, prompt: prompt)
        }
    }

    /// `login NAME` for a plugin: the OAuth implicit flow for `oauth2_implicit`,
    /// a pasted key for `query_key`, `header_key` and `bearer`.
    private func loginPlugin(
        _ name: String, mode: Mode, say: @Sendable (String) -> Void, prompt: @Sendable () -> String?
    ) async throws {
        let registry = PluginRegistry.load(settings: settings)
        guard let manifest = registry.plugin(named: name) else {
            if let failure = registry.failure(named: name) {
                throw MacroError("plugin '\(name)' did not load: \(failure.error)")
            }
            let names = Logins.loginNames + registry.plugins.filter { $0.auth != .none }.map(\.name)
            let fromEnvironment = ClientRegistry.all.filter { $0.login == nil && !$0.credentialVariables.isEmpty }
                .map { "\($0.name) reads \($0.credentialVariables.joined(separator: " or "))" }
            throw MacroError(
                "no login for '\(name)': apimacro can log in to \(names.joined(separator: ", ")); \(fromEnvironment.joined(separator: "; "))"
            )
        }
        switch manifest.auth {
        case .oauth2Implicit:
            try await loginImplicit(
                name, flow: PluginClient.loginFlow(manifest, environment: settings.environment), mode: mode, say: say,
                prompt: prompt)
        case .queryKey(_, let variable), .headerKey(_, let variable), .bearer(let variable):
            say("Paste your \(name) key (it is stored in \(store.path.path), mode 0600; \(variable) overrides it):")
            guard let key = prompt()?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty else {
                throw APIError(.auth, "no key given; nothing stored")
            }
            try store.save(Secret(key), for: name, kind: "api_key")
            say("\(name): key stored.")
        case .basic(let user, let password):
            throw MacroError("\(name) uses HTTP basic auth: set \(user) and \(password); there is nothing to log in to")
        case .none:
            throw MacroError("\(name) needs no credentials; there is nothing to log in to")
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
