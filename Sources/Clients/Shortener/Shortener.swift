import Platform
import WebAPI

/// The URL shortener as apimacro knows it: one macro API over Bitly (the default), a
/// self-hosted Shlink, or Google's shut-down URL Shortener (legacy); its settings, where its
/// credential comes from and how `apimacro login shortener` gets one (`descriptor`).
///
/// Each service is a router (`BitlyRouter`, `ShlinkRouter`, `GoogleShortenerRouter`) that is a
/// `ShortenerService`: what differs between them, listed once in `ShortenerBackend.services`;
/// `ShortenerConfiguration` reads the settings and `ShortenerClient` sends the requests.
public enum Shortener {
    /// The client's name.
    public static let name = "shortener"
    /// `APIMACRO_SHORTENER` (`[shortener] backend`): one of `ShortenerBackend.allCases`.
    public static let backend = ClientSetting(key: "backend", variable: "APIMACRO_SHORTENER") { text in
        ShortenerBackend.named(text) == nil ? ShortenerBackend.problem(text) : nil
    }.described(
        "the backend: "
            + ShortenerBackend.listing(ShortenerBackend.allCases.map { "\($0.rawValue) (\($0.title))" }, ", "),
        default: ShortenerBackend.standard.rawValue)
    /// `APIMACRO_SHORTENER_URL` (`[shortener] url`): the API's base URL (the backend's default
    /// when unset; a self-hosted one has none).
    public static let url = ClientSetting.url(client: name, key: "url").described(
        "the API's base URL",
        default: ShortenerBackend.listing(
            ShortenerBackend.allCases.map { "\($0.title): \($0.defaultBaseURL ?? "none")" }, "; ")
    )
    /// `APIMACRO_SHORTENER_TOKEN` (`[shortener] token`): the access token of the backends that take one.
    public static let token = ClientSetting(client: name, key: "token").described(
        "the access token of \(ShortenerCredentialKind.token.services) (else the stored login)")
    /// `APIMACRO_SHORTENER_KEY` (`[shortener] key`): the API key of the backends that take one.
    public static let key = ClientSetting(client: name, key: "key").described(
        "the API key of \(ShortenerCredentialKind.key.services) (else the stored login)")
    /// `APIMACRO_SHORTENER_GROUP` (`[shortener] group`): the Bitly group links are made in and
    /// listed from (default: the account's default group).
    public static let group = ClientSetting(client: name, key: "group") { text in
        text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            ? nil : "'\(text)' is not a Bitly group GUID; accepted: letters, digits, '-' and '_', such as Ba1bc23dE4F"
    }.described("the Bitly group links are made in", default: "the account's default")
    /// `APIMACRO_SHORTENER_MAX_CONCURRENCY` (`[shortener] max_concurrency`): at most this many
    /// requests in flight at once (default 5 with Bitly, none otherwise).
    public static let maxConcurrency = ClientSetting(client: name, key: "max_concurrency") { text in
        Int(text.trimmingWhitespace()).map { $0 >= 1 } == true
            ? nil : "'\(text)' is not a count; accepted: a whole number of 1 or more (such as 5)"
    }.described("the most requests in flight at once", default: "5 with Bitly, else none")

    /// The shortener for `login`, `auth status`, `config.toml` and the setting checks: the
    /// backend's credential from its variable (`APIMACRO_SHORTENER_TOKEN` for Bitly,
    /// `APIMACRO_SHORTENER_KEY` for the others; each read only for a backend whose it is), else
    /// the one `apimacro login shortener` stored (pasted, as the backend's login prompt asks).
    public static let descriptor = ClientDescriptor(
        name: name, settings: [backend, url, token, key, group, maxConcurrency],
        credentialSources: [variable(token), variable(key), .storedLogin],
        login: ShortenerBackend.standard.login,
        loginIn: { view in (ShortenerBackend.selected(in: view) ?? .standard).login },
        identity: { view in (ShortenerBackend.selected(in: view) ?? .standard).service.identity })

    /// `setting`'s variable as a credential source, read only when the backend's credential is in it.
    static func variable(_ setting: ClientSetting) -> CredentialSource {
        CredentialSource(name: "env \(setting.variable)", variable: setting.variable) { view in
            guard let backend = ShortenerBackend.selected(in: view),
                backend.credentialSetting.variable == setting.variable
            else { return nil }
            return view.value(setting).map(Secret.init)
        }
    }
}

extension Shortener {
    /// The shortener client the settings in `view` describe, on `context`.
    ///
    /// The backend they choose, its credential and cap on requests in flight: the one place a
    /// shortener client is made.
    public static func client(in view: SettingsView, on context: ClientContext) -> ShortenerClient {
        ShortenerClient(
            configuration: ShortenerConfiguration(view), transport: context.transport, log: context.log,
            redactor: context.redactor)
    }
}
