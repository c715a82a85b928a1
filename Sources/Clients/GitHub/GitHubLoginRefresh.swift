public import Platform
import Synchronization
public import WebAPI

/// The token `apimacro login github` stored, renewed before the first request when it is a
/// GitHub App's user token (8 hours) with under an hour left and a refresh token beside it:
/// once per process, through the network itself, the new token and refresh token stored.
///
/// A refresh that fails is one warning, and the stored token is used as it is.
public final class GitHubLoginRefresh: CredentialProvider {
    /// Where the token is stored again, warnings go and the new secrets are told.
    private let context: ClientContext
    private let entry: CredentialStore.Entry
    private let refreshToken: Secret
    private let base: String
    private let clientID: String
    private let network: any Transport
    private let timeout: Double
    private let flight = SingleFlight<Credential?>()
    private let done = Mutex<Credential??>(nil)

    /// How long before its end a stored token is renewed: an hour.
    public static let margin = 3600.0

    /// A refresher when one is due: the token in use is the stored login, it ends within
    /// `margin`, a refresh token and the app's client id are known, and something may be sent
    /// (`context.network`); else nil.
    public static func due(
        configuration: GitHubConfiguration, view: SettingsView, context: ClientContext,
        now: Double = Date().timeIntervalSince1970
    ) -> GitHubLoginRefresh? {
        guard configuration.tokenSource == CredentialSource.storedLogin.name, let network = context.network,
            let entry = try? context.store.entry(for: GitHub.name), let refreshToken = entry.refreshToken,
            let expiresAt = entry.expiresAt, Double(expiresAt) - now < margin,
            let clientID = view.value(GitHub.login.clientID)
        else { return nil }
        // The login host: the login URL, else github.com for GitHub's API, else an Enterprise
        // Server's host from its /api/v3 base URL.
        var base = view.value(GitHub.login.loginURL)
        if base == nil {
            let api = configuration.baseURL
            if api == GitHubConfiguration.defaultBaseURL {
                base = "https://github.com"
            } else if api.hasSuffix("/api/v3") {
                base = String(api.dropLast("/api/v3".count))
            }
        }
        guard let base, let origin = Origin(url: base), origin.isSecureForCredentials else { return nil }
        return GitHubLoginRefresh(
            context: context, entry: entry, refreshToken: refreshToken, base: base, clientID: clientID,
            network: network, timeout: configuration.timeout)
    }

    private init(
        context: ClientContext, entry: CredentialStore.Entry, refreshToken: Secret, base: String, clientID: String,
        network: any Transport, timeout: Double
    ) {
        self.context = context
        self.entry = entry
        self.refreshToken = refreshToken
        self.base = base
        self.clientID = clientID
        self.network = network
        self.timeout = timeout
    }

    public func credential(for url: String) async throws -> Credential? {
        if let known = done.withLock({ $0 }) { return known }
        return try await flight.run { [self] in
            if let known = done.withLock({ $0 }) { return known }
            var credential = Credential.bearer(entry.token)
            do {
                let issued = try await GitHub.login.refresh(
                    base: base, clientID: clientID, refreshToken: refreshToken, transport: network, timeout: timeout)
                context.learned(issued.token.revealed)
                if let renewed = issued.refreshToken { context.learned(renewed.revealed) }
                try context.store.save(
                    issued.token, for: GitHub.name, account: entry.account, kind: "access_token",
                    scope: issued.scope ?? entry.scope,
                    expiresAt: issued.expiresAt, refreshToken: issued.refreshToken ?? refreshToken,
                    refreshExpiresAt: issued.refreshExpiresAt)
                credential = .bearer(issued.token)
            } catch {
                let reason = (error as? APIError)?.message ?? "\(type(of: error))"
                context.warn(
                    "apimacro: warning: could not refresh the GitHub token stored by apimacro login github "
                        + "(\(reason)); using it as it is (run apimacro login github if it has expired)")
            }
            done.withLock { $0 = credential }
            return credential
        }
    }
}
