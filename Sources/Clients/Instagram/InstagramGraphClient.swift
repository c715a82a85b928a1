public import Platform
import Synchronization
public import WebAPI

/// The client of the Instagram API with Instagram Login: the router's requests through the
/// pipeline, with the token kept alive (`prepare`: a stored token near its expiry is refreshed
/// and stored again before a request; an expired one is refused before anything is sent).
public final class InstagramGraphClient: BuiltClient {
    /// The pipeline connection (versioned base URL, token, usage).
    public let api: APIClient
    public let configuration: InstagramGraphConfiguration
    private let keeper: Keeper

    /// What the client needs to keep a stored token alive.
    public struct TokenStore: Sendable {
        /// Where `apimacro login` keeps tokens.
        public let store: CredentialStore
        /// The stored login, as read at start (nil when the token is not the stored one).
        public let entry: CredentialStore.Entry?
        /// What a refresh goes through: the network itself, never the cache nor a recording;
        /// nil when nothing may be sent (`--offline`, `--replay`), and then no refresh is tried.
        public let network: (any Transport)?
        /// Told each new token, so that everything printed redacts it.
        public let remember: @Sendable (String) -> Void
        /// Told why a refresh failed (the old token, still valid, is used).
        public let warn: @Sendable (String) -> Void
        /// The time (tests move it).
        public let now: @Sendable () -> Double

        public init(
            store: CredentialStore, entry: CredentialStore.Entry?, network: (any Transport)?,
            remember: @escaping @Sendable (String) -> Void = { _ in },
            warn: @escaping @Sendable (String) -> Void = { _ in },
            now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
        ) {
            self.store = store
            self.entry = entry
            self.network = network
            self.remember = remember
            self.warn = warn
            self.now = now
        }
    }

    public init(
        configuration: InstagramGraphConfiguration, transport: any Transport, log: ExchangeLog, redactor: Redactor,
        tokens: TokenStore? = nil
    ) {
        self.configuration = configuration
        api = APIClient(configuration: configuration.client, transport: transport, log: log, redactor: redactor)
        keeper = Keeper(tokens: configuration.tokenIsStored ? tokens : nil, log: log)
    }

    /// Whether a token is set (from the environment or a login).
    public var loggedIn: Bool { api.credential != nil }

    /// Graph's pages (`InstagramGraphRouter.paging`).
    public var paging: Paging { InstagramGraphRouter.paging }

    /// Uses `token` from now on (after a login), expiring at `expiresAt` when known.
    public func setToken(_ token: Secret?, obtainedAt: Int? = nil, expiresAt: Int? = nil) {
        api.setCredential(token.map { .query(name: "access_token", value: $0) })
        keeper.replaced(obtainedAt: obtainedAt, expiresAt: expiresAt)
    }

    /// `AuthError` naming the variable and the login command unless a token is set (nothing is sent).
    public func requireToken() throws {
        guard loggedIn || !api.needsCredentials else {
            throw APIError(
                .auth,
                "instagram needs a token: set \(Instagram.token.variable) (a token from the App Dashboard's "
                    + "Generate token), or run apimacro login instagram", api: Instagram.name)
        }
    }

    /// Gets the token ready before a request: `AuthError` without one; a stored token that
    /// expired is `Unauthorized` (nothing sent); one within 10 days of its expiry and at least a
    /// day old is refreshed first, once per process, and the new one stored.
    public func prepare() async throws {
        try requireToken()
        try await keeper.prepare(self)
    }

    /// Sends one endpoint's request, the token ready.
    public func send(_ route: InstagramGraphRouter) async throws -> Response {
        try await prepare()
        return try await api.send(route.request)
    }

    /// The usage the API reported last (`instagram.rate_limit`), or nil before the first answer.
    public var usage: Usage? { api.usage?.last }

    /// Keeps a stored token alive: one check (and at most one refresh) per process, which
    /// concurrent calls wait for together.
    final class Keeper: Sendable {
        private struct State {
            var obtainedAt: Int?
            var expiresAt: Int?
            var checked = false
            var running: Task<Void, any Error>?
        }

        private let tokens: TokenStore?
        private let log: ExchangeLog
        private let state: Mutex<State>

        init(tokens: TokenStore?, log: ExchangeLog) {
            self.tokens = tokens
            self.log = log
            state = Mutex(State(obtainedAt: tokens?.entry?.obtainedAt, expiresAt: tokens?.entry?.expiresAt))
        }

        /// A new token (a login in this process): its life as the provider said; no refresh due.
        func replaced(obtainedAt: Int?, expiresAt: Int?) {
            state.withLock { state in
                state.obtainedAt = obtainedAt
                state.expiresAt = expiresAt
                state.checked = true
            }
        }

        func prepare(_ client: InstagramGraphClient) async throws {
            guard let tokens else { return }
            let task = state.withLock { state -> Task<Void, any Error>? in
                if state.checked { return nil }
                if let running = state.running { return running }
                let obtainedAt = state.obtainedAt ?? 0
                let expiresAt = state.expiresAt
                let running = Task {
                    try await self.check(client, tokens, obtainedAt: obtainedAt, expiresAt: expiresAt)
                }
                state.running = running
                return running
            }
            guard let task else { return }
            try await task.value
        }

        private func check(
            _ client: InstagramGraphClient, _ tokens: TokenStore, obtainedAt: Int, expiresAt: Int?
        ) async throws {
            let decision = InstagramTokenLife.decide(obtainedAt: obtainedAt, expiresAt: expiresAt, now: tokens.now())
            switch decision {
            case .use:
                state.withLock { $0.checked = true }
            case .expired(let when):
                state.withLock { $0.running = nil }
                throw APIError(
                    .unauthorized,
                    "the Instagram token stored in \(tokens.store.path.path) expired on \(Self.day(when)); "
                        + InstagramGraphEnvelope.loginAgain, api: Instagram.name)
            case .refresh:
                await refresh(client, tokens)
                state.withLock { $0.checked = true }
            }
        }

        /// Refreshes the token and stores the new one; a failure is a warning (the old token
        /// has days left) and is not tried again in this process.
        private func refresh(_ client: InstagramGraphClient, _ tokens: TokenStore) async {
            guard let network = tokens.network, let current = client.api.credential?.secret else { return }
            var configuration = client.configuration.client
            configuration.baseURL = client.configuration.baseURL
            configuration.credential = .query(name: "access_token", value: current)
            // The answer is the new token: never rewritten, even should it be the one sent.
            configuration.redactsEchoedCredential = false
            let api = APIClient(
                configuration: configuration, transport: network, log: log, redactor: client.api.redactor)
            do {
                let issued = try await InstagramLogin.refresh(on: api, root: client.configuration.baseURL)
                tokens.remember(issued.token.revealed)
                let now = Int(tokens.now())
                try tokens.store.save(
                    issued.token, for: Instagram.name, account: tokens.entry?.account, kind: "access_token",
                    scope: tokens.entry?.scope,
                    expiresAt: issued.expiresAt ?? now + InstagramTokenLife.lifetime, obtainedAt: now)
                client.api.setCredential(.query(name: "access_token", value: issued.token))
            } catch {
                // The reason quotes the server's message: redacted, and shown, not obeyed.
                let reason = TerminalText.shown(
                    client.api.redactor.redact(SystemErrorText.describe(error)), on: STDERR_FILENO)
                tokens.warn(
                    "apimacro: warning: could not refresh the Instagram token (\(reason)); "
                        + "using the stored one until it expires")
            }
        }

        /// `2026-11-26` for an epoch time.
        static func day(_ epoch: Int) -> String {
            UTCDates.day(Double(epoch))
        }
    }
}
